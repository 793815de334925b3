"""Inferred relationships from names and types, on a real BIRD catalog with its FKs removed."""

from __future__ import annotations

import json
from pathlib import Path

from schemarag.assets.lib.join_inference import (
    CONF_OWNER,
    CONF_SHARED,
    MAX_SHARED_WITHOUT_OWNER,
    declares_keys,
    infer_foreign_keys,
    infer_join_keys,
    key_stem,
)
from schemarag.runtime.core.schema import Database, load_schema
from schemarag.runtime.formatting import render_schema
from schemarag.tools.importers.writer import import_catalog

FIXTURE = Path(__file__).parents[1] / "fixtures" / "bird_small"


def _db(tables: list[dict]) -> Database:
    return Database.model_validate({"name": "s", "dialect": "sqlite", "tables": tables})


def _col(name: str, type_: str = "INTEGER", pk: bool = False) -> dict:
    return {"name": name, "type": type_, "primary_key": pk}


def test_reference_by_table_name_and_shared_key_name() -> None:
    db = _db(
        [
            {"name": "categories", "columns": [_col("id", pk=True), _col("title", "TEXT")]},
            {"name": "Customers", "columns": [_col("CustomerID", pk=True)]},
            {
                "name": "orders",
                "columns": [_col("id", pk=True), _col("categoryId"), _col("CustomerID"), _col("paid_no")],
            },
        ]
    )
    inferred = infer_foreign_keys(db)
    orders = inferred.table("orders")
    assert orders.column("categoryId").foreign_key.model_dump() == {
        "table": "categories",
        "column": "id",
        "inferred": True,
    }
    assert orders.column("CustomerID").foreign_key.table == "Customers"
    assert orders.column("paid_no").foreign_key is None  # no table named "paid"
    assert orders.column("id").foreign_key is None  # a table's own key references nothing
    assert db.table("orders").column("categoryId").foreign_key is None  # the input is not changed


def test_types_must_match_and_declared_keys_win() -> None:
    db = _db(
        [
            {"name": "users", "columns": [_col("id", pk=True)]},
            {"name": "teams", "columns": [_col("id", pk=True)]},
            {
                "name": "events",
                "columns": [
                    _col("id", pk=True),
                    _col("user_id", "TEXT"),  # text vs integer key: not a join
                    {"name": "team_id", "type": "INTEGER", "foreign_key": {"table": "users", "column": "id"}},
                ],
            },
        ]
    )
    events = infer_foreign_keys(db).table("events")
    assert events.column("user_id").foreign_key is None
    declared = events.column("team_id").foreign_key
    assert (declared.table, declared.column, declared.inferred) == ("users", "id", False)


def test_union_inference_stays_inside_each_database() -> None:
    tables = [
        {"name": "a__customers", "database": "a", "columns": [_col("id", pk=True)]},
        {"name": "b__orders", "database": "b", "columns": [_col("id", pk=True), _col("customer_id")]},
    ]
    assert infer_foreign_keys(_db(tables)).table("b__orders").column("customer_id").foreign_key is None


def test_bird_catalog_without_fks_gets_them_back_marked_inferred(tmp_path: Path) -> None:
    tables = FIXTURE / "tables.json"
    declared = len(json.loads(tables.read_text(encoding="utf-8"))[0]["foreign_keys"])
    import_catalog([tables], tmp_path / "stripped", strip_foreign_keys=True)
    import_catalog([tables], tmp_path / "inferred", strip_foreign_keys=True, infer_joins=True)
    stripped = load_schema(tmp_path / "stripped" / "debit_card_specializing.json")
    inferred = load_schema(tmp_path / "inferred" / "debit_card_specializing.json")
    assert stripped.foreign_keys() == []
    fks = [c.foreign_key for t in inferred.tables for c in t.columns if c.foreign_key]
    assert declared > 0 and len(fks) >= 1 and all(fk.inferred for fk in fks)
    ddl = "\n".join(sql for d in render_schema(inferred).values() for _, sql in d.fk_sql)
    assert "inferred from names, not declared" in ddl


def _names(db: Database, table: str) -> dict[str, tuple[str, float | None]]:
    """``{column: (parent table, confidence)}`` of one table's inferred keys."""
    t = db.table(table)
    return {c.name: (c.foreign_key.table, c.foreign_key.confidence) for c in t.columns if c.foreign_key}


def test_warehouse_keys_owner_by_name_shared_keys_and_bridges() -> None:
    db = _db(
        [  # a key-less warehouse: nothing declares a primary or a foreign key
            {"name": "sales.CUSTOMER_DIM", "columns": [_col("CUSTOMER_KEY"), _col("NAME", "TEXT")]},
            {"name": "sales.ORDERS_FCT", "columns": [_col("ORDER_KEY"), _col("CUSTOMER_KEY"), _col("AMT")]},
            {"name": "hr.employees", "columns": [_col("employee_id"), _col("full_name", "TEXT")]},
            {"name": "hr.projects", "columns": [_col("project_id"), _col("title", "TEXT"), _col("budget")]},
            {"name": "hr.assignments", "columns": [_col("employee_id"), _col("project_id"), _col("hours")]},
            {"name": "a", "columns": [_col("batch_code", "TEXT"), _col("x")]},
            {"name": "b", "columns": [_col("batch_code", "TEXT"), _col("y"), _col("z")]},
        ]
    )
    out = infer_join_keys(db)
    assert _names(out, "sales.ORDERS_FCT") == {"CUSTOMER_KEY": ("sales.CUSTOMER_DIM", CONF_OWNER)}
    assert _names(out, "sales.CUSTOMER_DIM") == {}  # a table's own key references nothing
    # the bridge between employees and projects gets an edge to each: completion walks through it
    assert {t for t, _ in _names(out, "hr.assignments").values()} == {"hr.employees", "hr.projects"}
    # shared by two tables, neither named after it: the narrower one is the parent, less sure
    assert _names(out, "b") == {"batch_code": ("a", CONF_SHARED)}
    assert all(c.foreign_key is None for t in db.tables for c in t.columns)  # input unchanged
    fk = out.table("b").column("batch_code").foreign_key
    assert fk.inferred and fk.evidence == "names"


def test_warehouse_keys_skip_ubiquitous_names_and_keep_declared_ones() -> None:
    facts = [
        {"name": f"fact_{i}", "columns": [_col("region_code", "TEXT"), _col(f"m{i}")]}
        for i in range(MAX_SHARED_WITHOUT_OWNER + 1)
    ]
    out = infer_join_keys(_db(facts))
    assert all(c.foreign_key is None for t in out.tables for c in t.columns)  # an attribute, not a join
    declared = _db(
        [
            {"name": "users", "columns": [_col("user_id", pk=True)]},
            {"name": "teams", "columns": [_col("user_id")]},
            {"name": "events", "columns": [{"name": "user_id", "type": "INTEGER",
                                            "foreign_key": {"table": "teams", "column": "user_id"}}]},
        ]
    )  # fmt: skip
    kept = infer_join_keys(declared).table("events").column("user_id").foreign_key
    assert (kept.table, kept.inferred) == ("teams", False)
    assert declares_keys(declared) and not declares_keys(_db(facts))


def test_key_names_are_read_in_every_spelling() -> None:
    assert [
        key_stem(n) for n in ("CUST_ACCT_KEY", "orderId", "OrderID", "customerid", "valid", "status")
    ] == [
        "cust_acct",
        "order",
        "order",
        "customer",
        None,
        None,
    ]
