"""A real ``schemarag serve`` process on a free loopback port, over the tiny real indexes.

The server runs as a child process exactly as a user starts it (``python -m schemarag serve``);
tests talk to it over HTTP with httpx and over MCP with the SDK's own client.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from server_support import Server, key_env, start_server


@pytest.fixture(scope="session")
def serve_artifacts(tiny: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the tiny artifacts (the hot-swap test publishes into it)."""
    dest = tmp_path_factory.mktemp("serve") / "artifacts"
    shutil.copytree(tiny[1], dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def keyed(serve_artifacts: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server with keys for tenants acme and globex and for the default namespace."""
    log = tmp_path_factory.mktemp("logs") / "keyed.log"
    server = start_server(serve_artifacts, log, key_env())
    yield server
    assert server.stop() == 0, log.read_text()


@pytest.fixture(scope="session")
def unkeyed(serve_artifacts: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The server without keys: open, loopback only, default namespace."""
    log = tmp_path_factory.mktemp("logs") / "unkeyed.log"
    server = start_server(
        serve_artifacts,
        log,
        {"SCHEMARAG_SERVE_MAX_BODY_BYTES": "4096", "SCHEMARAG_SERVE_HEADER_TIMEOUT": "2"},
    )
    yield server
    assert server.stop() == 0, log.read_text()
