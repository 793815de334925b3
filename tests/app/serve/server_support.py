"""The server-process helpers of the serve tests (a module of its own, not ``conftest``, so
test modules can import them by a name no other test folder uses)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(artifacts: Path, log: Path, env: dict[str, str] | None = None, *extra: str) -> Server:
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "schemarag",
        "serve",
        "--artifacts",
        str(artifacts),
        "--port",
        str(port),
        *extra,
    ]
    full_env = {**os.environ, "SCHEMARAG_SERVE_REFRESH_SECONDS": "0.2", **(env or {})}
    fh = log.open("wb")
    proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=full_env)
    server = Server(f"http://127.0.0.1:{port}", proc, artifacts, log)
    deadline = time.monotonic() + 300  # the machine may be busy: model load + imports
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited {proc.returncode}: {log.read_text()}")
        try:
            if httpx.get(f"{server.base}/readyz", timeout=5).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    server.stop()
    raise AssertionError(f"server not ready: {log.read_text()}")


def key_env() -> dict[str, str]:
    return {"SCHEMARAG_SERVE_API_KEYS": ",".join(f"{t or ''}=sha256:{digest(k)}" for t, k in KEYS.items())}
