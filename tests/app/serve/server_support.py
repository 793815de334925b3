"""The server-process helpers of the serve tests (a module of its own, not ``conftest``, so
test modules can import them by a name no other test folder uses)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

from schemarag.app.serve.keys import digest

KEYS = {"acme": "sr_acme-test-key", "globex": "sr_globex-test-key", None: "sr_operator-test-key"}


@dataclass
class Server:
    base: str
    proc: subprocess.Popen
    artifacts: Path
    log: Path

    def headers(self, tenant: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {KEYS[tenant]}"}

    def stop(self) -> int:
        """SIGTERM (graceful shutdown) and the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


_URL = re.compile(rb"on (http://\S+?:\d+) ")


def start_server(
    artifacts: Path, log: Path, env: dict[str, str] | None = None, *extra: str, host: str = "127.0.0.1"
) -> Server:
    """``schemarag serve`` on ``--port 0``: the kernel picks a free port when the server binds, and
    the URL is read from the line the server prints after binding, so no other process can take
    the port between choosing and binding it (a probed-then-released port could be)."""
    cmd = [sys.executable, "-m", "schemarag", "serve", "--artifacts", str(artifacts), "--port", "0",
           "--host", host, *extra]  # fmt: skip
    full_env = {**os.environ, "SCHEMARAG_SERVE_REFRESH_SECONDS": "0.2", **(env or {})}
    fh = log.open("wb")
    proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=full_env)
    server: Server | None = None
    deadline = time.monotonic() + 300  # the machine may be busy: model load + imports
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited {proc.returncode}: {log.read_text()}")
        if server is None:
            found = _URL.search(log.read_bytes())
            if found:
                server = Server(found.group(1).decode(), proc, artifacts, log)
        else:
            try:
                if httpx.get(f"{server.base}/readyz", timeout=5).status_code == 200:
                    return server
            except httpx.TransportError:
                pass
        time.sleep(0.3)
    proc.kill()
    proc.wait()
    raise AssertionError(f"server not ready: {log.read_text()}")


def key_env() -> dict[str, str]:
    return {"SCHEMARAG_SERVE_API_KEYS": ",".join(f"{t or ''}=sha256:{digest(k)}" for t, k in KEYS.items())}


# What the scripted chat-completions server answers: one valid JSON answer of the generator's format.
CHAT_ANSWER = json.dumps({"query": "SELECT COUNT(*) FROM orders", "explanation": "count",
                          "confidence": "high", "tables_used": ["orders"], "assumptions": []})  # fmt: skip


class ChatServer(ThreadingHTTPServer):
    """A real local OpenAI-compatible chat-completions server (the LLM edge of the serve tests):
    it records the last message of every request in ``prompts`` and answers :data:`CHAT_ANSWER`."""

    daemon_threads = True
    prompts: list[str]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _ChatHandler(BaseHTTPRequestHandler):
    server: ChatServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.prompts.append(body["messages"][-1]["content"])
        message = {"role": "assistant", "content": CHAT_ANSWER}
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


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    """A :class:`ChatServer` on a free loopback port, served from a thread until the block ends."""
    server = ChatServer(("127.0.0.1", 0), _ChatHandler)
    server.prompts = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
