"""Joins inferred from value containment on real SQLite and PostgreSQL databases.

One shop, written in SQL both engines accept, declares a single foreign key; every other
relationship has to be found in the data. The cases: a named join, a join between a key-like
column and an unrelated table name (text codes), a parent keyed by a unique column found by
query (no primary key), a declared FK that must stay declared, a small-domain column that is
"contained" in every id column and must not become a join, a key-like column contained in
several id columns (ambiguous), a named column whose values are missing from the parent
(refuted, also for the name rules under ``both``), and a table whose name holds quotes and
spaces.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from schemarag.assets.lib.datasources.snapshot import fingerprint, take_snapshot
from schemarag.runtime.core.schema import Database
from schemarag.runtime.formatting import format_full_schema

PG = os.environ.get("SCHEMARAG_TEST_PG_DSN", "postgresql://127.0.0.1:5432/test")
ODD = 'Odd "Quoted" Table'
ODD_SQL = '"Odd ""Quoted"" Table"'


def shop_sql() -> list[str]:
    """DDL + rows; ``order_items.order_id`` is the only declared foreign key."""
    stmts = [
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, region_id INTEGER)",
        "CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT)",
        "CREATE TABLE regions (region_id INTEGER NOT NULL, label TEXT)",  # no PK: unique by query
        "CREATE TABLE parcels (code VARCHAR(12) PRIMARY KEY, weight INTEGER)",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, seller_id INTEGER, "
        "warehouse_no INTEGER, quantity INTEGER, tracking_ref VARCHAR(12), note TEXT)",
        "CREATE TABLE order_items (id INTEGER PRIMARY KEY, "
        "order_id INTEGER REFERENCES orders(id), product_id INTEGER)",
        "CREATE TABLE returns (id INTEGER PRIMARY KEY, customer_id INTEGER)",
        f'CREATE TABLE {ODD_SQL} ("key id" INTEGER PRIMARY KEY, label TEXT)',
        'CREATE TABLE visits (id INTEGER PRIMARY KEY, "odd_quoted_table_id" INTEGER)',
    ]
    rows = {
        "regions": [(r, f"region {r}") for r in range(1, 9)],
        "customers": [(i, f"customer {i}", 1 + i % 8) for i in range(1, 51)],
        "products": [(i, f"product {i}") for i in range(1, 61)],
        "parcels": [(f"P{i:04d}", i % 7) for i in range(1, 101)],
        # seller_id: 1..30, inside customers.id and products.id alike (ambiguous: no join)
        # warehouse_no: {1, 2} (too few values for a pair whose names do not relate)
        "orders": [
            (i, 1 + i % 40, 1 + i % 30, 1 + i % 2, 1 + i % 3, f"P{1 + i % 90:04d}", f"note {i}")
            for i in range(1, 201)
        ],
        "order_items": [(i, 1 + i % 200, 1 + i % 55) for i in range(1, 401)],
        "returns": [(i, 900 + i) for i in range(1, 11)],  # names say customers, values say no
        ODD: [(i, f"odd {i}") for i in range(1, 6)],
        "visits": [(i, 1 + i % 5) for i in range(1, 31)],
    }
    for table, values in rows.items():
        name = ODD_SQL if table == ODD else table
        for row in values:
            literals = ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in row)
            stmts.append(f"INSERT INTO {name} VALUES ({literals})")
    return stmts


@pytest.fixture
def sqlite_shop(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        for stmt in shop_sql():
            conn.execute(stmt)
    return path


def joins(db: Database) -> dict[str, tuple[str, bool, str | None]]:
    """``table.column`` -> (``table.column`` it references, inferred, evidence)."""
    return {
        f"{t.name}.{c.name}": (
            f"{c.foreign_key.table}.{c.foreign_key.column}",
            c.foreign_key.inferred,
            c.foreign_key.evidence,
        )
        for t in db.tables
        for c in t.columns
        if c.foreign_key is not None
    }


EXPECTED_VALUES = {
    "order_items.order_id": ("orders.id", False, None),  # declared, kept as declared
    "order_items.product_id": ("products.id", True, "values"),
    "orders.customer_id": ("customers.id", True, "values"),
    "orders.tracking_ref": ("parcels.code", True, "values"),  # names unrelated, 90 text codes
    "customers.region_id": ("regions.region_id", True, "values"),  # parent unique by query
    "visits.odd_quoted_table_id": (f"{ODD}.key id", True, "values"),
}


def check_values_mode(db: Database) -> None:
    found = joins(db)
    assert found == EXPECTED_VALUES
    # not joins: small domain {1, 2}, ambiguous 1..30, values missing from customers
    for col in ("orders.warehouse_no", "orders.seller_id", "orders.quantity", "returns.customer_id"):
        assert col not in found


def test_sqlite_values_infers_contained_keys_only(make_entry, sqlite_shop: Path) -> None:
    snap = take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="values"))
    check_values_mode(snap.database)
    assert sorted(snap.inferred_joins) == sorted(
        f"{k} -> {v[0]} (values)" for k, v in EXPECTED_VALUES.items() if v[1]
    )


def test_sqlite_inferred_joins_are_marked_in_json_and_ddl(make_entry, sqlite_shop: Path) -> None:
    db = take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="values")).database
    dumped = db.model_dump(mode="json")
    orders = next(t for t in dumped["tables"] if t["name"] == "orders")
    fk = next(c for c in orders["columns"] if c["name"] == "customer_id")["foreign_key"]
    assert fk == {"table": "customers", "column": "id", "inferred": True, "evidence": "values"}
    items = next(t for t in dumped["tables"] if t["name"] == "order_items")
    assert next(c for c in items["columns"] if c["name"] == "order_id")["foreign_key"] == {
        "table": "orders",
        "column": "id",
    }
    assert Database.model_validate(json.loads(json.dumps(dumped))) == db  # round trip
    ddl = format_full_schema(db)
    assert "REFERENCES customers (id) /* inferred from values, not declared */" in ddl
    assert "inferred" not in next(line for line in ddl.splitlines() if "REFERENCES orders" in line)
    assert '"Odd ""Quoted"" Table"' in ddl


def test_sqlite_off_is_the_default_and_keeps_the_fingerprint(make_entry, sqlite_shop: Path) -> None:
    off = take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop)))
    assert joins(off.database) == {"order_items.order_id": ("orders.id", False, None)}
    assert off.inferred_joins == []
    on = take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="values"))
    assert on.fingerprint != off.fingerprint  # turning inference on is a new version, once
    again = take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="values"))
    assert again.fingerprint == on.fingerprint


def test_sqlite_names_and_both(make_entry, sqlite_shop: Path) -> None:
    names = joins(
        take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="names")).database
    )
    # names alone guess returns.customer_id (the data refutes it) and miss tracking_ref
    assert names["returns.customer_id"] == ("customers.id", True, "names")
    assert "orders.tracking_ref" not in names
    both = joins(
        take_snapshot(make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="both")).database
    )
    assert "returns.customer_id" not in both  # refuted by the data, not re-added by the names
    assert {k: v for k, v in both.items() if v[2] != "names"} == EXPECTED_VALUES


def test_sqlite_caps_pairs_and_minimum_distinct(make_entry, sqlite_shop: Path) -> None:
    capped = take_snapshot(
        make_entry(
            kind="sqlite", connection=str(sqlite_shop), infer_joins="values", join_inference={"max_pairs": 1}
        )
    )
    assert len(capped.inferred_joins) <= 1
    strict = take_snapshot(
        make_entry(
            kind="sqlite",
            connection=str(sqlite_shop),
            infer_joins="values",
            join_inference={"min_distinct": 500},
        )
    )
    assert "orders.tracking_ref" not in joins(strict.database)  # unrelated names need 500 values now
    assert "orders.customer_id" in joins(strict.database)  # related names do not


def test_unknown_mode_is_a_clear_error(make_entry) -> None:
    from schemarag.runtime.core.errors import ConfigError

    with pytest.raises(ConfigError, match="infer_joins"):
        make_entry(kind="sqlite", connection="x.db", infer_joins="yes")


@pytest.mark.postgres
def test_postgres_values_infers_contained_keys_only(make_entry, pg_admin, pg_schema: str) -> None:
    pg_admin.execute(f'SET search_path TO "{pg_schema}"')
    for stmt in shop_sql():
        pg_admin.execute(stmt)
    entry = make_entry(
        name="pgshop", kind="postgres", connection=PG, schemas=[pg_schema], infer_joins="values"
    )
    snap = take_snapshot(entry)
    check_values_mode(snap.database)
    assert fingerprint(snap.database) == snap.fingerprint


def test_duckdb_values_infers_contained_keys_only(make_entry, tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as conn:
        for stmt in shop_sql():
            conn.execute(stmt)
    check_values_mode(
        take_snapshot(make_entry(kind="duckdb", connection=str(path), infer_joins="values")).database
    )


def test_sqlite_min_containment_tolerates_orphans(make_entry, sqlite_shop: Path) -> None:
    with sqlite3.connect(sqlite_shop) as conn:  # 39 customers that exist and 1 that was deleted
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, customer_id INTEGER)")
        conn.executemany("INSERT INTO invoices VALUES (?, ?)", [(i, i) for i in range(1, 40)] + [(40, 999)])

    def found(**bounds: object) -> dict[str, tuple[str, bool, str | None]]:
        entry = make_entry(
            kind="sqlite", connection=str(sqlite_shop), infer_joins="values", join_inference=bounds
        )
        return joins(take_snapshot(entry).database)

    assert "invoices.customer_id" not in found(min_containment=1.0)  # strict: 999 has no customer
    assert found()["invoices.customer_id"] == ("customers.id", True, "values")  # 39/40 >= 0.95
    assert "returns.customer_id" not in found()  # none of its values exist


def test_docs_init_writes_inferred_joins_and_keeps_the_version(
    make_entry, sqlite_shop: Path, tmp_path: Path
) -> None:
    from schemarag.assets.lib.datasources.docs_init import docs_init

    entry = make_entry(kind="sqlite", connection=str(sqlite_shop), infer_joins="values")
    first = docs_init(entry, tmp_path / "data")
    assert first.json_written and "orders.customer_id -> customers.id (values)" in first.inferred_joins
    written = json.loads(first.schema_file.read_text(encoding="utf-8"))
    orders = next(t for t in written["tables"] if t["name"] == "orders")
    assert (
        next(c for c in orders["columns"] if c["name"] == "customer_id")["foreign_key"]["evidence"]
        == "values"
    )
    again = docs_init(entry, tmp_path / "data")
    assert not again.changed and again.version == first.version  # same data, same joins, same version
