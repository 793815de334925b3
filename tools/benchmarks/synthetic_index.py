"""A synthetic index of any size, for latency benchmarks at scale (e.g. 100,000 chunks).

Texts are drawn from a fixed vocabulary of schema-like words, so BM25 posting lists have
realistic lengths; vectors are random unit vectors (seeded), because search cost does not
depend on their values. The model identity is the real one, so the real reader opens it and
the real query embedding runs against it. Not for quality measurements.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from schemarag.assets.lib.artifact_store import ArtifactPayload, publish, read_current, write_artifact
from schemarag.assets.lib.bm25 import compute_bm25
from schemarag.assets.lib.chunking import ChunkingConfig
from schemarag.assets.lib.inputs import build_params
from schemarag.runtime.artifact.chunk_model import Chunk, estimate_tokens, make_chunk_id
from schemarag.runtime.artifact.format import compute_key
from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.schema import Database

log = logging.getLogger(__name__)

WORDS = [
    "account",
    "customer",
    "order",
    "invoice",
    "payment",
    "refund",
    "subscription",
    "plan",
    "product",
    "price",
    "amount",
    "total",
    "status",
    "created",
    "updated",
    "deleted",
    "date",
    "month",
    "year",
    "region",
    "country",
    "city",
    "store",
    "warehouse",
    "inventory",
    "stock",
    "supplier",
    "shipment",
    "delivery",
    "carrier",
    "campaign",
    "email",
    "click",
    "session",
    "page",
    "event",
    "user",
    "role",
    "permission",
    "ticket",
    "agent",
    "priority",
    "comment",
    "rating",
    "review",
    "discount",
    "coupon",
    "tax",
    "currency",
    "balance",
    "ledger",
    "journal",
    "entry",
    "revenue",
    "cost",
    "margin",
    "forecast",
    "quota",
    "target",
    "lead",
    "opportunity",
    "stage",
    "contact",
    "company",
    "industry",
    "employee",
    "department",
    "salary",
    "manager",
    "team",
    "project",
    "task",
    "milestone",
    "budget",
    "expense",
    "vendor",
    "contract",
    "renewal",
    "churn",
    "usage",
    "metric",
    "feature",
]


def synthetic_questions(n: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"which {' '.join(rng.choice(WORDS, size=4))} in the last month" for _ in range(n)]


def build_synthetic_index(
    artifacts: Path, n_chunks: int, chunks_per_table: int = 50, seed: int = 13, db_name: str | None = None
) -> tuple[str, str]:
    """Write and publish ``<artifacts>/<db>/<key>``; returns ``(db name, key)``. Idempotent."""
    name = db_name or f"synthetic_{n_chunks}"
    embedder = Embedder.get()
    params = build_params(ChunkingConfig()) | {
        "synthetic": {"n": n_chunks, "per_table": chunks_per_table, "seed": seed}
    }
    key = compute_key(b"synthetic", {}, params, embedder.identity)
    root = artifacts / name
    if read_current(root) == key:
        return name, key
    rng = np.random.default_rng(seed)
    n_tables = max(1, n_chunks // chunks_per_table)
    tables = []
    for t in range(n_tables):
        cols = [{"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False}]
        cols += [{"name": f"{w}_{j}", "type": "TEXT"} for j, w in enumerate(rng.choice(WORDS, size=5))]
        if t > 0:
            cols.append(
                {
                    "name": "parent_id",
                    "type": "INTEGER",
                    "foreign_key": {"table": f"t{int(rng.integers(0, t)):05d}", "column": "id"},
                }
            )
        tables.append({"name": f"t{t:05d}", "columns": cols})
    db = Database.model_validate({"name": name, "dialect": "postgres", "tables": tables})
    chunks: list[Chunk] = []
    for i in range(n_chunks):
        table = f"t{min(i // chunks_per_table, n_tables - 1):05d}"
        text = f"{table} " + " ".join(rng.choice(WORDS, size=int(rng.integers(12, 40))))
        chunks.append(
            Chunk(
                chunk_id=make_chunk_id(name, table, "column", str(i), text),
                database=name,
                table=table,
                chunk_type="column",
                column=None,
                text=text,
                tokens=estimate_tokens(text),
                title=f"{table} chunk {i}",
            )
        )
    log.info("tokenizing %d synthetic chunks", n_chunks)
    stats = compute_bm25(chunks)  # the build's own function, so the bench indexes what a build would
    vecs = rng.standard_normal((n_chunks, embedder.dimension)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    payload = ArtifactPayload(
        key=key,
        database=db,
        schema_bytes=db.model_dump_json().encode(),
        chunks=chunks,
        bm25=stats.arrays,
        typo_keys=stats.typo_keys,
        typo_terms=stats.typo_terms,
        embeddings=vecs,
        model=embedder.identity,
        params=params,
        inputs={"synthetic": True},
    )
    write_artifact(root, payload)
    publish(root, key)
    return name, key
