"""``published_index`` on another machine than ``source_snapshot`` (Celery, Kubernetes steps):
the snapshot's folder and "already built" are re-read from this machine's own copy, and a version
skipped upstream as built is fetched from the object store (``file://`` here: the same
``pyarrow.fs`` code as ``s3://``, which ``make check-distributed`` runs on moto)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from schemarag.assets.lib.inputs import read_sources
from schemarag.assets.lib.worker_copy import for_this_machine
from schemarag.runtime.core.errors import ArtifactError

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "schemas"
DB = "ecommerce"


def _snapshot(machine: Path, existing: bool = False):
    return replace(read_sources(SAMPLES, DB, {"name": "test-model"}, machine), existing=existing)


def test_on_the_same_machine_the_snapshot_is_unchanged(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "a")
    assert for_this_machine(snap, tmp_path / "a", None, DB) is snap


def test_on_another_machine_its_own_copy_is_used(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "a")
    here = for_this_machine(snap, tmp_path / "b", None, DB)
    assert here.root == tmp_path / "b" / DB and not here.existing and here.key == snap.key


def test_a_version_built_elsewhere_is_fetched_from_the_store(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "a", existing=True)
    version = tmp_path / "bucket" / DB / snap.key
    version.mkdir(parents=True)
    (version / "chunks.parquet").write_bytes(b"chunks")
    (version / "lance" / "chunks.lance").mkdir(parents=True)
    (version / "lance" / "chunks.lance" / "data.bin").write_bytes(b"rows")
    (version / "manifest.json").write_text("{}")
    here = for_this_machine(snap, tmp_path / "b", f"file://{tmp_path / 'bucket'}", DB)
    assert here.existing and (here.root / snap.key / "chunks.parquet").read_bytes() == b"chunks"
    assert (here.root / snap.key / "lance" / "chunks.lance" / "data.bin").read_bytes() == b"rows"
    assert [p.name for p in here.root.iterdir()] == [snap.key]  # no staging folder left behind


def test_a_version_nowhere_to_be_found_is_one_clear_error(tmp_path: Path) -> None:
    snap = _snapshot(tmp_path / "a", existing=True)
    with pytest.raises(ArtifactError, match="need s3:// artifacts or a shared folder"):
        for_this_machine(snap, tmp_path / "b", None, DB)
    (tmp_path / "bucket").mkdir()
    with pytest.raises(ArtifactError, match="neither in this machine's copy nor complete at file://"):
        for_this_machine(snap, tmp_path / "b", f"file://{tmp_path / 'bucket'}", DB)
