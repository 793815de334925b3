"""Fixtures for the runtime retriever tests: real artifacts and a tiny A->B->C database."""

from __future__ import annotations

from pathlib import Path

import pytest
from retrieval_support import build, write_chain_data

from schemarag.runtime.search.retriever import Retriever


@pytest.fixture(scope="session")
def chain_artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny chain database built with the real graph (read-only for tests)."""
    base = tmp_path_factory.mktemp("chain")
    data = write_chain_data(base / "schemas")
    build(["chain"], data, base / "artifacts")
    return base / "artifacts"


@pytest.fixture(scope="session")
def ecommerce(built_artifacts: Path) -> Retriever:
    return Retriever.open("ecommerce", artifacts=built_artifacts)


@pytest.fixture(scope="session")
def b2b(built_artifacts: Path) -> Retriever:
    return Retriever.open("b2b_saas", artifacts=built_artifacts)
