"""The server-process helpers of the serve tests (a module of its own, not ``conftest``, so
test modules can import them by a name no other test folder uses)."""

from __future__ import annotations

import os
import re
import signal
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
