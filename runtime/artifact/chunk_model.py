"""The unit of retrieval: a typed chunk of schema documentation with its metadata.

Chunk IDs are content-derived (database, table, type, column, text), so they are stable
across rebuilds and identical text never gets two IDs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

CHUNK_TYPES: tuple[str, ...] = (
    "database",
    "table",
    "overview",
    "column",
    "query",
    "relationship",
    "example",
)

# Field order of the JSON/Parquet form; `schemarag chunks --json` prints exactly these.
CHUNK_FIELDS: tuple[str, ...] = (
    "chunk_id",
    "database",
    "table",
    "chunk_type",
    "column",
    "related_tables",
    "keywords",
    "tokens",
    "source_path",
    "title",
    "start_line",
    "text",
)


def make_chunk_id(database: str, table: str | None, chunk_type: str, column: str | None, text: str) -> str:
    """Deterministic 20-hex-digit ID from the chunk's identity and content.

    >>> make_chunk_id("shop", "orders", "column", "id", "x") == make_chunk_id(
    ...     "shop", "orders", "column", "id", "x")
    True
    """
    h = hashlib.sha256()
    for part in (database, table or "", chunk_type, column or "", text):
        h.update(part.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()[:20]


def estimate_tokens(text: str) -> int:
    """Cheap token estimate (~4 characters per token, as the design spec assumes)."""
    return max(1, (len(text) + 3) // 4) if text else 0


@dataclass(frozen=True)
class Chunk:
    """One retrievable piece of documentation.

    ``table`` is ``None`` only for the ``database`` chunk built from ``_index.md``.
    """

    chunk_id: str
    database: str
    table: str | None
    chunk_type: str
    column: str | None
    text: str
    related_tables: tuple[str, ...] = field(default_factory=tuple)
    keywords: tuple[str, ...] = field(default_factory=tuple)
    tokens: int = 0
    source_path: str = ""
    title: str = ""
    start_line: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with exactly :data:`CHUNK_FIELDS` as keys, in that order."""
        # field by field, not dataclasses.asdict: that deep-copies every value, and the build
        # converts every chunk of a 100,000-column warehouse (it was 1/4 of writing Parquet)
        raw = {k: getattr(self, k) for k in CHUNK_FIELDS}
        raw["related_tables"] = list(self.related_tables)
        raw["keywords"] = list(self.keywords)
        return raw

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Chunk:
        return cls(
            chunk_id=d["chunk_id"],
            database=d["database"],
            table=d.get("table"),
            chunk_type=d["chunk_type"],
            column=d.get("column"),
            text=d["text"],
            related_tables=tuple(d.get("related_tables") or ()),
            keywords=tuple(d.get("keywords") or ()),
            tokens=int(d.get("tokens") or 0),
            source_path=d.get("source_path") or "",
            title=d.get("title") or "",
            start_line=int(d.get("start_line") or 0),
        )
