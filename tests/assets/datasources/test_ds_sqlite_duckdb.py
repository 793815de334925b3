"""SQLite and DuckDB adapters against real database files in tmp_path."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import duckdb
import pytest

from schemarag.assets.lib.datasources.snapshot import take_snapshot

SQLITE_SETUP = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city VARCHAR(40), password_hash TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                     status TEXT NOT NULL, note TEXT);
CREATE TABLE lines (order_id INTEGER REFERENCES orders, line_no INTEGER, sku TEXT,
                    PRIMARY KEY (order_id, line_no));
INSERT INTO customers VALUES
  (1, 'Ada', 'Alameda', 'h1'), (2, 'Bob', 'Oakland', 'h2'), (3, 'Cy', 'Alameda', 'h3');
"""


def sqlite_file(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(SQLITE_SETUP)
        conn.executemany(
            "INSERT INTO orders VALUES (?, ?, ?, ?)",
            [
                (i, 1 + i % 3, ("active", "cancelled", "pending")[i % 3], f"free text {i}")
                for i in range(1, 61)
            ],
        )
    conn.close()
    return path


def test_sqlite_snapshot(make_entry, tmp_path):
    sqlite_file(tmp_path / "shop.sqlite")
    snap = take_snapshot(make_entry(name="shop", kind="sqlite", connection="shop.sqlite"))
    db = snap.database
    assert db.dialect == "sqlite" and db.tenant == "acme" and db.schema_version.endswith(snap.fingerprint[:8])
    assert [t.name for t in db.tables] == ["customers", "lines", "orders"]
    orders = db.table("orders")
    assert orders.row_count == 60 and orders.primary_key == ["id"]
    assert orders.column("customer_id").foreign_key.table == "customers"
    assert not orders.column("status").nullable
    assert sorted(orders.column("status").sample_values) == ["active", "cancelled", "pending"]
    assert orders.column("status").stats == {
        "distinct_count": 3,
        "null_fraction": 0.0,
        "sample_complete": True,
    }
    lines = db.table("lines")
    assert lines.primary_key == ["order_id", "line_no"]
    # "REFERENCES orders" without a column means the target's primary key
    assert lines.column("order_id").foreign_key.model_dump() == {"table": "orders", "column": "id"}
    assert db.table("customers").column("city").sample_values == ["Alameda", "Oakland"]
    assert db.table("customers").column("password_hash").pii
    assert db.table("customers").column("password_hash").sample_values == []


def test_sampling_limits_are_respected(make_entry, tmp_path):
    sqlite_file(tmp_path / "shop.sqlite")
    e = make_entry(
        kind="sqlite",
        connection="shop.sqlite",
        exclude_columns=["customers.city"],
        allow_pii_samples=["password_hash"],
        sampling={"max_values": 2, "max_distinct": 10, "scan_rows": 50},
    )
    db = take_snapshot(e).database
    note = db.table("orders").column("note")
    assert note.sample_values == [] and note.stats["distinct_count"] == 50  # too many distinct values
    assert note.stats["profiled_rows"] == 50  # only scan_rows rows were read
    status = db.table("orders").column("status")
    assert len(status.sample_values) == 2 and "sample_complete" not in status.stats
    assert db.table("customers").column("city").sample_values == []  # excluded
    pw = db.table("customers").column("password_hash")
    assert pw.pii and len(pw.sample_values) == 2  # flagged, but explicitly allowed


def test_sqlite_fingerprint_tracks_structure_only(make_entry, tmp_path):
    path = sqlite_file(tmp_path / "shop.sqlite")
    e = make_entry(kind="sqlite", connection="shop.sqlite")
    first = take_snapshot(e).fingerprint
    assert take_snapshot(e).fingerprint == first
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO customers VALUES (4, 'Di', 'Berkeley', 'h4')")
    assert take_snapshot(e).fingerprint == first  # data changes never change the fingerprint
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE customers ADD COLUMN region_id INTEGER")
    added = take_snapshot(e).fingerprint
    assert added != first
    with sqlite3.connect(path) as conn:  # SQLite adds an FK only by rebuilding the table
        conn.executescript(
            "CREATE TABLE regions (id INTEGER PRIMARY KEY);"
            "CREATE TABLE c2 (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city VARCHAR(40),"
            " password_hash TEXT,"
            " region_id INTEGER REFERENCES regions(id));"
            "INSERT INTO c2 SELECT * FROM customers; DROP TABLE customers;"
            "ALTER TABLE c2 RENAME TO customers;"
        )
    conn.close()
    snap = take_snapshot(e)
    assert snap.fingerprint != added
    assert snap.database.table("customers").column("region_id").foreign_key.table == "regions"


def duckdb_file(path: Path) -> Path:
    conn = duckdb.connect(str(path))
    conn.execute(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, city VARCHAR, api_key VARCHAR);
        COMMENT ON TABLE customers IS 'People who buy things';
        COMMENT ON COLUMN customers.city IS 'City of residence';
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                             status VARCHAR NOT NULL, total DECIMAL(10,2));
        INSERT INTO customers VALUES (1, 'Ada', 'Alameda', 'k1'), (2, 'Bob', 'Alameda', 'k2');
        INSERT INTO orders SELECT i, 1 + i % 2, ['active', 'cancelled', 'pending'][1 + i % 3], i
            FROM range(30) t(i);
        """
    )
    conn.close()
    return path


def test_duckdb_snapshot_and_fingerprint(make_entry, tmp_path):
    path = duckdb_file(tmp_path / "shop.duckdb")
    e = make_entry(kind="duckdb", connection=str(path))
    snap = take_snapshot(e)
    db = snap.database
    assert db.dialect == "duckdb" and [t.name for t in db.tables] == ["customers", "orders"]
    customers, orders = db.tables
    assert customers.description == "People who buy things"
    assert customers.column("city").description == "City of residence"
    assert customers.column("city").sample_values == ["Alameda"]
    assert customers.column("api_key").pii and customers.column("api_key").sample_values == []
    assert orders.row_count == 30 and orders.column("total").type == "DECIMAL(10,2)"
    assert orders.column("customer_id").foreign_key.model_dump() == {"table": "customers", "column": "id"}
    assert sorted(orders.column("status").sample_values) == ["active", "cancelled", "pending"]
    assert take_snapshot(e).fingerprint == snap.fingerprint
    conn = duckdb.connect(str(path))
    conn.execute("ALTER TABLE orders ADD COLUMN channel VARCHAR")
    conn.close()
    added = take_snapshot(e).fingerprint
    assert added != snap.fingerprint
    conn = duckdb.connect(str(path))  # DuckDB cannot ALTER in an FK; a new referencing table adds one
    conn.execute("CREATE TABLE refunds (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id))")
    conn.close()
    assert take_snapshot(e).fingerprint != added


@pytest.mark.parametrize("kind", ["sqlite", "duckdb"])
def test_include_and_exclude_tables(make_entry, tmp_path, kind):
    path = sqlite_file(tmp_path / "x.db") if kind == "sqlite" else duckdb_file(tmp_path / "x.db")
    db = take_snapshot(make_entry(kind=kind, connection=str(path), exclude_tables=["orders"])).database
    assert "orders" not in {t.name for t in db.tables}
    assert all(c.foreign_key is None or c.foreign_key.table != "orders" for t in db.tables for c in t.columns)
