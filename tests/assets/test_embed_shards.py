"""Schema groups of the embedding: who owns a text, when a database fans out, shards round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from schemarag.assets.chunk_embeddings import embed_chunks, embed_missing
from schemarag.assets.lib.cache_shards import pull_shards, push_shard
from schemarag.assets.lib.embed_shards import fanout_schemas, groups_for, split_partition_key
from schemarag.assets.lib.embedding_cache import EmbeddingCache, text_key
from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.core.embedding.embedder import Embedder


def _schema_file(tmp_path: Path, tables: dict[str, int]) -> Path:
    path = tmp_path / "db.json"
    cols = lambda n: [{"name": f"c{i}", "type": "INT"} for i in range(n)]  # noqa: E731
    path.write_text(
        json.dumps({"name": "db", "tables": [{"name": t, "columns": cols(n)} for t, n in tables.items()]})
    )
    return path


def test_groups_follow_the_schema_prefix_and_default_to_the_first_schema() -> None:
    assert groups_for(["b.x", "a.y", None, "plain", "c.z"], ["a", "b", "c"]) == [1, 0, 0, 0, 2]


def test_a_database_fans_out_with_two_schemas_and_enough_columns(tmp_path: Path) -> None:
    two = _schema_file(tmp_path, {"sales.orders": 30, "hr.staff": 20})
    assert fanout_schemas(two, 50) == ["hr", "sales"]
    assert fanout_schemas(two, 51) == []  # too small
    assert fanout_schemas(two, 0) == []  # fan-out switched off
    one = _schema_file(tmp_path, {"sales.orders": 30, "sales.items": 30})
    assert fanout_schemas(one, 1) == []  # one schema: nothing to split
    (tmp_path / "db.json").write_text("not json")
    assert fanout_schemas(tmp_path / "db.json", 1) == []  # the database's own run reports it


def test_partition_keys_name_database_and_schema() -> None:
    assert split_partition_key("wh/sales") == ("wh", "sales")
    with pytest.raises(ValueError, match="'<database>/<schema>'"):
        split_partition_key("wh")


def _chunks() -> list[Chunk]:
    rows = [("sales.orders", "Orders placed online"), ("hr.staff", "Employees"), (None, "The warehouse")]
    rows += [(f"sales.t{i}", f"sales table {i} " + "word " * i) for i in range(20)]
    rows += [(f"hr.t{i}", f"hr table {i} " + "note " * i) for i in range(20)]
    rows += [("hr.copy", "Orders placed online")]  # the same text as in sales: owned by sales
    return [
        Chunk(
            chunk_id=str(i), database="wh", table=t, chunk_type="table", column=None, text=x, title=t or "wh"
        )
        for i, (t, x) in enumerate(rows)
    ]


def test_one_build_and_per_schema_partitions_compute_the_same_vectors() -> None:
    """What makes a fanned-out artifact byte-identical: each group's texts batched on their own."""
    embedder = Embedder.get()
    chunks = _chunks()
    groups = groups_for([c.table for c in chunks], ["hr", "sales"])
    whole = embed_chunks(chunks, embedder, None, groups=groups)
    texts = [f"{c.title}\n{c.text}" for c in chunks]
    keys: list[str | None] = [text_key(t) for t in texts]
    first = {k: i for i, k in reversed(list(enumerate(keys)))}
    by_key: dict[str, np.ndarray] = {}
    for g in (0, 1):  # what the two schema partitions embed
        mine = sorted(i for i in first.values() if groups[i] == g)
        by_key |= embed_missing(texts, keys, mine, embedder, groups)  # type: ignore[arg-type]
    assert np.array_equal(np.stack([by_key[k] for k in keys]), whole.vectors)  # type: ignore[index]


def test_shards_carry_vectors_to_another_cache(tmp_path: Path) -> None:
    embedder = Embedder.get()
    uri = f"file://{tmp_path / 'bucket'}"
    vectors = {text_key(t): embedder.passage_embed([t])[0] for t in ("orders", "customers")}
    target = push_shard(uri, None, "wh", "sales", embedder, vectors)
    assert target and target.endswith("/_/wh/sales.npz")
    assert push_shard(None, None, "wh", "sales", embedder, vectors) is None  # local artifacts: no shard
    cache = EmbeddingCache.for_embedder(tmp_path / "other-machine", embedder)
    try:
        assert pull_shards(uri, None, "wh", embedder, cache) == 2
        assert pull_shards(uri, None, "wh", embedder, cache) == 0  # already there
        got = cache.get_many(list(vectors))
    finally:
        cache.close()
    assert all(np.array_equal(got[k], v) for k, v in vectors.items())
    assert pull_shards(uri, "acme", "wh", embedder, cache) == 0  # another tenant's shards: none


def test_partitions_may_run_with_fewer_onnx_threads_and_get_the_same_vectors() -> None:
    """Side-by-side partitions run one ONNX thread each (schema_fanout): no vector may change."""
    from schemarag.runtime.core.embedding.embedder import ModelSpec

    texts = [f"column c{i}\n" + "word " * (i % 37) for i in range(48)]
    one = Embedder.get(ModelSpec(threads=1))
    assert one.checksum == Embedder.get().checksum
    assert np.array_equal(one.passage_embed(texts), Embedder.get().passage_embed(texts))
