"""Generation uses the relation names dbt builds (issue 24 item 5, dbt part).

The dbt_warehouse fixture imported: the DDL, the validator, MCP ``get_schema``/``validate_sql``
(real SDK client over stdio) and POST /v1/schema (real server process) all say
``analytics_marts.orders``, never the dbt model name; a statement written with those names runs
on a real DuckDB holding the same schemas and tables and the validator calls it valid, while one
naming a dbt model (``fct_orders``) or an ephemeral model is rejected by both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import duckdb
import httpx
import pytest
from mcp import Client, StdioServerParameters

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database, load_schema
from schemarag.runtime.formatting import format_full_schema

GOOD = [
    "SELECT c.country_code, SUM(o.amount) AS revenue FROM analytics_marts.orders AS o "
    "JOIN analytics_marts.customers AS c ON c.customer_id = o.customer_id GROUP BY c.country_code",
    "SELECT order_date, revenue FROM analytics_finance.fct_revenue_daily ORDER BY order_date DESC LIMIT 7",
    "SELECT r.country_name, COUNT(*) FROM analytics_marts.customers AS c "
    "JOIN analytics_reference.country_codes AS r ON r.country_code = c.country_code GROUP BY 1",
    "SELECT charge_id, created_at FROM payments_db.stripe.charges ORDER BY created_at DESC LIMIT 10",
]
BAD = [
    "SELECT SUM(amount) FROM fct_orders",  # the dbt model name, not the relation
    "SELECT * FROM analytics.int_order_payments",  # ephemeral: never built
    "SELECT * FROM orders",  # the alias without its schema
]


@pytest.fixture(scope="module")
def db(dbt_warehouse_index) -> Database:
    return load_schema(dbt_warehouse_index.data / "jaffle_warehouse.json")


def _warehouse(db: Database) -> duckdb.DuckDBPyConnection:
    """A real DuckDB holding every relation of the import under its name (other database attached)."""
    con = duckdb.connect()
    for table in db.tables:
        parts = table.name.split(".")
        if len(parts) == 3:
            attached = {r[0] for r in con.execute("select database_name from duckdb_databases()").fetchall()}
            if parts[0] not in attached:
                con.execute(f"ATTACH ':memory:' AS {parts[0]}")
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {'.'.join(parts[:-1])}")
        # UNKNOWN: the yml gave no type (stripe.charges); the real warehouse has one
        cols = ", ".join(f'"{c.name}" {"VARCHAR" if c.type == "UNKNOWN" else c.type}' for c in table.columns)
        con.execute(f"CREATE TABLE {table.name} ({cols})")
    return con


def test_ddl_names_relations_as_the_warehouse_does(db):
    ddl = format_full_schema(db)
    assert "CREATE TABLE analytics_marts.orders (" in ddl
    assert "CREATE TABLE payments_db.stripe.charges (" in ddl
    assert "REFERENCES analytics_marts.customers (customer_id)" in ddl
    assert "int_order_payments" not in ddl.split("--")[0]  # ephemeral: no CREATE TABLE
    assert "CREATE TABLE fct_orders" not in ddl and "CREATE TABLE orders" not in ddl


def test_statements_with_relation_names_run_on_duckdb_and_validate(db):
    con = _warehouse(db)
    for sql in GOOD:
        con.execute(sql).fetchall()  # the real engine resolves every name
        report = validate_sql(sql, db)
        assert report.valid is True, (sql, report.errors, report.unchecked_reason)
    for sql in BAD:
        with pytest.raises(duckdb.CatalogException):
            con.execute(sql)
        assert validate_sql(sql, db).valid is False, sql


def test_a_type_the_project_does_not_give_leaves_a_type_mismatch_unchecked_not_invalid(db):
    charges = db.table("payments_db.stripe.charges")
    assert charges.column("amount_cents").type == "UNKNOWN"  # no data_type in the yml, nothing to infer from
    assert db.table("analytics_marts.orders").column("amount").type == "DOUBLE"  # inferred through the SQL
    report = validate_sql("SELECT SUM(amount_cents) FROM payments_db.stripe.charges", db)
    assert report.valid is None and "unknown type" in report.unchecked_reason
    assert (
        validate_sql("SELECT SUM(nope) FROM payments_db.stripe.charges", db).valid is False
    )  # names still checked


async def _mcp(artifacts: Path) -> tuple[str, object, object]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "schemarag", "mcp", "--artifacts", str(artifacts)]
    )
    async with Client(params) as client:
        schema = await client.call_tool(
            "get_schema", {"database": "jaffle_warehouse", "question": "revenue by customer country"}
        )
        good = await client.call_tool("validate_sql", {"database": "jaffle_warehouse", "sql": GOOD[0]})
        bad = await client.call_tool("validate_sql", {"database": "jaffle_warehouse", "sql": BAD[0]})
        return schema.content[0].text, good.structured_content, bad.structured_content


def test_mcp_get_schema_and_validate_sql_use_relation_names(dbt_warehouse_index):
    text, good, bad = anyio.run(_mcp, dbt_warehouse_index.artifacts)
    assert "CREATE TABLE analytics_marts.orders (" in text
    assert "CREATE TABLE fct_orders" not in text
    assert good["valid"] is True
    assert bad["valid"] is False


def test_http_schema_uses_relation_names(dbt_warehouse_index, tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "app" / "serve"))
    from server_support import start_server  # the serve tests' real-process helper

    server = start_server(dbt_warehouse_index.artifacts, tmp_path / "server.log")
    try:
        resp = httpx.post(
            f"{server.base}/v1/schema",
            json={"database": "jaffle_warehouse", "question": "daily revenue", "table_budget": 5},
            timeout=60,
        )
    finally:
        server.stop()
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert "CREATE TABLE analytics_finance.fct_revenue_daily (" in body["schema"]
    assert all("." in t for t in body["metadata"]["tables_shown"])
