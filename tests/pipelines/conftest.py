"""Fixtures of the build tests: private copies of the sample data and a one-database build."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "data" / "schemas"


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    """A private, editable copy of data/schemas (both sample databases)."""
    dest = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA, dest)
    return dest


@pytest.fixture
def build(tmp_path: Path) -> Callable:
    """``build(data, dbs=("ecommerce",))`` -> reports; artifacts go to ``tmp_path/artifacts``.

    Each test gets its own artifacts folder (and so its own embedding cache), because these
    tests edit, corrupt or kill builds; read-only tests use the session ``built_artifacts``.
    """
    from schemarag.pipelines.build import build_databases

    artifacts = tmp_path / "artifacts"

    def _build(data: Path, dbs: tuple[str, ...] = ("ecommerce",)):
        return build_databases(list(dbs), data, artifacts)

    _build.artifacts = artifacts  # type: ignore[attr-defined]
    return _build


def _append_note(data: Path, db: str, table: str, text: str) -> None:
    path = data / db / "docs" / f"{table}.md"
    path.write_text(path.read_text(encoding="utf-8") + f"\n{text}\n", encoding="utf-8")


@pytest.fixture
def append_note() -> Callable[[Path, str, str, str], None]:
    """``append_note(data, db, table, text)``: append a line to the end (Notes) of one table's doc,
    which changes that table's chunks and the database key, and nothing else."""
    return _append_note
