"""Result types of retrieval: small, immutable, JSON-ready (snake_case keys, as every output)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemarag.runtime.artifact.chunk_model import Chunk


@dataclass(frozen=True)
class ScoredChunk:
    """A chunk with its relevance in [0, 1] (see README "Relevance score")."""

    chunk: Chunk
    score: float
    bm25: float = 0.0  # lexical component in [0, 1]
    dense: float = 0.0  # cosine similarity in [-1, 1]

    def to_dict(self) -> dict[str, Any]:
        c = self.chunk
        return {
            "chunk_id": c.chunk_id,
            "table": c.table,
            "chunk_type": c.chunk_type,
            "column": c.column,
            "score": round(self.score, 4),
            "title": c.title,
            "source_url": c.source_path,
            "text": c.text,
        }


@dataclass
class RetrievalMetadata:
    """SDR-REQ-08: what was searched, what came back, and (debug) where the time went."""

    total_chunks_searched: int
    chunks_returned: int
    avg_relevance_score: float
    tables_included: list[str]
    expanded_tables: list[str]
    artifact_key: str
    top_k: int
    relevance_threshold: float
    nothing_relevant: bool
    message: str = ""
    timings_ms: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_chunks_searched": self.total_chunks_searched,
            "chunks_returned": self.chunks_returned,
            "avg_relevance_score": round(self.avg_relevance_score, 4),
            "tables_included": self.tables_included,
            "expanded_tables": self.expanded_tables,
            "artifact_key": self.artifact_key,
            "top_k": self.top_k,
            "relevance_threshold": self.relevance_threshold,
            "nothing_relevant": self.nothing_relevant,
            "message": self.message,
            "timings_ms": self.timings_ms,
        }


@dataclass
class RetrievalResult:
    """Chunks (descending score), the tables they cover (rank order) and their FK neighbours."""

    question: str
    chunks: list[ScoredChunk]
    tables: list[str]
    expanded_tables: list[str]
    metadata: RetrievalMetadata
    ddl: dict[str, Any] | None = field(default=None, repr=False, compare=False)  # pre-rendered DDL pieces
    ranking: TableRanking | None = None  # budgeted table focus, when search() was given a table budget
    # The schema of the index version this result was read from: render and validate against it.
    schema: Any | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """What ``retrieve --json``, ``POST /v1/retrieve`` and MCP ``search_schema`` return: the
        focused tables (``ranking``; null when no ranking was asked for or nothing was relevant),
        the tables ranked on their own and the FK neighbours taken with them, and the chunks."""
        return {
            "tables": list(self.tables),
            "expanded_tables": list(self.expanded_tables),
            "ranking": self.ranking.to_dict() if self.ranking is not None else None,
            "chunks": [c.to_dict() for c in self.chunks],
            "metadata": self.metadata.to_dict(),
        }


@dataclass
class TableRanking:
    """Tables chosen for a focused schema under a table budget (evaluation and generation)."""

    tables: list[str]  # kept tables in rank order, FK-expanded, at most the budget
    columns: dict[str, list[str]] = field(default_factory=dict)  # kept columns per table
    scores: dict[str, float] = field(default_factory=dict)  # table relevance in [0, 1]
    ranked: list[str] = field(default_factory=list)  # every table, best first
    described: dict[str, list[str]] = field(default_factory=dict)  # kept columns shown with a description
    compact: dict[str, list[str]] = field(default_factory=dict)  # other columns, shown by name only
    token_budget: int | None = None  # the focused schema's size cap (ColumnPolicy.context_share)
    focus: str | None = None  # the named column policy ("default", "compact", "custom")
    adaptive: bool = False  # the number of tables was chosen per question (AdaptiveBudget)
    # Collapsed shard families the question's dates point into: the members (or sub-range) the
    # DDL note names (runtime.search.shard_hints); tables without one are absent.
    shard_hints: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The selection, as ``retrieve --json`` and the HTTP API report it: kept tables in rank
        order with their scores, per table the columns shown as DDL and those listed by name
        (and ``shard_hint`` for a collapsed family the question's date points into)."""
        return {
            "focus": self.focus,
            "adaptive": self.adaptive,
            "tables": [self._table_dict(t) for t in self.tables],
            "token_budget": self.token_budget,
        }

    def _table_dict(self, t: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "table": t,
            "score": round(self.scores.get(t, 0.0), 4),
            "columns": self.columns.get(t, []),
            "described": self.described.get(t, []),
            "named_only": self.compact.get(t, []),
        }
        if t in self.shard_hints:
            out["shard_hint"] = self.shard_hints[t]
        return out
