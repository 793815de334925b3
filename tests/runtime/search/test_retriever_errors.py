"""Opening fails loudly: corruption, format mismatch, missing artifacts, unsafe names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from retrieval_support import copy_database_artifacts, current_folder

from schemarag.runtime.artifact.format import CURRENT, FORMAT_VERSION
from schemarag.runtime.core.errors import (
    ArtifactError,
    ArtifactNotFoundError,
    ChecksumMismatchError,
    InvalidNameError,
    ManifestMismatchError,
    SchemaragError,
)
from schemarag.runtime.search.retriever import Retriever


@pytest.fixture
def private(built_artifacts: Path, tmp_path: Path) -> Path:
    """A private, mutable copy of the ecommerce artifacts."""
    return copy_database_artifacts(built_artifacts, "ecommerce", tmp_path / "artifacts")


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["embeddings.npy", "bm25_data.npy", "chunks.parquet", "vocab.json"])
def test_flipped_byte_is_a_checksum_mismatch_naming_the_file(private: Path, name: str) -> None:
    _flip_last_byte(current_folder(private, "ecommerce") / name)
    with pytest.raises(ChecksumMismatchError) as info:
        Retriever.open("ecommerce", artifacts=private)
    assert name in str(info.value)
    assert "rebuild" in str(info.value)


def test_truncated_file_is_a_checksum_mismatch(private: Path) -> None:
    path = current_folder(private, "ecommerce") / "embeddings.npy"
    path.write_bytes(path.read_bytes()[:-16])
    with pytest.raises(ChecksumMismatchError, match=r"embeddings\.npy"):
        Retriever.open("ecommerce", artifacts=private)


def test_missing_listed_file_is_detected(private: Path) -> None:
    (current_folder(private, "ecommerce") / "typo_keys.npy").unlink()
    with pytest.raises(ArtifactError, match=r"typo_keys\.npy"):
        Retriever.open("ecommerce", artifacts=private)


def test_format_version_mismatch_names_both_values(private: Path) -> None:
    manifest_path = current_folder(private, "ecommerce") / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["format_version"] = 999
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(ManifestMismatchError) as info:
        Retriever.open("ecommerce", artifacts=private)
    msg = str(info.value)
    assert "999" in msg and str(FORMAT_VERSION) in msg
    assert "format_version" in msg


def test_unreadable_manifest_is_an_artifact_error(private: Path) -> None:
    (current_folder(private, "ecommerce") / "manifest.json").write_text("{not json")
    with pytest.raises(ArtifactError, match="manifest"):
        Retriever.open("ecommerce", artifacts=private)


def test_missing_artifact_says_to_run_build(tmp_path: Path) -> None:
    with pytest.raises(ArtifactNotFoundError) as info:
        Retriever.open("ecommerce", artifacts=tmp_path / "empty")
    msg = str(info.value)
    assert "schemarag build" in msg and "ecommerce" in msg
    assert isinstance(info.value, SchemaragError)


def test_missing_artifact_for_tenant_names_the_tenant(tmp_path: Path) -> None:
    with pytest.raises(ArtifactNotFoundError, match="acme"):
        Retriever.open("ecommerce", artifacts=tmp_path, tenant="acme")


def test_current_pointing_at_missing_version_is_an_artifact_error(private: Path) -> None:
    (private / "ecommerce" / CURRENT).write_text("0123456789abcdef\n")
    with pytest.raises(ArtifactError):
        Retriever.open("ecommerce", artifacts=private)


@pytest.mark.parametrize("db", ["a/b", "..", "../ecommerce", "eco\x00mmerce", "/etc", "a\\b", "", "_cache"])
def test_unsafe_database_names_are_rejected(built_artifacts: Path, db: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        Retriever.open(db, artifacts=built_artifacts)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("tenant", ["a/b", "..", "../..", "acme\x00", "_tenants"])
def test_unsafe_tenant_names_are_rejected(built_artifacts: Path, tenant: str) -> None:
    with pytest.raises(InvalidNameError):
        Retriever.open("ecommerce", artifacts=built_artifacts, tenant=tenant)
