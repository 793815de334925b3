"""Shared fixtures: the sample databases built once per session through the real Dagster graph."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

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
    from pipelines.build import build_databases

    artifacts = tmp_path_factory.mktemp("artifacts")
    reports = build_databases(["ecommerce", "b2b_saas"], SAMPLE_DATA, artifacts)
    failed = [r for r in reports if not r.ok]
    assert not failed, failed
    os.environ.setdefault("SCHEMARAG_REFRESH_SECONDS", "2")
    return artifacts
