"""Which schema each text is embedded with, so a big database's embedding fans out by schema.

Embedding is ~87% of a cold warehouse build, so ``schemarag build --jobs N`` splits it: one
``schema_embeddings`` partition per ``<db>/<schema>`` embeds that schema's texts into the
embedding cache, and the database's ``build_index`` run (the fan-in) finds every vector cached.

The artifact must be byte-identical whether or not the embedding was fanned out. It is because
each text is embedded alone (``Embedder.passage_batch``): the int8 model quantizes activations
per call, so a text embedded in a batch would take its neighbours' range (up to ~0.03 per
component). Which partition embeds a text is decided here:

- every table belongs to the schema before the first ``.`` of its name (``sales.orders`` ->
  ``sales``); a chunk without a schema (the database chunk, an unqualified table, a query with
  no table) belongs to the first schema in sorted order;
- each distinct text belongs to the schema of its *first* chunk, so a text shared by several
  schemas (``created_at``: "When the row was created") is embedded once, by one partition;
- the single-process build embeds group by group (schemas in sorted order) in the same way.

A database with fewer than two schemas is one group.

Example:
    >>> schema_of("sales.orders"), schema_of("orders"), schema_of(None)
    ('sales', None, None)
    >>> groups_for(["sales.a", None, "hr.b", "sales.c"], ["hr", "sales"])
    [1, 0, 0, 1]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from schemarag.runtime.core.schema import Database

# Where to start fanning a database's embedding out by schema on a multi-node executor: below
# it a partition run's fixed costs (process start, model load, re-chunking the database)
# outweigh its share of the embedding.
RECOMMENDED_SCHEMA_PARTITION_COLUMNS = 20_000
# Off by default (``--schema-partitions-from 0``): on one machine one ONNX process already keeps
# every core busy, so the fan-out only adds those fixed costs (measured 1.3x slower on 2 cores,
# docs/scale-out.md). A deployment whose executor spreads runs over machines turns it on.
DEFAULT_SCHEMA_PARTITION_COLUMNS = 0


def schema_of(table: str | None) -> str | None:
    """The schema of a schema-qualified table name, None for an unqualified one."""
    if not table or "." not in table:
        return None
    schema = table.split(".", 1)[0]
    return schema or None


def schema_names(table_names: Sequence[str]) -> list[str]:
    """The distinct schemas of ``table_names``, sorted."""
    return sorted({s for s in map(schema_of, table_names) if s is not None})


def database_schemas(db: Database) -> list[str]:
    return schema_names([t.name for t in db.tables])


def groups_for(tables: Sequence[str | None], schemas: Sequence[str]) -> list[int]:
    """Per chunk (given by its table), the index of its schema in ``schemas``; 0 without one."""
    index = {s: i for i, s in enumerate(schemas)}
    return [index.get(schema_of(t) or "", 0) for t in tables]


def partition_key(db: str, schema: str) -> str:
    return f"{db}/{schema}"


def split_partition_key(key: str) -> tuple[str, str]:
    """``"<db>/<schema>"`` -> ``(db, schema)``; a database name never contains ``/``."""
    db, sep, schema = key.partition("/")
    if not sep or not db or not schema:
        raise ValueError(f"schema partition key {key!r} is not '<database>/<schema>'")
    return db, schema


def fanout_schemas(schema_file: Path, min_columns: int) -> list[str]:
    """The schemas to embed in separate partitions: all of them when ``schema_file`` has at least
    two schemas and ``min_columns`` columns (``min_columns <= 0``: never), else none.

    Reads the JSON without validating it (the database's own run reports a bad file); anything
    unreadable or oddly shaped means no fan-out.
    """
    if min_columns <= 0:
        return []
    try:
        tables = json.loads(schema_file.read_bytes()).get("tables")
        names = [t["name"] for t in tables]
        columns = sum(len(t["columns"]) for t in tables)
    except (OSError, ValueError, AttributeError, TypeError, KeyError):
        return []
    if columns < min_columns or not all(isinstance(n, str) for n in names):
        return []
    schemas = schema_names(names)
    return schemas if len(schemas) >= 2 else []
