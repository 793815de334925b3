"""A real chat-completions HTTP server on 127.0.0.1 with scripted answers, plus small schemas.

The LLM endpoint is the one true network edge of query generation, so tests talk to a real
``http.server`` speaking the OpenAI protocol instead of patching the client. Each test queues
steps (an answer, an HTTP status, a slow answer, raw bytes) and can inspect every request the
client made, headers included.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from schemarag.runtime.core.schema import Database

API_KEY = "sk-test-SECRET-0123456789"


@dataclass
class Step:
    """One scripted reply: ``kind`` in answer | status | sleep | raw | echo_auth | trickle | huge |
    reset (``seconds`` is the trickle interval, ``size`` the announced/streamed body size)."""

    kind: str
    content: str = ""
    status: int = 200
    seconds: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    size: int = 0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def envelope(content: str, prompt_tokens: int = 100, completion_tokens: int = 20) -> bytes:
    return json.dumps({
        "id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }).encode()  # fmt: skip


def sql_answer(query: str, confidence: str = "high", **extra: Any) -> str:
    """The JSON text a well-behaved model returns."""
    return json.dumps({"query": query, "explanation": "scripted", "confidence": confidence,
                       "tables_used": [], "assumptions": ["scripted assumption"], **extra})  # fmt: skip


class ScriptedLLM:
    """Queue of steps served in order; an exhausted queue answers HTTP 500."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, content: str) -> ScriptedLLM:
        self.steps.append(Step("answer", content))
        return self

    def answer_sql(self, query: str, confidence: str = "high", **extra: Any) -> ScriptedLLM:
        return self.answer(sql_answer(query, confidence, **extra))

    def status(self, status: int, body: str = '{"error": "scripted"}', **headers: str) -> ScriptedLLM:
        self.steps.append(Step("status", body, status=status, headers=headers))
        return self

    def sleep(self, seconds: float, content: str = "") -> ScriptedLLM:
        self.steps.append(Step("sleep", content, seconds=seconds))
        return self

    def raw(self, body: str) -> ScriptedLLM:
        self.steps.append(Step("raw", body))
        return self

    def echo_auth(self, status: int = 401) -> ScriptedLLM:
        self.steps.append(Step("echo_auth", status=status))
        return self

    def trickle(self, interval: float, size: int = 10_000) -> ScriptedLLM:
        """Headers at once, then one body byte every ``interval`` seconds (a slowloris peer)."""
        self.steps.append(Step("trickle", seconds=interval, size=size))
        return self

    def huge(self, size: int) -> ScriptedLLM:
        """A 200 answer announcing and streaming ``size`` bytes (never held in memory here)."""
        self.steps.append(Step("huge", size=size))
        return self

    def reset(self, sent: int = 100, size: int = 1000, abortive: bool = True) -> ScriptedLLM:
        """Announce ``size`` bytes, send ``sent`` of them, then reset the connection (TCP RST), or
        with ``abortive=False`` close it cleanly (the body is simply cut short: IncompleteRead)."""
        self.steps.append(Step("reset", "rst" if abortive else "fin", size=size, status=sent))
        return self

    def next_step(self, recorded: Recorded) -> Step:
        with self._lock:
            self.requests.append(recorded)
            return self.steps.pop(0) if self.steps else Step("status", "script exhausted", status=500)


def _handler(llm: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            step = llm.next_step(Recorded(self.path, dict(self.headers.items()), body))
            try:
                if step.kind == "sleep":
                    time.sleep(step.seconds)
                    self._send(200, envelope(step.content or '{"query": "SELECT 1"}'))
                elif step.kind == "answer":
                    self._send(200, envelope(step.content))
                elif step.kind == "raw":
                    self._send(200, step.content.encode())
                elif step.kind in ("trickle", "huge", "reset"):
                    self._stream(step)
                elif step.kind == "echo_auth":
                    echoed = f'{{"error": "invalid key in header: {self.headers.get("Authorization")}"}}'
                    self._send(step.status, echoed.encode())
                else:
                    self._send(step.status, step.content.encode(), step.headers)
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass  # the client gave up (timeout test); nothing to answer

        def _stream(self, step: Step) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(step.size))
            self.end_headers()
            if step.kind == "trickle":
                for _ in range(step.size):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(step.seconds)
            elif step.kind == "huge":
                block = b" " * 65536
                for _ in range(step.size // len(block)):
                    self.wfile.write(block)
            else:  # reset: part of the body, then an abortive close (SO_LINGER 0 sends RST)
                self.wfile.write(b'{"choices": ' + b" " * max(0, step.status - 12))
                self.wfile.flush()
                if step.content == "rst":
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                else:
                    self.close_connection = True

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(llm))
    server.daemon_threads = True
    llm.server = server
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield llm
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def _make_db(n_tables: int, dialect: str = "sqlite", name: str = "synthetic") -> Database:
    """``n_tables`` tables in a chain: t1 <- t2 <- ... each with id, name, a FK to the previous."""
    tables = []
    for i in range(1, n_tables + 1):
        cols: list[dict[str, Any]] = [
            {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
            {"name": "name", "type": "TEXT", "description": f"name of thing {i}"},
        ]
        if i > 1:
            cols.append({"name": f"t{i - 1}_id", "type": "INTEGER",
                         "foreign_key": {"table": f"t{i - 1}", "column": "id"}})  # fmt: skip
        tables.append({"name": f"t{i}", "columns": cols})
    return Database.model_validate({"name": name, "dialect": dialect, "tables": tables})


SHOP = {
    "name": "shop",
    "dialect": "sqlite",
    "tables": [
        {"name": "users", "columns": [
            {"name": "id", "type": "INTEGER", "primary_key": True},
            {"name": "name", "type": "TEXT"},
            {"name": "Full Name", "type": "TEXT"},
            {"name": "created_at", "type": "DATETIME"}]},
        {"name": "orders", "columns": [
            {"name": "id", "type": "INTEGER", "primary_key": True},
            {"name": "user_id", "type": "INTEGER", "foreign_key": {"table": "users", "column": "id"}},
            {"name": "total", "type": "REAL"},
            {"name": "status", "type": "VARCHAR(20)"}]},
        {"name": "Order Items", "columns": [
            {"name": "order_id", "type": "INTEGER", "foreign_key": {"table": "orders", "column": "id"}},
            {"name": "qty", "type": "INTEGER"},
            {"name": "sku", "type": "some_vendor_type"}]},
    ],
}  # fmt: skip


@pytest.fixture
def make_db() -> Any:
    """Factory of synthetic chain schemas (``make_db(25)``) for the table-count scenarios."""
    return _make_db


@pytest.fixture
def shop() -> Database:
    return Database.model_validate(SHOP)


@pytest.fixture
def shop_pg() -> Database:
    return Database.model_validate({**SHOP, "dialect": "postgres"})


@pytest.fixture
def shop_in() -> Any:
    """Factory: the shop schema in another dialect (``shop_in("duckdb")``)."""
    return lambda dialect: Database.model_validate({**SHOP, "dialect": dialect})
