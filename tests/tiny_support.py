"""Tiny real indexes for the runtime's unit-level tests: a two-table shop and two tenants.

Every index here is built by the real Dagster graph (``build_databases``) from files written
below, so the reader and the retriever are tested on real artifacts, just small ones.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from schemarag.runtime.artifact.format import CURRENT

SHOP: dict[str, Any] = {
    "name": "shop",
    "description": "A small web shop: customers and the orders they place.",
    "dialect": "postgres",
    "tables": [
        {
            "name": "customers",
            "description": "People who buy from the shop.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
                {"name": "full_name", "type": "VARCHAR(120)", "description": "Customer's full name."},
                {"name": "loyalty_tier", "type": "TEXT", "description": "Bronze, silver or gold tier."},
            ],
        },
        {
            "name": "orders",
            "description": "Purchases placed by customers.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
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

GLOBEX_HR: dict[str, Any] = {
    "name": "globex_hr",
    "tenant": "globex",
    "description": "Globex human resources.",
    "dialect": "postgres",
    "tables": [
        {
            "name": "salaries",
            "description": "Salary bands of every employee.",
            "columns": [
                {"name": "employee_id", "type": "INTEGER", "primary_key": True, "nullable": False},
                {"name": "salary_band", "type": "TEXT", "description": "Salary band, A (lowest) to F."},
            ],
        }
    ],
}

ACME_CRM: dict[str, Any] = {
    "name": "acme_crm",
    "tenant": "acme",
    "description": "Acme customer relationship data.",
    "dialect": "postgres",
    "tables": [
        {
            "name": "leads",
            "description": "Sales leads and their pipeline stage.",
            "columns": [
                {"name": "lead_id", "type": "INTEGER", "primary_key": True, "nullable": False},
                {"name": "pipeline_stage", "type": "TEXT", "description": "Stage of the sales pipeline."},
            ],
        }
    ],
}


def write_schema(data: Path, schema: dict[str, Any], name: str | None = None) -> str:
    """Write ``schema`` (renamed to ``name``) as ``<data>/<name>.json``; return the name."""
    body = copy.deepcopy(schema)
    body["name"] = name or schema["name"]
    data.mkdir(parents=True, exist_ok=True)
    (data / f"{body['name']}.json").write_text(json.dumps(body, indent=1), encoding="utf-8")
    return body["name"]


def build(dbs: list[str], data: Path, artifacts: Path, tenant: str | None = None) -> None:
    from schemarag.pipelines.build import build_databases

    reports = build_databases(dbs, data, artifacts, tenant=tenant)
    failed = [r for r in reports if not r.ok]
    assert not failed, failed


def current_key(db_root: Path) -> str:
    return (db_root / CURRENT).read_text(encoding="utf-8").strip()


def in_memory_artifact(
    schema: dict[str, Any],
    chunks: list[tuple[str | None, str, str | None]],
    vocab: list[str] = (),  # type: ignore[assignment]
    postings: dict[str, dict[int, float]] | None = None,
    idf: list[float] | None = None,
):
    """A real :class:`IndexArtifact` assembled in memory from hand-made pieces, for unit tests
    of scoring and ranking: ``chunks`` are ``(table, chunk_type, column)``; ``postings`` maps a
    vocabulary term to ``{chunk index: BM25 weight}``. Embeddings are zero (dense-free tests)."""
    import numpy as np

    from schemarag.runtime.artifact.chunk_model import CHUNK_FIELDS, Chunk, make_chunk_id
    from schemarag.runtime.artifact.format import FORMAT_VERSION
    from schemarag.runtime.artifact.manifest import Manifest
    from schemarag.runtime.artifact.reader import IndexArtifact
    from schemarag.runtime.core.schema import parse_schema
    from schemarag.runtime.formatting import render_schema

    db = parse_schema(schema)
    names = [t.name for t in db.tables]
    rows = []
    for table, ctype, column in chunks:
        text = f"{ctype} {table or db.name} {column or ''}".strip()
        chunk = Chunk(make_chunk_id(db.name, table, ctype, column, text), db.name, table, ctype, column, text)
        rows.append(chunk.to_dict())
    columns = {f: [r[f] for r in rows] for f in CHUNK_FIELDS}
    vocab = list(vocab)
    postings = postings or {}
    indptr, indices, data = [0], [], []
    for term in vocab:
        for chunk_i, weight in sorted(postings.get(term, {}).items()):
            indices.append(chunk_i)
            data.append(weight)
        indptr.append(len(indices))
    info = Manifest.model_validate(
        {
            "format_version": FORMAT_VERSION,
            "key": "0" * 16,
            "database": db.name,
            "model": {"name": "none", "dimension": 4},
            "counts": {"chunks": len(rows), "tables": len(names)},
            "files": {},
        }
    )
    return IndexArtifact(
        path=Path("<memory>"),
        manifest=info.model_dump(),
        schema=db,
        vocab={t: i for i, t in enumerate(vocab)},
        vocab_terms=vocab,
        bm25_indptr=np.array(indptr, dtype=np.int64),
        bm25_indices=np.array(indices, dtype=np.int32),
        bm25_data=np.array(data, dtype=np.float32),
        bm25_idf=np.array(idf if idf is not None else [1.0] * len(vocab), dtype=np.float32),
        typo_keys=np.array([], dtype=np.uint64),
        typo_terms=np.array([], dtype=np.int32),
        embeddings=np.zeros((len(rows), 4), dtype=np.float32),
        chunk_table=np.array([names.index(t) if t else -1 for t, _, _ in chunks], dtype=np.int32),
        table_names=names,
        ddl=render_schema(db),
        **_chunk_storage(IndexArtifact, columns),
        info=info,
    )


def _chunk_storage(cls: Any, columns: dict[str, list[Any]]) -> dict[str, Any]:
    """The reader keeps chunk columns decoded (``_chunks``) or as an Arrow table (older)."""
    if "_chunks" in cls.__dataclass_fields__:
        return {"_chunks": columns}
    import pyarrow as pa

    return {"_chunks_arrow": pa.table(columns)}
