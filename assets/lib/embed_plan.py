"""Which text each chunk is embedded with, so a 100,000-column warehouse builds in minutes.

Up to ``ChunkingConfig.embed_all_columns_up_to`` columns (every sample and benchmark database)
every chunk is embedded as ``title + text``, exactly as before. Above it, one-vector-per-column
would dominate the build (~56 chunks/s on 2 cores), so the plan changes:

- a column chunk of a column with no description, value description or sample values gets no
  vector (a zero row: dense similarity 0). Its name is still in the BM25 index (its own chunk,
  and the table chunk that lists every column), and the table chunk carries it into the dense
  index as part of the table's text;
- a documented column is embedded as ``column\\n<its doc>`` without the table name, so the same
  column documented the same way in 300 tables (``created_at``: "When the row was created")
  is embedded once; the table's own chunks say which tables match;
- a table chunk is embedded as its name, description, column names and referenced tables
  (:func:`table_embed_text`), not its stored text with every type and ``references x.y``
  clause: those tripled the tokens (the model's cost is linear in tokens: ~1,700 per CPU-second
  on 2 cores) and pushed 40% of warehouse tables past the model's 512-token window, so their
  last columns were cut off anyway. Types and keys stay in the stored text, BM25 and the DDL;
- a relationship chunk whose text is exactly the section the docs writer generates from the
  schema's foreign keys (:func:`~schemarag.assets.lib.docs_writer.relationship_lines`) gets no
  vector, like an undocumented column: it restates the schema, which BM25 indexes and the
  table chunks carry (a hub table's generated list of hundreds of joins was 30% of the tokens
  embedded). A section a person wrote or edited differs from the generated one and is embedded.

Which plan a build used is part of its key: :func:`plan_params` adds ``embed_plan`` to the
build parameters of a scaled database only, so every smaller database keeps its key.

Identical texts are embedded once whatever the size (:func:`unique_missing`).

Column tiers (``column_vectors``, :data:`~schemarag.runtime.artifact.format.COLUMN_VECTOR_TIERS`):
what a column chunk is embedded with, at any size. ``full`` (the default) is the above;
``short`` embeds :func:`short_column_text` (name, type, description: no docs labels,
nullability, keys or sample values; 2.4x fewer tokens on warehouse comments); ``bm25`` gives
column chunks no vector. A tier other than ``full`` is in the key params (:func:`plan_params`)
and the manifest, so every database built without one keeps its key.

Example:
    >>> from schemarag.runtime.artifact.chunk_model import Chunk
    >>> c = Chunk(chunk_id="1", database="d", table="t", chunk_type="column", column="id",
    ...           text="t.id (INT)\\nRow id", title="t.id")
    >>> embed_texts([c], column_documented=lambda t, col: True, scaled=True)
    ['id\\nRow id']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from schemarag.assets.lib.docs_writer import fk_index, relationship_lines
from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.artifact.format import COLUMN_VECTOR_TIERS, DEFAULT_COLUMN_VECTORS
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.schema import Column, Database, Table

# 2: table chunks embedded as names only (table_embed_text), generated relationship sections not
# embedded. Version 1 (no key entry) embedded both with their full text.
EMBED_PLAN_VERSION = 2


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
    return threshold > 0 and sum(len(t.columns) for t in db.tables) > threshold


def plan_params(db: Database, threshold: int, column_vectors: str | None = None) -> dict[str, int | str]:
    """Build parameters the plan adds to the key: ``{"embed_plan": N}`` for a scaled database,
    ``{"column_vectors": tier}`` for a tier other than ``full``, nothing otherwise (so a
    database under the threshold built the default way keeps the key it always had)."""
    return plan_params_for(sum(len(t.columns) for t in db.tables), threshold, column_vectors)


def plan_params_for(columns: int, threshold: int, column_vectors: str | None = None) -> dict[str, int | str]:
    """:func:`plan_params` from a column count (the no-op check counts without validating)."""
    out: dict[str, int | str] = (
        {"embed_plan": EMBED_PLAN_VERSION} if threshold > 0 and columns > threshold else {}
    )
    tier = check_tier(column_vectors)
    if tier != DEFAULT_COLUMN_VECTORS:
        out["column_vectors"] = tier
    return out


def check_tier(column_vectors: str | None, source: str = "column vectors") -> str:
    """``column_vectors`` (None: the default), or a :class:`ConfigError` listing the tiers."""
    tier = column_vectors or DEFAULT_COLUMN_VECTORS
    if tier not in COLUMN_VECTOR_TIERS:
        raise ConfigError(f"{source} {tier!r}: use one of {', '.join(COLUMN_VECTOR_TIERS)}")
    return tier


def resolve_column_vectors(column_vectors: str | None) -> str:
    """The tier a build uses: ``column_vectors``, else ``$SCHEMARAG_COLUMN_VECTORS``, else ``full``."""
    if column_vectors is not None:
        return check_tier(column_vectors)
    from schemarag.runtime.core.config import runtime_settings

    return check_tier(runtime_settings().schemarag_column_vectors, "$SCHEMARAG_COLUMN_VECTORS")


SHORT_CHARS = 300  # ~64 word pieces: a column comment past this is usually boilerplate
# docs_writer's generated list items that restate the schema (type, keys, nullability)
_RESTATED = re.compile(r"^-\s*\*\*(type|nullable|primary key|foreign key)\b", re.IGNORECASE)
_LABEL = re.compile(r"^-\s*\*\*[^*\n]{1,40}?\*\*:?\s*")


def short_column_text(chunk: Chunk, column: Column | None) -> str:
    """A column chunk as the ``short`` tier embeds it: name (``_`` read as spaces), type, and
    what its text says beyond the schema's structure: descriptions and value notes, without the
    docs' ``- **Label:**`` markup, sample values or ``References`` lines.

    >>> c = Chunk(chunk_id="1", database="d", table="s.t", chunk_type="column", column="order_total",
    ...           text="s.t.order_total\\n- **Type:** NUMERIC\\n- **Description:** Total in USD.\\n"
    ...                "- **Nullable:** yes", title="s.t.order_total")
    >>> short_column_text(c, Column(name="order_total", type="NUMERIC"))
    'order total (NUMERIC): Total in USD.'
    """
    name = chunk.column or ""
    head = (name.replace("_", " ").strip() or name) + (f" ({column.type})" if column and column.type else "")
    kept = []
    for line in chunk.text.partition("\n")[2].splitlines():
        line = line.strip()
        if not line or _RESTATED.match(line) or line.lower().startswith(("references ", "sample values:")):
            continue
        kept.append(_LABEL.sub("", line))
    text = head + (": " + " ".join(kept) if kept else "")
    return text[:SHORT_CHARS]


def table_embed_text(table: Table) -> str:
    """A table as the scaled plan embeds it: what it is called, what it holds, which columns it
    has and which tables it points at, in words the model reads: no types or key clauses, and
    ``_`` in column names read as spaces (the model's word pieces spend one token per ``_``).

    >>> t = Table.model_validate({"name": "s.orders", "description": "One row per order.",
    ...     "columns": [{"name": "id", "type": "BIGINT", "primary_key": True},
    ...                 {"name": "user_id", "foreign_key": {"table": "s.users", "column": "id"}}]})
    >>> print(table_embed_text(t))
    Table s.orders: One row per order.
    Columns: id, user id
    References: s.users
    """
    lines = [f"Table {table.name}" + (f": {table.description}" if table.description else "")]
    lines.append("Columns: " + ", ".join(c.name.replace("_", " ").strip() or c.name for c in table.columns))
    refs = sorted({c.foreign_key.table for c in table.columns if c.foreign_key})
    if refs:
        lines.append("References: " + ", ".join(refs))
    return "\n".join(lines)


def generated_relationships(db: Database) -> dict[str, str]:
    """Table name -> the ``## Relationships`` body the docs writer generates for it."""
    fks = fk_index(db)
    return {t.name: "\n".join(relationship_lines(db, t, fks)) for t in db.tables}


def embed_texts(
    chunks: Sequence[Chunk],
    column_documented: Callable[[str | None, str | None], bool],
    scaled: bool,
    table_texts: dict[str, str] | None = None,
    generated: dict[str, str] | None = None,
    column_vectors: str = DEFAULT_COLUMN_VECTORS,
    columns: Callable[[str | None, str | None], Column | None] | None = None,
) -> list[str | None]:
    """The text to embed per chunk, ``None`` for a chunk left to BM25 alone. Scaled plans from
    version 2 pass ``table_texts`` (each table chunk's text, by table name) and ``generated``
    (:func:`generated_relationships`). ``column_vectors`` is the column tier; ``columns``
    looks a chunk's schema column up (for the ``short`` tier's type)."""
    if not scaled and column_vectors == DEFAULT_COLUMN_VECTORS:
        return [full_text(c) for c in chunks]
    out: list[str | None] = []
    for c in chunks:
        if c.chunk_type == "column" and c.column and column_vectors != DEFAULT_COLUMN_VECTORS:
            if column_vectors == "bm25" or (scaled and not column_documented(c.table, c.column)):
                out.append(None)
            else:
                out.append(short_column_text(c, columns(c.table, c.column) if columns else None))
        elif not scaled:
            out.append(full_text(c))
        elif c.chunk_type == "table" and table_texts and c.table in table_texts:
            out.append(table_texts[c.table])
        elif c.chunk_type == "relationship" and generated and _is_generated(c, generated):
            out.append(None)
        elif c.chunk_type != "column" or not c.column:
            out.append(full_text(c))
        elif not column_documented(c.table, c.column):
            out.append(None)
        else:
            _, _, body = c.text.partition("\n")
            out.append(f"{c.column}\n{body}".strip())
    return out


def _is_generated(chunk: Chunk, generated: dict[str, str]) -> bool:
    body = chunk.text.partition("\n")[2]
    return bool(body) and body == generated.get(chunk.table or "")


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
    tier = check_tier(params.get("column_vectors"), "build parameter column_vectors")
    scaled = is_scaled(db, threshold)
    if not scaled and tier == DEFAULT_COLUMN_VECTORS:
        return None
    lookup = _column_lookup(db)
    if not scaled:
        return embed_texts(chunks, documented_columns(db), scaled=False, column_vectors=tier, columns=lookup)
    if params.get("embed_plan", 1) < 2:
        return embed_texts(chunks, documented_columns(db), scaled=True, column_vectors=tier, columns=lookup)
    tables = {t.name: table_embed_text(t) for t in db.tables}
    return embed_texts(
        chunks,
        documented_columns(db),
        scaled=True,
        table_texts=tables,
        generated=generated_relationships(db),
        column_vectors=tier,
        columns=lookup,
    )


def _column_lookup(db: Database) -> Callable[[str | None, str | None], Column | None]:
    """``(table, column) -> Column`` (case-insensitive), built once per plan."""
    cols = {(t.name.lower(), c.name.lower()): c for t in db.tables for c in t.columns}
    return lambda table, column: cols.get(((table or "").lower(), (column or "").lower()))
