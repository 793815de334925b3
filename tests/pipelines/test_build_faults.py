"""Crash safety and corruption: a killed publish leaves CURRENT on the previous complete version,
a damaged file is caught by its checksum, a broken schema fails only its own database."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from schemarag.assets.lib.artifact_store import STAGING_PREFIX, prune, read_current
from schemarag.runtime.artifact.format import MANIFEST
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.errors import ChecksumMismatchError
from schemarag.runtime.search.retriever import Retriever

REPO = Path(__file__).resolve().parents[2]


def _cli_build(data: Path, artifacts: Path, fault: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "SCHEMARAG_FAULT_INJECT")}
    if fault:
        env["SCHEMARAG_FAULT_INJECT"] = fault
    cmd = [sys.executable, "-m", "schemarag.cli", "build", "--data", str(data), "--artifacts", str(artifacts)]
    return subprocess.run(
        [*cmd, "--db", "ecommerce"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("fault", ["before_rename", "before_current"])
def test_killed_publish_keeps_previous_version_current(
    data_copy: Path, build, append_note, fault: str
) -> None:
    (first,) = build(data_copy)
    assert first.ok
    root = build.artifacts / "ecommerce"
    append_note(data_copy, "ecommerce", "orders", "- A note that changes the key.")

    proc = _cli_build(data_copy, build.artifacts, fault=fault)
    assert proc.returncode == -signal.SIGKILL, proc.stderr

    assert read_current(root) == first.key
    art = IndexArtifact.open(root / first.key)
    assert art.key == first.key
    Retriever.clear_cache()
    assert Retriever.open("ecommerce", artifacts=build.artifacts).artifact.key == first.key
    complete = sorted(
        p.name for p in root.iterdir() if (p / MANIFEST).is_file() and not p.name.startswith(STAGING_PREFIX)
    )
    if fault == "before_rename":
        assert complete == [first.key], "an unfinished version never carries its final name"
        assert any(p.name.startswith(STAGING_PREFIX) for p in root.iterdir())
    else:
        assert len(complete) == 2, "the new version is complete but not yet published"

    proc = _cli_build(data_copy, build.artifacts)
    assert proc.returncode == 0, proc.stderr
    new_key = read_current(root)
    assert new_key != first.key
    IndexArtifact.open(root / new_key)
    Retriever.clear_cache()
    # the killed build's staging folder is unlocked (its writer is dead): the next build swept it
    assert not [p for p in root.iterdir() if p.name.startswith(STAGING_PREFIX)]
    assert prune(root) == []
    assert read_current(root) == new_key


@pytest.fixture
def artifact_copy(built_artifacts: Path, tmp_path: Path) -> Path:
    """A private copy of the session's ecommerce artifact (which is read-only)."""
    root = built_artifacts / "ecommerce"
    dest = tmp_path / "ecommerce"
    shutil.copytree(root / read_current(root), dest)
    return dest


def test_flipped_byte_is_caught_by_checksum(artifact_copy: Path) -> None:
    target = artifact_copy / "embeddings.npy"
    raw = bytearray(target.read_bytes())
    raw[-3] ^= 0xFF  # same size: only the SHA-256 can notice
    target.write_bytes(bytes(raw))
    with pytest.raises(ChecksumMismatchError, match=r"embeddings\.npy: sha256 .* corrupted, rebuild"):
        IndexArtifact.open(artifact_copy)


def test_truncated_and_missing_files_are_named(artifact_copy: Path) -> None:
    chunks = artifact_copy / "chunks.parquet"
    chunks.write_bytes(chunks.read_bytes()[:-10])
    with pytest.raises(ChecksumMismatchError, match=r"chunks\.parquet: size \d+ bytes, manifest says"):
        IndexArtifact.open(artifact_copy, verify=False)
    (artifact_copy / "vocab.json").unlink()
    manifest = json.loads((artifact_copy / MANIFEST).read_text())
    manifest["files"]["chunks.parquet"]["bytes"] = chunks.stat().st_size
    (artifact_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ChecksumMismatchError, match=r"vocab\.json: missing"):
        IndexArtifact.open(artifact_copy, verify=False)


def test_corrupted_current_version_fails_retriever_clearly(built_artifacts: Path, tmp_path: Path) -> None:
    dest = tmp_path / "artifacts"
    shutil.copytree(built_artifacts / "ecommerce", dest / "ecommerce")
    key = read_current(dest / "ecommerce")
    emb = dest / "ecommerce" / key / "bm25_data.npy"
    arr = np.load(emb)
    arr[0] += 1.0
    np.save(emb, arr)
    Retriever.clear_cache()
    with pytest.raises(ChecksumMismatchError, match=rf"{key}/bm25_data\.npy"):
        Retriever.open("ecommerce", artifacts=dest)
    Retriever.clear_cache()


def test_malformed_schema_fails_alone(data_copy: Path, build) -> None:
    (first,) = build(data_copy)
    assert first.ok
    root = build.artifacts / "ecommerce"
    # a second database with the same docs (embedding-cache hits keep this fast)
    shutil.copytree(data_copy / "ecommerce", data_copy / "shop")
    shop = json.loads((data_copy / "ecommerce.json").read_text())
    shop["name"] = "shop"
    (data_copy / "shop.json").write_text(json.dumps(shop))
    (data_copy / "ecommerce.json").write_text('{"name": "ecommerce", "tables": [')

    reports = {r.database: r for r in build(data_copy, ("ecommerce", "shop"))}
    assert not reports["ecommerce"].ok
    assert "ecommerce.json" in reports["ecommerce"].error
    assert "not valid UTF-8 JSON" in reports["ecommerce"].error
    assert reports["shop"].ok and reports["shop"].built
    assert read_current(build.artifacts / "shop") == reports["shop"].key
    assert read_current(root) == first.key, "the broken database's published index is untouched"
    IndexArtifact.open(root / first.key)
