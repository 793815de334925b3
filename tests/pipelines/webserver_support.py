"""Waiting for a real Dagster webserver process (``dagster-webserver`` or ``schemarag ui``)."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest


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
