"""``retrieve(query, top_k=8, database=None) -> list[dict]``: the retrieval-module spec's API.

>>> rows = retrieve("orders from last month", database="ecommerce")   # doctest: +SKIP
>>> sorted(rows[0])                                                   # doctest: +SKIP
['chunk_id', 'chunk_type', 'column', 'score', 'source_url', 'table', 'text', 'title']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemarag.runtime.core.config import runtime_settings
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.search.retriever import Retriever


def retrieve(
    query: str,
    top_k: int = 8,
    database: str | None = None,
    *,
    artifacts: str | Path | None = None,
    tenant: str | None = None,
    relevance_threshold: float | None = None,
) -> list[dict[str, Any]]:
    """Top ``top_k`` chunks for ``query`` as dicts, best first.

    ``database`` defaults to ``$SCHEMARAG_DATABASE``. Keys: ``text, source_url, title,
    chunk_id, score, table, chunk_type, column``.
    """
    db = database or runtime_settings().schemarag_database
    if not db:
        raise ConfigError("no database given; pass database=... or set SCHEMARAG_DATABASE")
    result = Retriever.open(db, artifacts=artifacts, tenant=tenant).search(
        query, top_k=top_k, relevance_threshold=relevance_threshold
    )
    return [
        {
            "text": sc.chunk.text,
            "source_url": sc.chunk.source_path,
            "title": sc.chunk.title,
            "chunk_id": sc.chunk.chunk_id,
            "score": round(sc.score, 4),
            "table": sc.chunk.table,
            "chunk_type": sc.chunk.chunk_type,
            "column": sc.chunk.column,
        }
        for sc in result.chunks
    ]
