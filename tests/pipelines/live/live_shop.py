"""The live shop used by tests/live: one SQLite file, one DuckDB file, one PostgreSQL schema.

Helpers and fixtures live here, not in a ``conftest.py``: under ``--doctest-modules`` a second
``tests/*/conftest.py`` collides with the others (same module name), so test modules import
these fixtures by name.

All three hold the same shop (schools with a ``city`` of 'Alameda', orders with a ``status`` of
'cancelled'), so one test body runs against each. PostgreSQL tests skip, saying why, when the
server at ``$SCHEMARAG_TEST_PG_DSN`` (default 127.0.0.1:5432/test) is unreachable, except in CI
(CI=true), where that is a failure.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

PG_DSN = os.environ.get("SCHEMARAG_TEST_PG_DSN", "postgresql://127.0.0.1:5432/test")

SHOP_SQL = [
    "CREATE TABLE schools (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, district TEXT)",
    "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT)",
    "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), "
    "school_id INTEGER, status TEXT NOT NULL, total REAL)",
    "INSERT INTO schools VALUES (1, 'Lincoln High', 'Alameda', 'Alameda Unified'), "
    "(2, 'Oak Elementary', 'Oakland', 'Oakland Unified'), (3, 'Bay Middle', 'Berkeley', 'Berkeley Unified'), "
    "(4, 'Island High', 'Alameda', 'Alameda Unified'), (5, 'Valley School', 'Fresno', 'Fresno Unified')",
    "INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', 'bob@example.com'), "
    "(3, 'Cy', NULL)",
    "INSERT INTO orders VALUES (1, 1, 1, 'active', 10.5), (2, 1, 2, 'cancelled', 3.0), "
    "(3, 2, 3, 'pending', 7.25), (4, 3, 4, 'shipped', 1.0), (5, 2, 5, 'cancelled', 2.0)",
]
ADD_COLUMN_SQL = ["ALTER TABLE customers ADD COLUMN loyalty_tier TEXT"]
# SQLite and DuckDB cannot add a foreign key to an existing table: rebuild ``orders`` with one.
REBUILD_ORDERS_WITH_FK = [
    "CREATE TABLE orders_new (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id), "
    "school_id INTEGER REFERENCES schools(id), status TEXT NOT NULL, total REAL)",
    "INSERT INTO orders_new SELECT * FROM orders",
    "DROP TABLE orders",
    "ALTER TABLE orders_new RENAME TO orders",
]
ADD_FK_SQL = {
    "sqlite": REBUILD_ORDERS_WITH_FK,
    "duckdb": REBUILD_ORDERS_WITH_FK,
    "postgres": ["ALTER TABLE orders ADD FOREIGN KEY (school_id) REFERENCES schools(id)"],
}


@dataclass
class LiveDB:
    """One real database plus a datasources file naming it (``name`` ``shop``, tenant ``acme``)."""

    kind: str
    connection: str
    run: Callable[[list[str]], None]
    folder: Path
    schemas: list[str] | None = None
    extra: dict = field(default_factory=dict)

    def write_datasources(self, path: Path | None = None, **overrides: object) -> Path:
        entry = {"name": "shop", "kind": self.kind, "tenant": "acme", "connection": self.connection}
        if self.schemas:
            entry["schemas"] = self.schemas
        entry.update(overrides)
        path = path or self.folder / "datasources.yaml"
        path.write_text(yaml.safe_dump({"datasources": [entry]}), encoding="utf-8")
        return path


def make_sqlite(folder: Path) -> LiveDB:
    path = folder / "shop.sqlite"

    def run(statements: list[str]) -> None:
        conn = sqlite3.connect(path)
        with conn:
            for sql in statements:
                conn.execute(sql)
        conn.close()

    run(SHOP_SQL)
    return LiveDB("sqlite", str(path), run, folder)


def make_duckdb(folder: Path) -> LiveDB:
    import duckdb

    path = folder / "shop.duckdb"

    def run(statements: list[str]) -> None:
        conn = duckdb.connect(str(path))
        try:
            for sql in statements:
                conn.execute(sql)
        finally:
            conn.close()

    run(SHOP_SQL)
    return LiveDB("duckdb", str(path), run, folder)


def pg_connect():
    """An autocommit admin connection, or skip (fail under CI) naming the server and the reason."""
    import psycopg

    try:
        return psycopg.connect(PG_DSN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL not reachable at {PG_DSN}: {str(exc).strip()}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)")
        pytest.skip(reason)


def make_postgres(folder: Path, conn, schema: str) -> LiveDB:
    def run(statements: list[str]) -> None:
        conn.execute(f'SET search_path TO "{schema}"')
        for sql in statements:
            conn.execute(sql)

    run(SHOP_SQL)
    return LiveDB("postgres", PG_DSN, run, folder, schemas=[schema], extra={"conn": conn, "schema": schema})


@pytest.fixture
def pg_shop_schema() -> Iterator[tuple[object, str]]:
    """A fresh, uniquely named PostgreSQL schema (dropped afterwards) and the admin connection."""
    conn = pg_connect()
    schema = f"srag_live_{uuid.uuid4().hex[:10]}"
    conn.execute(f'CREATE SCHEMA "{schema}"')
    yield conn, schema
    conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    conn.close()


@pytest.fixture(params=["sqlite", "duckdb", pytest.param("postgres", marks=pytest.mark.postgres)])
def live_db(request: pytest.FixtureRequest, tmp_path: Path) -> LiveDB:
    """The shop in a real SQLite file, DuckDB file or PostgreSQL schema."""
    folder = tmp_path / "live"
    folder.mkdir()
    if request.param == "sqlite":
        return make_sqlite(folder)
    if request.param == "duckdb":
        return make_duckdb(folder)
    conn, schema = request.getfixturevalue("pg_shop_schema")
    return make_postgres(folder, conn, schema)


@pytest.fixture
def sqlite_shop(tmp_path: Path) -> LiveDB:
    folder = tmp_path / "live"
    folder.mkdir()
    return make_sqlite(folder)
