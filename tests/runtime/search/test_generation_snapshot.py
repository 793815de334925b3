"""Generation renders from the pinned index version's pre-rendered DDL (no SQL parsing per
request) and names that version; retrieval, DDL and validation schema are one snapshot."""

from __future__ import annotations

from pathlib import Path

from schemarag.app.commands.schema_source import resolve_schema
from schemarag.app.querygen.generator import prepare_prompt
from schemarag.app.querygen.strategy import StrategyConfig
from schemarag.runtime.formatting import _ident_sql, _quote_needed, format_full_schema


def _renders() -> int:
    """How often a table was rendered with sqlglot (every render consults these caches)."""
    return sum(info.hits + info.misses for info in (_quote_needed.cache_info(), _ident_sql.cache_info()))


def test_prompts_use_the_pinned_pieces_without_rendering(tiny: tuple[Path, Path]) -> None:
    data, artifacts = tiny
    source = resolve_schema("shop", None, artifacts, data)
    pinned = source.pinned
    assert pinned is not None and source.database is pinned.schema

    def retrieve(question: str, top_k: int | None, threshold: float | None):
        return pinned.search(question, top_k=top_k, relevance_threshold=threshold)

    prepare_prompt("warm up", source.database, retrieve=retrieve, use_retrieval=True, ddl=source.ddl)
    before = _renders()
    full = prepare_prompt("gold tier customers", source.database, use_retrieval=False, ddl=source.ddl)
    rag = prepare_prompt(
        "gold tier customers",
        source.database,
        retrieve=retrieve,
        ddl=source.ddl,
        use_retrieval=True,  # RAG even when the focused schema is not smaller than the full one
        config=StrategyConfig(table_threshold=0, relevance_threshold=0.0),  # RAG even for two tables
    )
    assert _renders() == before, "a prompt re-rendered DDL with sqlglot"
    # table_threshold=0 makes RAG the strategy for this schema; a fallback would skip the pinned
    # key check below, so it fails here instead of passing vacuously (issue 39)
    assert rag.metadata["strategy"] == "rag", rag.metadata
    assert rag.metadata["artifact_key"] == pinned.key
    customers = pinned.ddl["customers"]
    text = "\n".join(m["content"] for m in full.messages)
    assert all(line in text for line in customers.column_sql)
    format_full_schema(source.database)  # without the pieces it does render: the probe is live
    assert _renders() > before
