"""Column tiers (``column_vectors``): what column chunks are embedded with, in the key and the
manifest, and refused by the reader when unknown."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import dagster as dg
import numpy as np
import pytest

from schemarag.assets.lib.chunking import ChunkingConfig, chunk_database
from schemarag.assets.lib.embed_plan import plan_for, short_column_text
from schemarag.assets.lib.inputs import build_params, built_key, read_sources
from schemarag.assets.resources import EmbeddingModel
from schemarag.pipelines.build import build_databases
from schemarag.runtime.artifact.format import CURRENT, MANIFEST
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.errors import ArtifactError, ConfigError
from schemarag.runtime.core.schema import Database
from schemarag.runtime.search.retriever import Retriever

SCHEMA = {
    "name": "shop",
    "tables": [
        {
            "name": "customers",
            "description": "People who buy from the shop.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True},
                {"name": "loyalty_tier", "type": "TEXT", "description": "Bronze, silver or gold tier."},
            ],
        },
        {
            "name": "orders",
            "description": "Purchases placed by customers.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True},
                {
                    "name": "customer_id",
                    "type": "INTEGER",
                    "foreign_key": {"table": "customers", "column": "id"},
                },
                {"name": "total_amount", "type": "NUMERIC(12,2)", "description": "Order total in euros."},
            ],
        },
    ],
}
DOC = (
    "# Table: orders\n\n## Purpose\nPurchases.\n\n## Columns\n### total_amount\n"
    "- **Type:** NUMERIC(12,2)\n- **Description:** Order total in euros, taxes included.\n"
    "- **Nullable:** yes\n"
)


def _plan(tier: str, threshold: int = 20_000) -> tuple[list, list[str | None]]:
    db = Database.model_validate(SCHEMA)
    chunks = chunk_database(db, {"orders.md": DOC}).chunks
    params = build_params(ChunkingConfig(embed_all_columns_up_to=threshold), db, tier)
    plan = plan_for(chunks, db, params)
    return chunks, plan if plan is not None else [f"{c.title}\n{c.text}" for c in chunks]


def test_short_tier_embeds_name_type_and_description_only_and_leaves_other_chunks_alone() -> None:
    full_chunks, full = _plan("full")
    chunks, short = _plan("short")
    assert [c.chunk_id for c in chunks] == [c.chunk_id for c in full_chunks]
    by_col = {c.column: t for c, t in zip(chunks, short, strict=True) if c.chunk_type == "column"}
    assert by_col["total_amount"] == "total amount (NUMERIC(12,2)): Order total in euros, taxes included."
    assert by_col["customer_id"] == "customer id (INTEGER)"  # the References line restates the FK
    for c, f, s in zip(chunks, full, short, strict=True):
        if c.chunk_type != "column":
            assert s == f
        else:
            assert s is not None and len(s) < len(f)


def test_bm25_tier_gives_column_chunks_no_vector_at_any_size() -> None:
    for threshold in (20_000, 3):  # 3: a scaled database
        chunks, plan = _plan("bm25", threshold)
        assert all((t is None) == (c.chunk_type == "column") for c, t in zip(chunks, plan, strict=True))


def test_scaled_short_tier_still_skips_undocumented_columns() -> None:
    chunks, plan = _plan("short", threshold=3)
    cols = {c.column: t for c, t in zip(chunks, plan, strict=True) if c.chunk_type == "column"}
    assert cols["id"] is None and cols["loyalty_tier"] == "loyalty tier (TEXT): Bronze, silver or gold tier."


def test_short_text_is_bounded() -> None:
    db = Database.model_validate(SCHEMA)
    chunk = next(c for c in chunk_database(db, {}).chunks if c.column == "loyalty_tier")
    long = dataclasses.replace(chunk, text=chunk.text + "\n" + "very long comment " * 100)
    assert len(short_column_text(long, None)) == 300


def test_a_tier_is_part_of_the_key_and_the_default_key_is_unchanged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "shop.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    model = {"name": "m", "dimension": 4}
    keys = {
        t: read_sources(data, "shop", model, tmp_path / "a", column_vectors=t)
        for t in ("full", "short", "bm25")
    }
    assert len({s.key for s in keys.values()}) == 3
    assert "column_vectors" not in keys["full"].params and keys["short"].params["column_vectors"] == "short"
    assert read_sources(data, "shop", model, tmp_path / "a").key == keys["full"].key  # None = full
    with pytest.raises(ConfigError, match="use one of full, short, bm25"):
        read_sources(data, "shop", model, tmp_path / "a", column_vectors="static")


def test_manifest_records_the_tier_and_the_reader_refuses_an_unknown_one(tmp_path: Path) -> None:
    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    data.mkdir()
    (data / "shop.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    instance = dg.DagsterInstance.ephemeral()
    keys = {}
    for tier in ("full", "bm25"):
        (report,) = build_databases(
            ["shop"], data, artifacts, embedding_model=EmbeddingModel(column_vectors=tier), instance=instance
        )
        assert report.ok, report.error
        keys[tier] = report.key
        manifest = json.loads((artifacts / "shop" / report.key / MANIFEST).read_text(encoding="utf-8"))
        assert manifest["column_vectors"] == tier
        art = IndexArtifact.open(artifacts / "shop" / report.key)
        is_column = np.array([c.chunk_type == "column" for c in art.all_chunks()])
        zero = ~np.any(np.asarray(art.embeddings) != 0, axis=1)
        assert (zero == is_column).all() if tier == "bm25" else not zero.any()
    assert keys["full"] != keys["bm25"]
    model = EmbeddingModel(column_vectors="bm25").embedder().identity
    assert built_key(data, "shop", model, artifacts, column_vectors="bm25") == (
        keys["bm25"],
        artifacts / "shop",
    )
    hits = Retriever.open("shop", artifacts=artifacts).search("loyalty tier of customers", table_budget=1)
    assert hits.chunks and hits.chunks[0].chunk.table == "customers"  # BM25 + the table's vector

    folder = artifacts / "shop" / keys["bm25"]
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    manifest["column_vectors"] = "static"
    (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ArtifactError, match="column vector tier 'static' is not one this runtime reads"):
        IndexArtifact.open(folder)
    assert (artifacts / "shop" / CURRENT).read_text(encoding="utf-8").strip() == keys["bm25"]


def test_build_refuses_an_unknown_tier_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = [sys.executable, "-m", "schemarag", "build", "--data", str(tmp_path), "--column-vectors", "static"]
    out = subprocess.run(cli, capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "invalid choice: 'static'" in out.stderr
    monkeypatch.setenv("SCHEMARAG_COLUMN_VECTORS", "shrot")
    with pytest.raises(
        ConfigError, match=r"\$SCHEMARAG_COLUMN_VECTORS 'shrot': use one of full, short, bm25"
    ):
        EmbeddingModel().column_tier()
    monkeypatch.setenv("SCHEMARAG_COLUMN_VECTORS", "short")
    assert (
        EmbeddingModel().column_tier() == "short"
        and EmbeddingModel(column_vectors="bm25").column_tier() == "bm25"
    )
