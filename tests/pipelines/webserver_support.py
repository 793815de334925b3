"""Starting a real Dagster webserver process (``dagster-webserver`` or ``schemarag ui``) on a free port.

Neither program can bind port 0: ``dagster-webserver -p 0`` (and ``dg dev``, which leaves the port
out when it is 0) falls back to port 3000, or to a port that Dagster probes and releases itself.
So the port is probed here, and the start is retried on a new port when the server reports that
the port was taken before it could bind it (another process may grab a probed port first). The
server is trusted to be ours only once uvicorn's own line says it bound that port
(``DAGSTER_WEBSERVER_UVICORN_LOG_LEVEL=info``), so a different server that took the port is never
mistaken for it.
"""

from __future__ import annotations

import re
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

HOST = "127.0.0.1"
ATTEMPTS = 3
# Environment the launched process must get: uvicorn then prints its bind line (and bind errors).
ENV = {"DAGSTER_WEBSERVER_UVICORN_LOG_LEVEL": "info", "DAGSTER_DISABLE_TELEMETRY": "yes"}
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")
_BIND_FAILED = re.compile(rb"error while attempting to bind on address .*address already in use")


def _probe_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _log_since(log: Path, offset: int) -> bytes:
    with log.open("rb") as fh:
        fh.seek(offset)
        return _ANSI.sub(b"", fh.read())


def start_webserver(
    launch: Callable[[int], subprocess.Popen],
    log: Path,
    what: str,
    timeout: float,
    poll: float,
    stop: Callable[[subprocess.Popen], None],
) -> tuple[subprocess.Popen, str]:
    """``launch(port)`` (writing its output to ``log``, with :data:`ENV` in its environment) until
    one attempt binds; then wait for ``/server_info``. Returns ``(process, base URL)``. A start
    that lost its port to another process is retried on a new port, :data:`ATTEMPTS` times in all;
    any other exit, or ``timeout`` seconds per attempt, fails the test (with the log's tail) after
    ``stop(process)``."""
    for _ in range(ATTEMPTS):
        offset = log.stat().st_size if log.exists() else 0
        port = _probe_port()
        proc = launch(port)
        bound = re.compile(rb"Uvicorn running on http://%s:%d\b" % (re.escape(HOST.encode()), port))
        base = f"http://{HOST}:{port}"
        deadline = time.monotonic() + timeout
        try:
            while not bound.search(_log_since(log, offset)):
                if proc.poll() is not None:
                    if _BIND_FAILED.search(_log_since(log, offset)):
                        break  # the probed port was taken before the server bound it: a new port
                    pytest.fail(f"{what} exited {proc.returncode}: {_tail(log)}")
                if time.monotonic() > deadline:
                    pytest.fail(f"{what} did not bind port {port} in {timeout}s: {_tail(log)}")
                time.sleep(poll)
            else:
                wait_for_webserver(proc, base, deadline - time.monotonic(), what, lambda: _tail(log), poll)
                return proc, base
        except BaseException:
            stop(proc)
            raise
        stop(proc)  # already exited; stop() also reaps whatever it left behind
    pytest.fail(f"{what}: the probed port was taken before it bound, {ATTEMPTS} times: {_tail(log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:]


def wait_for_webserver(
    proc: subprocess.Popen, base: str, timeout: float, what: str, log_tail: Callable[[], str], poll: float
) -> None:
    """Return once ``{base}/server_info`` answers 200; fail the test, with ``log_tail()``, if
    ``proc`` exits first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited {proc.returncode}: {log_tail()}")
        try:
            with urllib.request.urlopen(f"{base}/server_info", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not up after {timeout}s: {log_tail()}")
        time.sleep(poll)
