"""POST /v1/generate of a real server process against a real local chat-completions server.

The LLM endpoint is the one network edge: a ``http.server`` on 127.0.0.1 speaking the OpenAI
protocol answers every request with the same SQL and records what the server sent it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_support import ChatServer, Server, chat_server, start_server


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatServer]:
    with chat_server() as server:
        yield server


@pytest.fixture(scope="module")
def with_llm(
    serve_artifacts: Path, chat: ChatServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    env = {
        "SCHEMARAG_LLM_BASE_URL": chat.base_url,
        "SCHEMARAG_LLM_MODEL": "m",
    }
    server = start_server(serve_artifacts, tmp_path_factory.mktemp("logs") / "llm.log", env)
    yield server
    server.stop()


def test_generate_uses_the_llm_and_a_focus_asks_for_retrieval(with_llm: Server, chat: ChatServer) -> None:
    url = f"{with_llm.base}/v1/generate"
    plain = httpx.post(url, json={"database": "shop", "question": "how many orders?"}, timeout=60)
    assert plain.status_code == 200, plain.text
    body = plain.json()
    assert body["query"] == "SELECT COUNT(*) FROM orders" and body["validation"]["valid"] is True
    assert body["retrieval_metadata"]["strategy"] == "full"  # two tables: the whole schema fits
    focused = httpx.post(
        url, json={"database": "shop", "question": "how many orders?", "focus": "compact"}, timeout=60
    )
    meta = focused.json()["retrieval_metadata"]
    assert focused.status_code == 200 and meta["strategy"] == "rag" and meta["focus"] == "compact"
    assert len(chat.prompts) == 2 and "CREATE TABLE orders" in chat.prompts[0]
    assert "orders" in chat.prompts[1]  # the compact focused schema still names the table
    too_many = httpx.post(url, json={"database": "shop", "question": "q", "table_budget": 10_000}, timeout=60)
    assert too_many.status_code == 422 and too_many.json()["field"] == "table_budget"
