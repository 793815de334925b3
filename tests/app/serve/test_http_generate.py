"""POST /v1/generate of a real server process against a real local chat-completions server.

The LLM endpoint is the one network edge: a ``http.server`` on 127.0.0.1 speaking the OpenAI
protocol answers every request with the same SQL and records what the server sent it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from server_support import Server, start_server

ANSWER = json.dumps({"query": "SELECT COUNT(*) FROM orders", "explanation": "count", "confidence": "high",
                     "tables_used": ["orders"], "assumptions": []})  # fmt: skip


class _ChatServer(ThreadingHTTPServer):
    daemon_threads = True
    prompts: list[str]


class _Handler(BaseHTTPRequestHandler):
    server: _ChatServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.prompts.append(body["messages"][-1]["content"])
        message = {"role": "assistant", "content": ANSWER}
        reply = json.dumps({
            "id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }).encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:  # quiet test output
        pass


@pytest.fixture(scope="module")
def chat() -> Iterator[_ChatServer]:
    server = _ChatServer(("127.0.0.1", 0), _Handler)
    server.prompts = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def with_llm(
    serve_artifacts: Path, chat: _ChatServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    env = {
        "SCHEMARAG_LLM_BASE_URL": f"http://127.0.0.1:{chat.server_address[1]}/v1",
        "SCHEMARAG_LLM_MODEL": "m",
    }
    server = start_server(serve_artifacts, tmp_path_factory.mktemp("logs") / "llm.log", env)
    yield server
    server.stop()


def test_generate_uses_the_llm_and_a_focus_asks_for_retrieval(with_llm: Server, chat: _ChatServer) -> None:
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
