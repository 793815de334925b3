"""End to end: the real asset graph (fastembed, Parquet, LanceDB) into tmp_path, read by runtime."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from schemarag.assets.lib.artifact_store import read_current
from schemarag.runtime.artifact.format import CURRENT, MANIFEST
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.paths import docs_dir, embedding_cache_dir
from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.search.retriever import Retriever

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DATA = REPO / "data" / "schemas"

SAMPLES = ("ecommerce", "b2b_saas")


def _cache_rows(artifacts: Path) -> int:
    (db_file,) = embedding_cache_dir(artifacts).glob("*.sqlite")
    with closing(sqlite3.connect(db_file)) as conn:
        return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]


@pytest.mark.parametrize("db", SAMPLES)
def test_built_artifact_opens_with_consistent_counts(built_artifacts: Path, db: str) -> None:
    root = built_artifacts / db
    key = read_current(root)
    assert key and (root / key / MANIFEST).is_file()
    manifest = json.loads((root / key / MANIFEST).read_text())
    schema = load_schema(SAMPLE_DATA / f"{db}.json")
    doc_names = sorted(p.name for p in docs_dir(SAMPLE_DATA, db).glob("*.md"))

    assert manifest["key"] == key and manifest["database"] == db
    assert manifest["model"] == Embedder.get().identity
    assert sorted(manifest["inputs"]["docs"]) == doc_names
    counts = manifest["counts"]
    assert counts["tables"] == len(schema.tables)
    assert counts["vectors"] == counts["chunks"] == sum(counts["by_type"].values())
    assert {"table", "column", "database"} <= set(counts["by_type"])

    art = IndexArtifact.open(root / key, expected_model=Embedder.get().identity)
    assert art.n_chunks == counts["chunks"]
    assert art.embeddings.shape == (counts["chunks"], manifest["model"]["dimension"])
    assert np.allclose(np.linalg.norm(np.asarray(art.embeddings), axis=1), 1.0, atol=1e-4)
    assert art.table_names == [t.name for t in schema.tables]
    assert pq.read_metadata(root / key / "chunks.parquet").num_rows == counts["chunks"]

    import lancedb

    lance = lancedb.connect(str(root / key / "lance")).open_table("chunks")
    assert lance.count_rows() == counts["chunks"]

    retriever = Retriever.open(db, artifacts=built_artifacts)
    assert retriever.artifact.key == key
    top = retriever.search(f"{schema.tables[0].name} {schema.tables[0].columns[0].name}")
    assert top.chunks, "a question naming a table and column retrieves something"


def test_rematerialize_is_noop_and_edit_reembeds_only_that_table(data_copy: Path, build, append_note) -> None:
    artifacts: Path = build.artifacts
    (first,) = build(data_copy)
    assert first.ok and first.built and first.embedded == first.chunks > 0 and first.cache_hits == 0
    root = artifacts / "ecommerce"
    history = (root / "HISTORY").read_text()
    cached = _cache_rows(artifacts)
    assert cached == first.chunks

    (again,) = build(data_copy)
    assert again.ok and not again.built
    assert again.key == first.key and again.embedded == 0
    assert (root / "HISTORY").read_text() == history, "a no-op does not republish"
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == [first.key]

    append_note(data_copy, "ecommerce", "orders", "- Orders flagged by the fraud model carry status 'held'.")
    (edited,) = build(data_copy)
    assert edited.ok and edited.built and edited.key != first.key
    assert read_current(root) == edited.key
    assert 0 < edited.embedded < edited.chunks
    assert edited.cache_hits == edited.chunks - edited.embedded
    assert _cache_rows(artifacts) == cached + edited.embedded

    new = IndexArtifact.open(root / edited.key)
    old = IndexArtifact.open(root / first.key)
    by_id = {c.chunk_id: c for c in new.all_chunks()}
    assert {by_id[i].table for i in edited.embedded_chunk_ids} == {"orders"}
    old_vec = {c.chunk_id: old.embeddings[i] for i, c in enumerate(old.all_chunks())}
    for i, c in enumerate(new.all_chunks()):
        if c.table != "orders":
            assert c.chunk_id in old_vec and np.array_equal(new.embeddings[i], old_vec[c.chunk_id])


def test_retention_keeps_three_versions_and_never_current(data_copy: Path, build, append_note) -> None:
    from schemarag.assets.lib.artifact_store import prune

    root = build.artifacts / "ecommerce"
    keys = []
    for i in range(4):
        if i:
            append_note(data_copy, "ecommerce", "users", f"- Retention test revision {i}.")
        (report,) = build(data_copy)
        assert report.ok and report.built
        keys.append(report.key)
    versions = sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file())
    assert versions == sorted(keys[1:]), "the oldest of four versions is removed"
    assert read_current(root) == keys[-1]

    # CURRENT pointing at an older version (a rollback) protects it even beyond `keep`.
    (root / CURRENT).write_text(keys[1] + "\n")
    removed = prune(root, keep=1)
    assert removed == [keys[2]]
    assert sorted(p.name for p in root.iterdir() if (p / MANIFEST).is_file()) == sorted([keys[1], keys[3]])
    IndexArtifact.open(root / read_current(root))
