"""Run SQL text on the real engines the validator must agree with: MariaDB (PyMySQL), PostgreSQL
(psycopg), DuckDB and SQLite (in-process), each with a session-local ``users`` table.

MariaDB and PostgreSQL skip with a reason when unreachable, except under CI (CI=true), where an
unreachable server is a failure: CI must show what the real engines execute. Every table is
TEMPORARY (or in-memory), so tests sharing the servers never see each other's rows.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import pytest

ERROR = "error"  # what `run` returns when the engine refuses the text
MYSQL_URL = os.environ.get("SCHEMARAG_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306")
PG_DSN = os.environ.get("SCHEMARAG_TEST_PG_DSN", "postgresql://127.0.0.1:5432/test")
DIALECT = {"mariadb": "mysql", "postgres": "postgres", "duckdb": "duckdb", "sqlite": "sqlite"}
USERS = [(7, "ann", "ann@example.com")]

Runner = Callable[..., Any]


def _unreachable(what: str, exc: BaseException) -> None:
    reason = f"{what}: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)")
    pytest.skip(reason)


@contextmanager
def mariadb() -> Iterator[Runner]:
    """``run(sql, sql_mode=None)`` on one MariaDB session (user variables persist across calls)."""
    import pymysql

    url = urlsplit(MYSQL_URL.replace("mysql+pymysql://", "mysql://"))
    try:
        con = pymysql.connect(
            host=url.hostname or "127.0.0.1", port=url.port or 3306, user=url.username or "root",
            password=url.password or "", database="test", connect_timeout=3, autocommit=True,
        )  # fmt: skip
    except pymysql.err.OperationalError as exc:
        _unreachable(f"MariaDB not reachable at {MYSQL_URL}", exc)
    with con.cursor() as cur:
        cur.execute("CREATE TEMPORARY TABLE users (id INT, name VARCHAR(40), email VARCHAR(80))")
        cur.executemany("INSERT INTO users VALUES (%s, %s, %s)", USERS)

    def run(sql: str, sql_mode: str | None = None) -> Any:
        with con.cursor() as cur:
            cur.execute(
                "SET SESSION sql_mode = DEFAULT"
                if sql_mode is None
                else f"SET SESSION sql_mode = '{sql_mode}'"
            )
            try:
                cur.execute(sql)  # no parameters: PyMySQL leaves % and { alone
            except pymysql.err.MySQLError:
                return ERROR
            return [tuple(row) for row in cur.fetchall()]

    try:
        yield run
    finally:
        con.close()


@contextmanager
def postgres() -> Iterator[Runner]:
    """``run(sql, setting=None)`` on one PostgreSQL session; ``setting`` is a ``SET`` applied first
    and reset afterwards."""
    import psycopg

    try:
        con = psycopg.connect(PG_DSN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        _unreachable(f"PostgreSQL not reachable at {PG_DSN}", exc)
    con.execute("CREATE TEMPORARY TABLE users (id int, name text, email text)")
    with con.cursor() as cur:
        cur.executemany("INSERT INTO users VALUES (%s, %s, %s)", USERS)

    def run(sql: str, setting: str | None = None) -> Any:
        if setting:
            con.execute(setting)
        try:
            return [tuple(row) for row in con.execute(sql).fetchall()]  # no parameters: no % parsing
        except psycopg.Error:
            return ERROR
        finally:
            con.execute("RESET ALL")

    try:
        yield run
    finally:
        con.close()


@contextmanager
def duckdb_engine() -> Iterator[Runner]:
    import duckdb

    con = duckdb.connect(":memory:", config={"enable_external_access": False})
    con.execute("CREATE TABLE users (id INTEGER, name VARCHAR, email VARCHAR)")
    con.executemany("INSERT INTO users VALUES (?, ?, ?)", USERS)

    def run(sql: str) -> Any:
        try:
            return [tuple(row) for row in con.execute(sql).fetchall()]
        except duckdb.Error:
            return ERROR

    try:
        yield run
    finally:
        con.close()


@contextmanager
def sqlite_engine() -> Iterator[Runner]:
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE users (id INTEGER, name TEXT, email TEXT)")
    con.executemany("INSERT INTO users VALUES (?, ?, ?)", USERS)

    def run(sql: str) -> Any:
        try:
            return [tuple(row) for row in con.execute(sql).fetchall()]
        except sqlite3.Error:
            return ERROR

    try:
        yield run
    finally:
        con.close()


ENGINES = {"mariadb": mariadb, "postgres": postgres, "duckdb": duckdb_engine, "sqlite": sqlite_engine}
