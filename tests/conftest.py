"""Shared fixtures: the sample databases built once per session through the real Dagster graph."""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tiny_support import ACME_CRM, GLOBEX_HR, SHOP, build, write_schema

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DATA = REPO / "data" / "schemas"


@pytest.fixture(scope="session")
def sample_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of data/schemas (tests may edit it)."""
    dest = tmp_path_factory.mktemp("data") / "schemas"
    shutil.copytree(SAMPLE_DATA, dest)
    return dest


@pytest.fixture(scope="session")
def built_artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Artifacts of ecommerce and b2b_saas, materialized with the real asset graph
    (real fastembed model, real Parquet, real LanceDB). Read-only for tests."""
    from schemarag.pipelines.build import build_databases

    artifacts = tmp_path_factory.mktemp("artifacts")
    reports = build_databases(["ecommerce", "b2b_saas"], SAMPLE_DATA, artifacts)
    failed = [r for r in reports if not r.ok]
    assert not failed, failed
    os.environ.setdefault("SCHEMARAG_REFRESH_SECONDS", "2")
    return artifacts


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): connections are refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def dropping_server() -> Iterator[int]:
    """A real TCP server that accepts, reads the startup packet, and hangs up."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.recv(1024)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1]
    stop.set()
    thread.join()
    srv.close()


SHOP_COPIES = ("shop_a", "shop_b", "shop_c")


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(data, artifacts)``: ``shop`` and three renamed copies in the default namespace, and
    ``globex_hr`` / ``acme_crm`` under their tenants (read-only for tests)."""
    base = tmp_path_factory.mktemp("tiny")
    data, artifacts = base / "schemas", base / "artifacts"
    names = [write_schema(data, SHOP), *(write_schema(data, SHOP, n) for n in SHOP_COPIES)]
    write_schema(data, GLOBEX_HR)
    write_schema(data, ACME_CRM)
    build([*names, "globex_hr", "acme_crm"], data, artifacts)
    return data, artifacts
