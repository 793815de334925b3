"""Which text each chunk is embedded with, so a 100,000-column warehouse builds in minutes.

Up to ``ChunkingConfig.embed_all_columns_up_to`` columns (every sample and benchmark database)
every chunk is embedded as ``title + text``, exactly as before. Above it, one-vector-per-column
would dominate the build (~56 chunks/s on 2 cores), so the plan changes in two ways:

- a column chunk of a column with no description, value description or sample values gets no
  vector (a zero row: dense similarity 0). Its name is still in the BM25 index (its own chunk,
  and the table chunk that lists every column), and the table chunk carries it into the dense
  index as part of the table's text;
- a documented column is embedded as ``column\\n<its doc>`` without the table name, so the same
  column documented the same way in 300 tables (``created_at``: "When the row was created")
  is embedded once; the table's own chunks say which tables match.

Identical texts are embedded once whatever the size (:func:`unique_missing`).

Example:
    >>> from schemarag.runtime.artifact.chunk_model import Chunk
    >>> c = Chunk(chunk_id="1", database="d", table="t", chunk_type="column", column="id",
    ...           text="t.id (INT)\\nRow id", title="t.id")
    >>> embed_texts([c], column_documented=lambda t, col: True, scaled=True)
    ['id\\nRow id']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.schema import Database


def full_text(chunk: Chunk) -> str:
    """What the model sees by default: title first, so a column chunk says which table it is in."""
    return f"{chunk.title}\n{chunk.text}"


def documented_columns(db: Database) -> Callable[[str | None, str | None], bool]:
    """``(table, column) -> bool``: does the schema say anything about the column beyond its type?"""
    known = {
        (t.name.lower(), c.name.lower())
        for t in db.tables
        for c in t.columns
        if c.description or c.value_description or c.sample_values
    }
    return lambda table, column: ((table or "").lower(), (column or "").lower()) in known


def is_scaled(db: Database, threshold: int) -> bool:
    return sum(len(t.columns) for t in db.tables) > threshold


def embed_texts(
    chunks: Sequence[Chunk], column_documented: Callable[[str | None, str | None], bool], scaled: bool
) -> list[str | None]:
    """The text to embed per chunk, ``None`` for a chunk left to BM25 alone."""
    if not scaled:
        return [full_text(c) for c in chunks]
    out: list[str | None] = []
    for c in chunks:
        if c.chunk_type != "column" or not c.column:
            out.append(full_text(c))
        elif not column_documented(c.table, c.column):
            out.append(None)
        else:
            _, _, body = c.text.partition("\n")
            out.append(f"{c.column}\n{body}".strip())
    return out


def unique_missing(keys: Sequence[str | None], cached: dict) -> list[int]:
    """Indexes of the first chunk of each key neither cached nor already listed (nor ``None``)."""
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key is not None and key not in cached and key not in first:
            first[key] = i
    return list(first.values())


def plan_for(chunks: Sequence[Chunk], db: Database, params: dict) -> list[str | None] | None:
    """The per-chunk texts for a build with ``params`` (None: embed every chunk's full text)."""
    threshold = int((params.get("chunking") or {}).get("embed_all_columns_up_to", 0) or 0)
    if threshold <= 0 or not is_scaled(db, threshold):
        return None
    return embed_texts(chunks, documented_columns(db), scaled=True)
