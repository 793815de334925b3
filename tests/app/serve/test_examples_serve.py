"""``examples`` over HTTP (/v1/schema, /v1/generate) and MCP (get_schema, generate_sql) of a real
``schemarag serve`` process, over an index built with an imported query history (issue 38).

The LLM is a real local chat-completions server that records the prompts the server sent it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from history_support import DB, SPEND, HistoryIndexes, build_history_indexes
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_support import ChatServer, Server, chat_server, start_server

from schemarag.runtime.search.history_examples import DEFAULT_EXAMPLES, MAX_EXAMPLES, SECTION_TITLE


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatServer]:
    with chat_server() as server:
        yield server


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> HistoryIndexes:
    return build_history_indexes(tmp_path_factory.mktemp("serve_examples"))


@pytest.fixture(scope="module")
def served(
    indexes: HistoryIndexes, chat: ChatServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    env = {
        "SCHEMARAG_LLM_BASE_URL": chat.base_url,
        "SCHEMARAG_LLM_MODEL": "m",
    }
    server = start_server(indexes.artifacts, tmp_path_factory.mktemp("logs") / "examples.log", env)
    yield server
    assert server.stop() == 0, server.log.read_text()


def _post(server: Server, path: str, body: dict) -> httpx.Response:
    return httpx.post(f"{server.base}{path}", json={"database": DB, **body}, timeout=120)


def test_schema_carries_the_examples_after_the_schema(served: Server) -> None:
    default = _post(served, "/v1/schema", {"question": SPEND})
    assert default.status_code == 200, default.text
    text, meta = default.json()["schema"], default.json()["metadata"]
    assert len(meta["examples"]) == DEFAULT_EXAMPLES and meta["examples"][0]["tables"] == ["orders", "users"]
    assert text.index("CREATE TABLE") < text.index(SECTION_TITLE)
    assert f"-- question: {SPEND}" in text and meta["token_estimate"] >= sum(
        e["tokens"] for e in meta["examples"]
    )
    none = _post(served, "/v1/schema", {"question": SPEND, "examples": 0})
    assert SECTION_TITLE not in none.json()["schema"] and "examples" not in none.json()["metadata"]
    assert default.json()["schema"].startswith(none.json()["schema"].rstrip())
    one = _post(served, "/v1/schema", {"question": SPEND, "examples": 1})
    assert len(one.json()["metadata"]["examples"]) == 1


def test_schema_refuses_examples_it_cannot_honour(served: Server) -> None:
    too_many = _post(served, "/v1/schema", {"question": SPEND, "examples": MAX_EXAMPLES + 1})
    assert too_many.status_code == 422 and "examples" in too_many.text
    tables = _post(served, "/v1/schema", {"question": SPEND, "tables": ["orders"], "examples": 1})
    assert tables.status_code == 422 and tables.json()["field"] == "tables"
    assert "'examples'" in tables.json()["error"]
    negative = _post(served, "/v1/schema", {"question": SPEND, "examples": -1})
    assert negative.status_code == 422


def test_generate_sends_the_examples_to_the_model(served: Server, chat: ChatServer) -> None:
    out = _post(served, "/v1/generate", {"question": SPEND, "examples": 1})
    assert out.status_code == 200, out.text
    assert len(out.json()["retrieval_metadata"]["examples"]) == 1
    assert out.json()["usage"]["examples_tokens"] > 0
    sent = chat.prompts[-1]
    assert SECTION_TITLE in sent and sent.index(SECTION_TITLE) < sent.index(f"Question: {SPEND}")
    off = _post(served, "/v1/generate", {"question": SPEND, "examples": 0})
    assert off.status_code == 200 and SECTION_TITLE not in chat.prompts[-1]
    assert "examples" not in off.json()["retrieval_metadata"]


async def _mcp(server: Server) -> dict:
    client = httpx2.AsyncClient(timeout=120)
    async with Client(streamable_http_client(f"{server.base}/mcp", http_client=client)) as mcp:
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        assert "examples" in str(tools["get_schema"].input_schema)
        assert "examples" in str(tools["generate_sql"].input_schema)
        with_examples = await mcp.call_tool("get_schema", {"database": DB, "question": SPEND, "examples": 1})
        without = await mcp.call_tool("get_schema", {"database": DB, "question": SPEND, "examples": 0})
        refused = await mcp.call_tool("get_schema", {"database": DB, "tables": ["orders"], "examples": 2})
        generated = await mcp.call_tool("generate_sql", {"database": DB, "question": SPEND, "examples": 2})
        return {
            "with": with_examples.content[0].text,
            "without": without.content[0].text,
            "refused": (refused.is_error, refused.content[0].text),
            "generated": generated.structured_content,
        }


def test_mcp_tools_take_examples(served: Server, chat: ChatServer) -> None:
    out = anyio.run(_mcp, served)
    assert SECTION_TITLE in out["with"] and SECTION_TITLE not in out["without"]
    assert out["refused"][0] and "examples" in out["refused"][1]
    assert len(out["generated"]["retrieval_metadata"]["examples"]) == 2
    assert SECTION_TITLE in chat.prompts[-1]


def test_an_index_without_history_answers_as_before(indexes: HistoryIndexes, tmp_path: Path) -> None:
    """The same requests against the index built before the import: no section, no new keys."""
    server = start_server(indexes.plain, tmp_path / "plain.log")
    try:
        default = _post(server, "/v1/schema", {"question": SPEND})
        zero = _post(server, "/v1/schema", {"question": SPEND, "examples": 0})
        asked = _post(server, "/v1/schema", {"question": SPEND, "examples": 2})
    finally:
        assert server.stop() == 0
    bodies = [r.json() for r in (default, zero, asked)]
    for body in bodies:
        body["metadata"].pop("timings_ms")  # wall-clock times differ from request to request
    assert bodies[0] == bodies[1] and SECTION_TITLE not in bodies[0]["schema"]
    assert "examples" not in bodies[0]["metadata"]
    reason = bodies[2]["metadata"].pop("examples_missing_reason")
    assert reason.startswith("the index has no query history") and bodies[2] == bodies[0]
