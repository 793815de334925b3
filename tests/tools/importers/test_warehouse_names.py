"""Schema-qualified table names end to end: DDL, SQL validation and eval gold extraction."""

from __future__ import annotations

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database
from schemarag.runtime.formatting import format_full_schema
from schemarag.tools.evaluation.gold import SchemaView, gold_from_sql

DB = Database.model_validate(
    {
        "name": "wh",
        "dialect": "postgres",
        "tables": [
            {"name": "sales.customers", "columns": [{"name": "id", "primary_key": True}, {"name": "email"}]},
            {
                "name": "sales.orders",
                "columns": [
                    {"name": "id", "primary_key": True},
                    {"name": "amount", "type": "NUMERIC(10,2)"},
                    {"name": "customer_id", "foreign_key": {"table": "sales.customers", "column": "id"}},
                ],
            },
            {"name": "web.events_*", "columns": [{"name": "payload.user.id", "type": "TEXT"}]},
        ],
    }
)


def test_ddl_renders_schema_and_table():
    ddl = format_full_schema(DB)
    assert "CREATE TABLE sales.orders (" in ddl
    assert "REFERENCES sales.customers (id)" in ddl
    assert 'CREATE TABLE web."events_*" (' in ddl
    assert '"payload.user.id" TEXT' in ddl


def test_validation_accepts_qualified_names():
    ok = validate_sql(
        "SELECT c.email, SUM(o.amount) FROM sales.orders o JOIN sales.customers c ON c.id = o.customer_id "
        "GROUP BY c.email",
        DB,
    )
    assert ok.valid, ok.errors
    assert ok.tables == ["sales.orders", "sales.customers"]
    assert validate_sql("SELECT orders.amount FROM sales.orders", DB).valid
    bad = validate_sql("SELECT amount FROM sales.refunds", DB)
    assert not bad.valid and "refunds" in bad.errors[0]


def test_gold_from_qualified_sql():
    gold = gold_from_sql("SELECT SUM(o.amount) FROM sales.orders o WHERE o.customer_id = 3", SchemaView(DB))
    assert gold.ok and gold.tables == ["sales.orders"]
    assert gold.columns["sales.orders"] == ["amount", "customer_id"]
