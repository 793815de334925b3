"""The dbt importer over tests/fixtures/dbt_shop: tables, docs, keys, FKs, lineage, warnings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.dbt import import_dbt

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dbt_shop"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("dbt")
    report = import_dbt(FIXTURE, out)
    return report, load_schema(out / "dbt_shop.json"), out / "dbt_shop" / "docs"


def test_tables_from_models_and_sources(imported):
    report, db, _ = imported
    names = sorted(t.name for t in db.tables)
    assert names == [
        "customers", "orders", "raw.customers", "raw.orders", "revenue_by_day",
        "stg_customers", "stg_orders", "stg_payments",
    ]  # fmt: skip
    assert report.tables == 8
    assert db.description.startswith("Warehouse tables of the dbt project `dbt_shop`")


def test_columns_from_sql_when_yml_lists_none(imported):
    _, db, _ = imported
    payments = db.table("stg_payments")
    assert [c.name for c in payments.columns] == ["payment_id", "order_id", "payment_method", "amount"]
    # select * through a CTE expands to the source's yml columns, plus the SQL-only last_name
    assert [c.name for c in db.table("stg_customers").columns] == [
        "customer_id", "first_name", "last_name", "email",
    ]  # fmt: skip
    orders = db.table("orders")
    assert [c.name for c in orders.columns][:4] == ["order_id", "customer_id", "amount", "status"]
    assert {"credit_card_amount", "coupon_amount", "bank_transfer_amount"} <= {c.name for c in orders.columns}
    assert orders.column("order_date").type == "DATE"  # cast() in stg_orders, propagated


def test_docs_blocks_and_descriptions(imported):
    _, db, docs = imported
    assert db.table("orders").description.startswith("One row per order with its customer")
    assert "the customer sent the order back" in db.table("stg_orders").column("status").description
    ltv = db.table("customers").column("customer_lifetime_value").description
    assert ltv.startswith("Total amount (in dollars) a customer has paid")
    assert db.table("raw.orders").description == "Orders as placed in the web shop."
    text = (docs / "orders.md").read_text()
    assert text.startswith("# Table: orders\n\n## Purpose\nOne row per order")
    assert "### amount\n- **Type:** DOUBLE PRECISION\n- **Description:** Total order amount" in text


def test_keys_foreign_keys_pii_and_accepted_values(imported):
    report, db, _ = imported
    assert db.table("customers").primary_key == ["customer_id"]
    assert db.table("raw.customers").primary_key == ["id"]
    assert sorted(db.foreign_keys()) == [
        ("orders", "customer_id", "customers", "customer_id"),
        ("raw.orders", "user_id", "raw.customers", "id"),
        ("stg_orders", "customer_id", "stg_customers", "customer_id"),
    ]
    assert report.foreign_keys == 3
    assert db.table("raw.customers").column("first_name").pii  # tags: [pii]
    assert db.table("raw.customers").column("email").pii  # meta: {contains_pii: true}
    assert not db.table("raw.customers").column("id").pii
    status = db.table("stg_orders").column("status")
    assert status.sample_values == ["placed", "shipped", "completed", "returned"]
    assert status.stats == {"sample_complete": True}
    assert not db.table("orders").column("customer_id").nullable  # not_null test


def test_lineage_section(imported):
    _, _, docs = imported
    orders = (docs / "orders.md").read_text()
    assert (
        "## Lineage\n- **Built from:** `stg_orders`, `stg_payments`\n- **Used by:** `revenue_by_day`"
        in orders
    )
    # the unrenderable model still gets its ref() lineage from the Jinja AST
    assert "- **Built from:** `orders`" in (docs / "revenue_by_day.md").read_text()
    assert "- **Built from:** `raw.customers`" in (docs / "stg_customers.md").read_text()


def test_one_warning_per_unreadable_file(imported):
    report, db, _ = imported
    warnings = report.warnings
    assert any("broken.yml: skipped: invalid YAML at line 4" in w for w in warnings)
    assert any(
        "revenue_by_day.sql: Jinja not rendered" in w and "'dbt_utils' is undefined" in w for w in warnings
    )
    assert any("model 'ghost_model' is documented but has no .sql file" in w for w in warnings)
    assert any("'raw.payments' has no known columns" in w for w in warnings)
    assert len(warnings) == 4
    # the yml of the unrenderable model still imports
    assert [c.name for c in db.table("revenue_by_day").columns] == ["day_key", "order_date", "revenue"]


def test_unreadable_files_do_not_crash(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project)
    (project / "models" / "staging" / "bad.sql").write_bytes(b"select \xff\xfe from x")
    (project / "models" / "staging" / "syntax.sql").write_text("select {% if %} from x")
    (project / "macros" / "broken.sql").write_text("{% macro m( %}")
    (project / "models" / "staging" / "list.yml").write_text("- just a list\n")
    report = import_dbt(project, tmp_path / "out", name="shop2")
    joined = "\n".join(report.warnings)
    expected = (
        "bad.sql: skipped: cannot read",
        "syntax.sql: Jinja not rendered",
        "broken.sql: macros skipped",
        "list.yml: skipped: top level is not a mapping",
    )
    for name in expected:
        assert name in joined
    assert report.tables == 8


def test_missing_project_is_a_clear_error(tmp_path):
    with pytest.raises(ImportFormatError, match=r"no dbt_project\.yml"):
        import_dbt(tmp_path, tmp_path / "out")


def test_manifest_and_catalog(tmp_path):
    manifest = {
        "metadata": {"project_name": "jaffle"},
        "nodes": {
            "model.jaffle.customers": {
                "resource_type": "model", "name": "customers", "description": "One row per customer.",
                "columns": {"customer_id": {"name": "customer_id", "description": "Key."}},
                "depends_on": {"nodes": []},
            },
            "model.jaffle.orders": {
                "resource_type": "model", "name": "orders", "description": "Orders.",
                "columns": {}, "depends_on": {"nodes": ["model.jaffle.customers"]},
            },
            "test.jaffle.rel": {
                "resource_type": "test", "attached_node": "model.jaffle.orders", "column_name": "customer_id",
                "test_metadata": {"name": "relationships",
                                  "kwargs": {"to": "ref('customers')", "field": "customer_id"}},
            },
            "test.jaffle.uniq": {
                "resource_type": "test", "attached_node": "model.jaffle.customers",
                "column_name": "customer_id", "test_metadata": {"name": "unique", "kwargs": {}},
            },
            "test.jaffle.nn": {
                "resource_type": "test", "attached_node": "model.jaffle.customers",
                "column_name": "customer_id", "test_metadata": {"name": "not_null", "kwargs": {}},
            },
        },
        "sources": {},
    }  # fmt: skip
    catalog = {
        "nodes": {
            "model.jaffle.orders": {"metadata": {"comment": None}, "columns": {
                "ORDER_ID": {"name": "order_id", "type": "integer", "index": 1},
                "CUSTOMER_ID": {"name": "customer_id", "type": "integer", "index": 2},
                "AMOUNT": {"name": "amount", "type": "numeric(10,2)", "index": 3}}},
            "model.jaffle.customers": {"metadata": {}, "columns": {
                "CUSTOMER_ID": {"name": "customer_id", "type": "integer", "index": 1}}},
        },
    }  # fmt: skip
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "catalog.json").write_text(json.dumps(catalog))
    report = import_dbt(
        tmp_path, tmp_path / "out", manifest=tmp_path / "manifest.json", catalog=tmp_path / "catalog.json"
    )
    db = load_schema(tmp_path / "out" / "jaffle.json")
    assert [c.name for c in db.table("orders").columns] == ["order_id", "customer_id", "amount"]
    assert db.table("orders").column("amount").type == "numeric(10,2)"
    assert db.foreign_keys() == [("orders", "customer_id", "customers", "customer_id")]
    assert db.table("customers").primary_key == ["customer_id"]
    assert "- **Built from:** `customers`" in (tmp_path / "out" / "jaffle" / "docs" / "orders.md").read_text()
    assert report.warnings == []
