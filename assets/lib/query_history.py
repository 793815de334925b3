"""The stored query history of one database: where it lives and what each file holds (version 1).

``schemarag import queries`` (:mod:`schemarag.tools.importers.query_log`) writes it; the build
reads it (:mod:`.history_arrays`) and never parses SQL again. It lives in the build's library so
both can import it (tools import assets, never the reverse). docs/query-history.md describes the
same layout for users.

Where, beside the database's schema (``<data>/<db>.json``;
:func:`schemarag.runtime.core.paths.history_dir`)::

    <data>/<db>/history/manifest.json          # no tenant
    <data>/<db>/history/queries.parquet
    <data>/_tenants/<tenant>/<db>/history/...  # --tenant T: T's own history of <db>

``_tenants`` is reserved (:mod:`schemarag.runtime.core.names`), so it never collides with a
database; two tenants indexing one shared schema file keep separate histories.

``queries.parquet``: one row per distinct (normalized statement, question), in first-seen order:

==================  ==================================  =============================================
column              type                                meaning
==================  ==================================  =============================================
``sql``             string                              the statement as sqlglot writes it in the
                                                        dialect: comments dropped, literals ``?``
                                                        (unless ``literals`` is ``kept``)
``fingerprint``     string                              16 hex chars of sha256(``sql``)
``question``        string, null                        the question asked, when the source had one
``count``           int64                               times run (``calls``/``COUNT_STAR``/``count``,
                                                        else one per logged row), summed
``users``           int64                               distinct users seen (0: the source has none;
                                                        ``--append`` adds, an upper bound)
``first_seen``      string, null                        earliest start time seen, as exported
``last_seen``       string, null                        latest start time seen, as exported
``tables``          list<string>                        schema tables read, canonical names
                                                        (``Database.table(n).name``), each once
``unknown_tables``  list<string>                        relations read that the schema lacks (<= 64)
``joins``           list<struct<left_table, left_column,  equi-join edges between two schema tables,
                    right_table, right_column>>          (left_table, left_column) < (right...)
``columns``         list<struct<table, column>>         schema columns referenced anywhere
``source``          string                              format of the first source it came from
==================  ==================================  =============================================

``manifest.json``: ``format`` (``schemarag-query-history``), ``version`` (1), ``database``,
``tenant``, ``dialect``, ``literals`` (``placeholders`` or ``kept``; ``mixed`` after an append
of both), ``schema_sha256`` (the schema file the names were resolved against: a build may warn
when it changed, a re-import resolves again), ``queries_sha256`` (of ``queries.parquet``: a
reader refuses a pair that does not match), ``rows``, ``statements`` (sum of ``count``),
``imported_at``, ``sqlglot`` (parser version), ``sources`` (per source: path, format, rows
read, statements kept) and ``skipped`` (reason -> count). A reader refuses a ``version`` it does
not know.

The files are written to temporary names and renamed, the data file first, the manifest last: a
failed import leaves the previous history as it was.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from schemarag.runtime.artifact.format import sha256_file as file_sha256
from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.paths import history_dir

FORMAT = "schemarag-query-history"
VERSION = 1
MANIFEST = "manifest.json"
QUERIES = "queries.parquet"

__all__ = [
    "FORMAT",
    "MANIFEST",
    "QUERIES",
    "VERSION",
    "arrow_schema",
    "file_sha256",
    "history_dir",
    "open_queries",
    "publish",
    "read_manifest",
]


def arrow_schema() -> Any:
    """The pyarrow schema of ``queries.parquet`` (version 1)."""
    import pyarrow as pa

    return pa.schema(
        [
            ("sql", pa.string()),
            ("fingerprint", pa.string()),
            ("question", pa.string()),
            ("count", pa.int64()),
            ("users", pa.int64()),
            ("first_seen", pa.string()),
            ("last_seen", pa.string()),
            ("tables", pa.list_(pa.string())),
            ("unknown_tables", pa.list_(pa.string())),
            (
                "joins",
                pa.list_(
                    pa.struct(
                        [
                            ("left_table", pa.string()),
                            ("left_column", pa.string()),
                            ("right_table", pa.string()),
                            ("right_column", pa.string()),
                        ]
                    )
                ),
            ),
            ("columns", pa.list_(pa.struct([("table", pa.string()), ("column", pa.string())]))),
            ("source", pa.string()),
        ]
    )


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of the history in ``folder``, None when there is none; raises
    :class:`ImportFormatError` for one this version cannot read."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ImportFormatError(
            f"{path}: unreadable history manifest ({exc}); re-import without --append"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ImportFormatError(f"{path}: not a query-history manifest; re-import without --append")
    if manifest.get("version") != VERSION:
        raise ImportFormatError(
            f"{path}: history version {manifest.get('version')!r}, this schemarag reads {VERSION}; "
            "re-import without --append"
        )
    return manifest


def open_queries(folder: Path) -> Any:
    """``queries.parquet`` of ``folder`` as a ``pyarrow.parquet.ParquetFile`` after checking it
    against the manifest (for readers: iterate ``iter_batches`` to stay within memory)."""
    import pyarrow.parquet as pq

    manifest = read_manifest(folder)
    path = folder / QUERIES
    if manifest is None or not path.is_file():
        raise ImportFormatError(f"{folder}: no query history here; run schemarag import queries")
    if file_sha256(path) != manifest.get("queries_sha256"):
        raise ImportFormatError(f"{path}: does not match its manifest; run schemarag import queries again")
    return pq.ParquetFile(path)


def publish(folder: Path, queries_tmp: Path, manifest: dict[str, Any]) -> None:
    """Move ``queries_tmp`` into place and write ``manifest`` (data first, manifest last)."""
    manifest = {"format": FORMAT, "version": VERSION, **manifest, "queries_sha256": file_sha256(queries_tmp)}
    tmp = folder / f".{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(queries_tmp, folder / QUERIES)
    os.replace(tmp, folder / MANIFEST)
