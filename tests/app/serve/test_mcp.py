"""The MCP server driven by the SDK's own client: stdio (``schemarag mcp``) and streamable HTTP."""

from __future__ import annotations

import sys

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"list_databases", "search_schema", "get_schema", "validate_sql"}


async def _exercise(target, database: str, table: str, question: str) -> dict:
    async with Client(target) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS  # no generate_sql: no LLM is configured
        assert "token_budget" in str(tools["get_schema"].input_schema)
        assert "get_schema" in tools["search_schema"].description  # descriptions steer the agent
        listed = await client.call_tool("list_databases", {})
        found = await client.call_tool(
            "search_schema", {"database": database, "question": question, "top_k": 3}
        )
        assert not found.is_error, found.content
        assert found.structured_content["chunks"][0]["table"] == table
        assert set(found.structured_content) == {
            "database", "tables", "expanded_tables", "ranking", "chunks", "metadata",
        }  # fmt: skip
        assert found.structured_content["ranking"]["tables"][0]["table"] == table  # the table ranking
        schema = await client.call_tool("get_schema", {"database": database, "question": question})
        assert not schema.is_error and f"CREATE TABLE {table}" in schema.content[0].text
        focused = await client.call_tool(
            "get_schema", {"database": database, "question": question, "focus": "compact", "table_budget": 3}
        )
        assert not focused.is_error and table in focused.content[0].text
        mixed = await client.call_tool(
            "get_schema", {"database": database, "tables": [table], "focus": "compact"}
        )
        assert mixed.is_error and "`focus`" in mixed.content[0].text
        pinned = await client.call_tool("get_schema", {"database": database, "tables": [table]})
        assert f"CREATE TABLE {table}" in pinned.content[0].text
        sql = await client.call_tool("validate_sql", {"database": database, "sql": "DROP TABLE x"})
        assert sql.structured_content["valid"] is False
        unchecked = await client.call_tool(
            "validate_sql", {"database": database, "sql": f"SELECT * FROM {table} WHERE 1 = $1"}
        )
        assert unchecked.structured_content["valid"] is None
        assert "Values were not provided" in unchecked.structured_content["unchecked_reason"]
        missing = await client.call_tool("get_schema", {"database": "nope", "question": question})
        assert missing.is_error and "'nope'" in missing.content[0].text
        return {"databases": {d["database"] for d in listed.structured_content["databases"]}}


def test_mcp_over_stdio(serve_artifacts) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "schemarag", "mcp", "--artifacts", str(serve_artifacts)]
    )
    out = anyio.run(_exercise, params, "shop", "customers", "customers in the gold loyalty tier")
    assert out["databases"] == {"shop", "shop_a", "shop_b", "shop_c"}


def test_mcp_over_stdio_for_a_tenant(serve_artifacts) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemarag", "mcp", "--artifacts", str(serve_artifacts), "--tenant", "acme"],
    )
    out = anyio.run(_exercise, params, "acme_crm", "leads", "sales pipeline stage of leads")
    assert out["databases"] == {"acme_crm"}


def _http(server, tenant):
    client = httpx2.AsyncClient(headers=server.headers(tenant), timeout=120)
    return streamable_http_client(f"{server.base}/mcp", http_client=client)


def test_mcp_over_streamable_http_is_tenant_scoped(keyed) -> None:
    acme = anyio.run(_exercise, _http(keyed, "acme"), "acme_crm", "leads", "sales pipeline stage of leads")
    assert acme["databases"] == {"acme_crm"}
    globex = anyio.run(_exercise, _http(keyed, "globex"), "globex_hr", "salaries", "salary band of employees")
    assert globex["databases"] == {"globex_hr"}

    async def foreign() -> str:
        async with Client(_http(keyed, "acme")) as client:
            r = await client.call_tool("search_schema", {"database": "globex_hr", "question": "salary"})
            assert r.is_error
            return r.content[0].text

    assert "'globex_hr' not found" in anyio.run(foreign)


def test_mcp_over_http_needs_a_key(keyed) -> None:
    r = httpx2.post(f"{keyed.base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 401
