"""schemarag.assets.published_index: a rebuild that reuses cached pieces (doc chunks, schema
chunks, tables.parquet) publishes the same bytes as a cold build of the same inputs, and the
post-write check reads the published files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.published_index import CHECKS, check_published
from schemarag.pipelines.build import build_databases
from schemarag.runtime.artifact.format import LANCE_DIR, LANCE_TABLE, MANIFEST
from schemarag.runtime.core.errors import ChecksumMismatchError
from schemarag.runtime.core.paths import embedding_cache_dir

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "data" / "schemas"
# What legitimately differs between two builds of the same inputs: when and by which release.
# LanceDB's own files carry fresh UUIDs per write, so lance/ is compared by its rows.
VOLATILE = ("built_at", "schemarag_version")


def _files(version: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(version.rglob("*")):
        rel = p.relative_to(version).as_posix()
        if p.is_file() and rel != MANIFEST and not rel.startswith("lance/"):
            out[rel] = p.read_bytes()
    return out


def _manifest(version: Path) -> dict:
    m = json.loads((version / MANIFEST).read_text(encoding="utf-8"))
    for k in VOLATILE:
        m.pop(k)
    m["files"] = {k: v for k, v in m["files"].items() if not k.startswith("lance/")}
    return m


def _parsed(instance: dg.DagsterInstance) -> int:
    event = instance.get_latest_materialization_event(dg.AssetKey("doc_chunks"))
    assert event is not None and event.asset_materialization is not None
    return int(event.asset_materialization.metadata["doc_files_parsed"].value)


def test_rebuild_from_cached_pieces_equals_a_cold_build(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE_DATA, data)
    warm, cold = tmp_path / "warm", tmp_path / "cold"
    instance = dg.DagsterInstance.ephemeral()

    (first,) = build_databases(["ecommerce"], data, warm, instance=instance)
    assert first.ok, first.error
    assert _parsed(instance) == 4  # every doc file of ecommerce, the cache being empty

    doc = data / "ecommerce" / "docs" / "orders.md"
    doc.write_text(
        doc.read_text(encoding="utf-8") + "\nRefunded orders keep their total.\n", encoding="utf-8"
    )
    (edited,) = build_databases(["ecommerce"], data, warm, instance=instance)
    assert edited.ok and edited.built and edited.key != first.key
    assert _parsed(instance) == 2  # orders.md and _index.md (never cached)

    # the same inputs, built with no chunk or tables cache (the embedding cache only saves time)
    shutil.copytree(embedding_cache_dir(warm), embedding_cache_dir(cold))
    (fresh,) = build_databases(["ecommerce"], data, cold, instance=dg.DagsterInstance.ephemeral())
    assert fresh.ok and fresh.key == edited.key
    a = warm / "ecommerce" / edited.key
    b = cold / "ecommerce" / fresh.key
    assert _files(a) == _files(b)
    assert _manifest(a) == _manifest(b)
    assert _lance_rows(a) == _lance_rows(b)


def _lance_rows(version: Path) -> list[dict]:
    """The LanceDB copy's rows (its files carry fresh UUIDs per write, its contents must not)."""
    import lancedb

    table = lancedb.connect(str(version / LANCE_DIR)).open_table(LANCE_TABLE)
    return table.to_arrow().sort_by("chunk_idx").to_pylist()


@pytest.fixture
def version_copy(built_artifacts: Path, tmp_path: Path) -> Path:
    root = built_artifacts / "ecommerce"
    dest = tmp_path / "version"
    shutil.copytree(root / read_current(root), dest)
    return dest


def test_check_published_passes_a_good_version(version_copy: Path) -> None:
    results, info = check_published(version_copy)
    assert set(results) == {name for name, _ in CHECKS}
    assert all(passed for passed, _ in results.values()), results
    assert info.counts.chunks > 0


def test_check_published_compares_row_counts_with_the_manifest(version_copy: Path) -> None:
    manifest = json.loads((version_copy / MANIFEST).read_text(encoding="utf-8"))
    manifest["counts"]["chunks"] += 1
    (version_copy / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    results, _ = check_published(version_copy)
    passed, detail = results["vector_count_matches"]
    assert not passed
    assert "manifest" in detail


def test_check_published_verifies_checksums(version_copy: Path) -> None:
    target = version_copy / "bm25_data.npy"
    raw = bytearray(target.read_bytes())
    raw[-1] ^= 0xFF
    target.write_bytes(bytes(raw))
    with pytest.raises(ChecksumMismatchError, match=r"bm25_data\.npy: sha256"):
        check_published(version_copy)
