"""The embedding plan: which chunks get vectors, with what text, and de-duplication."""

from __future__ import annotations

import numpy as np

from schemarag.assets.chunk_embeddings import embed_chunks, embed_text
from schemarag.assets.lib.chunking import ChunkingConfig, chunk_database
from schemarag.assets.lib.docs_writer import render_table_doc
from schemarag.assets.lib.embed_plan import EMBED_PLAN_VERSION, embed_texts, plan_for, unique_missing
from schemarag.assets.lib.inputs import build_params
from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.schema import Database


def _db(tables: int = 3) -> Database:
    return Database.model_validate(
        {
            "name": "wh",
            "tables": [
                {
                    "name": f"s.t{i}",
                    "description": f"Table number {i} of the warehouse.",
                    "columns": [
                        {"name": "id", "type": "BIGINT", "primary_key": True},
                        {
                            "name": "created_at",
                            "type": "TIMESTAMP",
                            "description": "When the row was created.",
                        },
                        {"name": f"metric_{i}", "type": "FLOAT"},
                    ],
                }
                for i in range(tables)
            ],
        }
    )


def test_small_databases_embed_every_chunk_as_before():
    db = _db()
    chunks = chunk_database(db, {}).chunks
    assert plan_for(chunks, db, build_params(ChunkingConfig())) is None  # 9 columns <= 20,000
    assert embed_texts(chunks, lambda t, c: False, scaled=False) == [embed_text(c) for c in chunks]


def test_scaled_plan_skips_undocumented_columns_and_drops_table_names():
    db = _db()
    chunks = chunk_database(db, {}).chunks
    plan = plan_for(chunks, db, build_params(ChunkingConfig(embed_all_columns_up_to=5), db))
    assert plan is not None
    by_kind = {(c.table, c.chunk_type, c.column): text for c, text in zip(chunks, plan, strict=True)}
    assert by_kind[("s.t0", "column", "id")] is None  # undocumented: BM25 only
    assert by_kind[("s.t0", "column", "metric_0")] is None
    created = {by_kind[(f"s.t{i}", "column", "created_at")] for i in range(3)}
    assert created == {"created_at\nWhen the row was created."}  # one text for three tables
    assert by_kind[("s.t1", "table", None)] == (  # names only: no types or key clauses
        "Table s.t1: Table number 1 of the warehouse.\nColumns: id, created at, metric 1"
    )


def test_only_scaled_databases_record_the_plan_in_their_key_params() -> None:
    db = _db()
    small = build_params(ChunkingConfig(), db)
    # keys unchanged: only what the schema itself asks for (join inference: it declares no FK)
    assert "embed_plan" not in small and "column_vectors" not in small
    assert {k: v for k, v in small.items() if k != "join_inference"} == build_params(ChunkingConfig())
    scaled = build_params(ChunkingConfig(embed_all_columns_up_to=5), db)
    assert scaled["embed_plan"] == EMBED_PLAN_VERSION


def test_a_version_1_plan_still_embeds_table_chunks_with_their_full_text() -> None:
    """An artifact built before names-only table texts (no ``embed_plan`` in its params) is
    reproduced exactly by a rebuild with its params."""
    db = _db()
    chunks = chunk_database(db, {}).chunks
    v1 = {
        k: v
        for k, v in build_params(ChunkingConfig(embed_all_columns_up_to=5), db).items()
        if k != "embed_plan"
    }
    plan = plan_for(chunks, db, v1)
    assert plan is not None
    tables = [(c, t) for c, t in zip(chunks, plan, strict=True) if c.chunk_type == "table"]
    assert tables and all(t == embed_text(c) for c, t in tables)


def test_unique_missing_and_zero_vectors_for_unplanned_chunks():
    assert unique_missing(["a", None, "b", "a", "c"], {"c": 1}) == [0, 2]
    db = _db()
    chunks = chunk_database(db, {}).chunks
    plan = plan_for(chunks, db, build_params(ChunkingConfig(embed_all_columns_up_to=5), db))
    embedder = Embedder.get()
    result = embed_chunks(chunks, embedder, None, plan=plan)
    embedded_texts = {t for t in plan if t is not None}
    assert len(result.embedded_chunk_ids) == len(embedded_texts)  # each distinct text once
    norms = np.linalg.norm(result.vectors, axis=1)
    for text, norm in zip(plan, norms, strict=True):
        assert (norm == 0.0) if text is None else abs(norm - 1.0) < 1e-3
    rows = [i for i, t in enumerate(plan) if t == "created_at\nWhen the row was created."]
    assert len(rows) == 3 and np.array_equal(result.vectors[rows[0]], result.vectors[rows[2]])


def test_generated_relationship_sections_get_no_vector_but_written_ones_do() -> None:
    db = Database.model_validate(
        {
            "name": "wh",
            "tables": [
                {"name": "s.users", "columns": [{"name": "id", "primary_key": True}, {"name": "email"}]},
                {
                    "name": "s.orders",
                    "columns": [
                        {"name": "id", "primary_key": True},
                        {"name": "user_id", "foreign_key": {"table": "s.users", "column": "id"}},
                    ],
                },
            ],
        }
    )
    docs = {f"{t.name}.md": render_table_doc(db, t) for t in db.tables}
    docs["s.users.md"] = docs["s.users.md"].replace(
        "## Relationships\n", "## Relationships\nEvery order belongs to the user who placed it.\n"
    )
    chunks = chunk_database(db, docs).chunks
    plan = plan_for(chunks, db, build_params(ChunkingConfig(embed_all_columns_up_to=1), db))
    assert plan is not None
    rel = {c.table: text for c, text in zip(chunks, plan, strict=True) if c.chunk_type == "relationship"}
    assert rel["s.orders"] is None  # exactly what the docs writer generates from the foreign key
    assert rel["s.users"] is not None and "placed it" in rel["s.users"]  # a person wrote this
