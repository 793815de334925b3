"""Real engines: run real queries, export the engine's own query log, import it.

* DuckDB: ``CALL enable_logging('QueryLog')`` records every statement in ``duckdb_logs``; the
  catalog comes from DuckDB's ``information_schema.columns`` through ``import catalog``.
* PostgreSQL with ``pg_stat_statements``: the shared server on 127.0.0.1:5432 when it preloads the
  module, else an instance of our own (``initdb``/``pg_ctl`` from /usr/lib/postgresql/*/bin, in a
  temporary folder, on a free loopback port, ``shared_preload_libraries=pg_stat_statements``).
  Skipped with the reason when neither can run; under ``CI=true`` that is a failure instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemarag.assets.lib.query_history import open_queries
from schemarag.tools.importers.catalog_export import import_catalog_export
from schemarag.tools.importers.query_log import history_dir, import_queries

JOIN = {
    "left_table": "customers",
    "left_column": "id",
    "right_table": "orders",
    "right_column": "customer_id",
}
SETUP = [
    "CREATE SCHEMA shop",
    "CREATE TABLE shop.regions (id INTEGER PRIMARY KEY, name TEXT)",
    "CREATE TABLE shop.customers (id INTEGER PRIMARY KEY, name TEXT, region_id INTEGER)",
    "CREATE TABLE shop.orders (id INTEGER PRIMARY KEY, customer_id INTEGER, amount NUMERIC(10, 2))",
    "INSERT INTO shop.regions VALUES (1, 'north'), (2, 'south')",
    "INSERT INTO shop.customers VALUES (1, 'Ann Jones', 1), (2, 'Bob Smith', 2)",
    "INSERT INTO shop.orders VALUES (1, 1, 10.5), (2, 1, 99.0), (3, 2, 7.25)",
]
JOIN_SQL = (
    "SELECT c.name, SUM(o.amount) AS total FROM shop.orders o JOIN shop.customers c "
    "ON o.customer_id = c.id WHERE c.name = '{name}' GROUP BY c.name"
)
REGION_SQL = (
    "WITH big AS (SELECT customer_id FROM shop.orders WHERE amount > 50) "
    "SELECT r.name, COUNT(*) FROM big JOIN shop.customers c ON c.id = big.customer_id "
    "JOIN shop.regions r ON r.id = c.region_id GROUP BY r.name"
)
RUN = [
    JOIN_SQL.format(name="Ann Jones"),
    JOIN_SQL.format(name="Bob Smith"),
    JOIN_SQL.format(name="Ann Jones"),
    REGION_SQL,
    "UPDATE shop.orders SET amount = amount + 1 WHERE id = 3",
]


def _rows(data: Path, db: str) -> list[dict]:
    return open_queries(history_dir(data, db)).read().to_pylist()


def _region_edges(rows: list[dict]) -> list[dict]:
    return next(r for r in rows if "regions" in r["tables"])["joins"]


def test_duckdb_query_log(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"))
    con.execute("CALL enable_logging('QueryLog')")
    for sql in SETUP + RUN:
        con.execute(sql).fetchall()  # real queries: each must run
    columns, log = tmp_path / "columns.csv", tmp_path / "query_log.csv.gz"
    con.execute(
        "COPY (SELECT table_catalog, table_schema, table_name, column_name, ordinal_position, data_type, "
        "is_nullable FROM information_schema.columns WHERE table_schema = 'shop') "
        f"TO '{columns}' (HEADER, DELIMITER ',')"
    )
    con.execute(
        "COPY (SELECT message AS query_text, timestamp AS start_time FROM duckdb_logs "
        f"WHERE type = 'QueryLog' ORDER BY timestamp) TO '{log}' (HEADER, COMPRESSION gzip)"
    )
    con.close()
    data = tmp_path / "schemas"
    import_catalog_export(columns, data, database="shop", dialect="duckdb")
    report = import_queries([str(log)], db="shop", data=data)
    rows = _rows(data, "shop")
    join = next(r for r in rows if r["joins"] == [JOIN])
    assert join["count"] == 3 and "Ann" not in join["sql"] and join["first_seen"]
    assert sorted(r for e in _region_edges(rows) for r in (e["left_table"], e["right_table"])) == [
        "customers",
        "customers",
        "orders",
        "regions",
    ]
    assert report.skipped["not_a_query"] >= len(SETUP) + 1  # CREATE, INSERT, UPDATE, CALL
    assert all("shop" not in t for r in rows for t in r["tables"])  # one schema: bare names


# --- PostgreSQL -------------------------------------------------------------------------------


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL with pg_stat_statements is required on CI: {reason}")
    pytest.skip(reason)


def _shared_server() -> dict | None:
    """Connection settings of the shared server when it preloads pg_stat_statements."""
    psycopg = pytest.importorskip("psycopg")
    try:
        with psycopg.connect("host=127.0.0.1 port=5432 dbname=test", connect_timeout=3) as con:
            loaded = con.execute("SHOW shared_preload_libraries").fetchone()[0]
    except psycopg.Error:
        return None
    return {"host": "127.0.0.1", "port": 5432, "dbname": "test"} if "pg_stat_statements" in loaded else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: run them as the postgres user then."""
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser is None:
        _unavailable("running as root without runuser: cannot start a PostgreSQL instance")
    return [runuser, "-u", "postgres", "--", *cmd]


@pytest.fixture(scope="module")
def pg_stat_server() -> Iterator[dict]:
    """A PostgreSQL server with pg_stat_statements loaded (the shared one, or our own)."""
    shared = _shared_server()
    if shared is not None:
        yield shared
        return
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not bins:
        _unavailable(
            "the shared server does not preload pg_stat_statements and no pg_ctl in /usr/lib/postgresql"
        )
    bindir = Path(bins[-1]).parent
    if os.geteuid() == 0:
        import pwd

        try:
            pg_user = pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("running as root and no postgres user to start PostgreSQL as")
    root = Path(tempfile.mkdtemp(prefix="schemarag-pgss-"))
    root.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(root, pg_user.pw_uid, pg_user.pw_gid)
    pgdata, port = root / "data", _free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    try:
        subprocess.run(
            _as_postgres([str(bindir / "initdb"), "-D", str(pgdata), "-A", "trust", "-U", "postgres",
                          "-E", "UTF8", "--no-sync"]),
            **run,
        )  # fmt: skip
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={root} "
            "-c shared_preload_libraries=pg_stat_statements -c fsync=off"
        )
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(pgdata), "-o", options, "-l",
                          str(root / "server.log"), "-w", "-t", "60", "start"]),
            **run,
        )  # fmt: skip
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log = (root / "server.log").read_text() if (root / "server.log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        detail = getattr(exc, "stderr", b"") or b""
        _unavailable(f"could not start PostgreSQL: {detail.decode(errors='replace')[-300:]} {log[-300:]}")
    try:
        yield {"host": "127.0.0.1", "port": port, "dbname": "postgres", "user": "postgres"}
    finally:
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(pgdata), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)


def test_postgres_pg_stat_statements(pg_stat_server: dict, tmp_path: Path) -> None:
    import psycopg

    settings = dict(pg_stat_server)
    with psycopg.connect(**settings, autocommit=True) as con:
        con.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        con.execute("DROP SCHEMA IF EXISTS shop CASCADE")
        for sql in SETUP:
            con.execute(sql)
        con.execute("SELECT pg_stat_statements_reset()")
        for sql in RUN:
            con.execute(sql)
        columns, log = tmp_path / "columns.csv", tmp_path / "pgss.csv"
        with (
            columns.open("wb") as out,
            con.cursor().copy(
                "COPY (SELECT table_catalog, table_schema, table_name, column_name, ordinal_position, "
                "data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'shop') "
                "TO STDOUT WITH (FORMAT csv, HEADER)"
            ) as copy,
        ):
            for block in copy:
                out.write(block)
        # the export query of docs/query-history.md
        with (
            log.open("wb") as out,
            con.cursor().copy(
                "COPY (SELECT s.userid, s.dbid, s.toplevel, s.queryid, s.query, s.calls "
                "FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                "WHERE d.datname = current_database() ORDER BY s.calls DESC) "
                "TO STDOUT WITH (FORMAT csv, HEADER)"
            ) as copy,
        ):
            for block in copy:
                out.write(block)
        con.execute("DROP SCHEMA shop CASCADE")
    data = tmp_path / "schemas"
    import_catalog_export(columns, data, database="shop", dialect="postgres")
    report = import_queries([str(log)], db="shop", data=data)
    rows = _rows(data, "shop")
    join = next(r for r in rows if r["joins"] == [JOIN])
    assert join["count"] == 3 and join["source"] == "pg_stat_statements"
    assert "$1" in join["sql"] and "Ann" not in join["sql"]
    assert len(_region_edges(rows)) == 2
    assert report.skipped["not_a_query"] >= 1  # the UPDATE
    assert report.skipped["no_known_table"] >= 1  # SELECT pg_stat_statements_reset()
