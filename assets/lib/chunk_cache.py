"""Cache of chunking's output per doc file and per table, so a one-doc edit re-chunks one file.

Chunking a 120,000-column warehouse took a quarter of a one-table edit's rebuild (markdown
parsing half of it, keyword extraction and chunk IDs for 85,000 schema-derived column chunks
most of the rest), although only one file changed. This cache keeps two kinds of entries:

* per table doc, exactly what :func:`~schemarag.assets.lib.chunking.chunk_database` derived from
  it: the chunks it tried to add (in order, before de-duplication against other files, which
  is replayed), the table it documents and the columns it documented;
* per table, its schema-derived chunks (the table chunk, column chunks for columns its docs do
  not cover), keyed by their exact texts, titles and keywords and the table's neighbours.

What a doc file's chunks depend on, and where the key covers it:

* the file's text and name, and the docs folder label (``source_path``): the entry key;
* the chunking config, the code that chunks (source of the chunking, markdown, SQL-reference,
  keyword, chunk-model and schema modules, and the versions of markdown-it-py, sqlglot and the
  stemmer), the database's name, schema version (chunk IDs), dialect (SQL references) and every
  table name in schema order (the table a doc names, tables mentioned in its text): the context
  fingerprint, part of every entry key;
* the documented table's name, column names and foreign-key neighbours (``related_tables``):
  the table fingerprint, stored in the entry and compared on every hit.

Anything else (a neighbour's own columns, descriptions, sample values) never reaches a doc
chunk. Files that fail to parse are never cached: they are re-parsed and warned about on every
build. An unreadable entry is a miss. One SQLite file per database and tenant (concurrent
builds of different databases never contend); after each build only the entries that build
used are kept, so the cache holds one version of the docs.

Values are zlib-compressed JSON, never pickle: the cache sits in the artifacts folder, and
reading it must not be able to run code.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from schemarag import __version__
from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import embedding_cache_dir
from schemarag.runtime.core.schema import Database, Table

CACHE_FORMAT = 2  # 2: keywords by index into a per-entry vocabulary
# Modules whose code decides what the chunks are (see the module docstring).
_CODE_MODULES = (
    "schemarag.assets.lib.chunking",
    "schemarag.assets.lib.chunk_cache",
    "schemarag.assets.lib.markdown_docs",
    "schemarag.assets.lib.sql_refs",
    "schemarag.runtime.artifact.chunk_model",
    "schemarag.runtime.core.schema",
    "schemarag.runtime.core.text_tokens",
)
_PACKAGES = ("markdown-it-py", "sqlglot", "py_rust_stemmers")
# Columns in the dataclass's field order, so ``Chunk(*row)`` rebuilds one without keyword lookups.
_FIELDS = tuple(f.name for f in fields(Chunk))


def chunk_cache_path(artifacts: Path, db: str, tenant: str | None = None) -> Path:
    """``<artifacts>/_cache/chunks/[_tenants/<tenant>/]<db>.sqlite``, next to the embedding cache.

    Per database and tenant: two tenants' ``shop`` never evict each other's entries."""
    base = embedding_cache_dir(artifacts).parent / "chunks"
    name = f"{check_name(db, 'database')}.sqlite"
    return base / "_tenants" / check_name(tenant, "tenant") / name if tenant else base / name


def _digest(*parts: str) -> str:
    """SHA-256 of ``parts``, each length-prefixed: no two different part lists collide."""
    h = hashlib.sha256()
    for part in parts:
        raw = part.encode("utf-8")
        h.update(f"{len(raw)}:".encode())
        h.update(raw)
    return h.hexdigest()


@lru_cache(maxsize=8)
def source_fingerprint(modules: tuple[str, ...], packages: tuple[str, ...]) -> str:
    """Hash of ``modules``' source files, the installed ``packages``' versions and schemarag's
    version: what a cache of derived build output must be keyed on, because a development
    checkout changes code without changing ``__version__``."""
    import importlib

    parts = [f"schemarag {__version__}"]
    for name in modules:
        source = Path(importlib.import_module(name).__file__ or "")
        parts.append(
            name + ":" + (hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else "")
        )
    for pkg in packages:
        try:
            parts.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{pkg} -")
    return _digest(*parts)


def code_fingerprint() -> str:
    """The chunking code and the libraries it calls: a changed tokenizer, parser or chunk rule
    must never replay chunks made by the old one."""
    return source_fingerprint(_CODE_MODULES, _PACKAGES)


def context_fingerprint(db: Database, config_json: str, docs_label: str) -> str:
    """Everything database-wide a doc file's chunks depend on (see the module docstring)."""
    names = json.dumps([t.name for t in db.tables])
    return _digest(
        f"chunk-cache-v{CACHE_FORMAT}",
        code_fingerprint(),
        config_json,
        db.name,
        db.schema_version or "",
        db.dialect,
        hashlib.sha256(names.encode("utf-8")).hexdigest(),
        docs_label,
    )


def entry_key(context: str, file_name: str, text: str) -> str:
    return _digest(context, file_name, hashlib.sha256(text.encode("utf-8")).hexdigest())


def table_fingerprint(db: Database, table: Table) -> str:
    """The documented table's part of a doc's chunks: its name, column names, FK neighbours."""
    return _digest(
        table.name,
        json.dumps([c.name for c in table.columns]),
        json.dumps(sorted(db.neighbours(table.name))),
    )


@dataclass
class CachedDoc:
    """What one table doc contributed to the chunk set."""

    table: str  # the schema's name of the documented table
    table_fp: str  # :func:`table_fingerprint` when the entry was made
    documented: list[str]  # lower-cased names of the columns it documented
    chunks: list[Chunk]  # every chunk it tried to add, in order, before cross-file de-duplication

    def encode(self) -> bytes:
        """Columns, not rows: a field with one value for every chunk (database, table, source
        path) is stored once, ``related_tables`` (mostly the same per table) as an index into
        its distinct values, and ``keywords`` as indexes into the entry's keyword vocabulary.
        Decoding then shares those strings and tuples between chunks, as freshly made chunks
        share the keyword cache's strings: one string object per keyword occurrence was 0.45 GB
        more peak RSS in a 120k-column edit rebuild."""
        cols: dict[str, Any] = {}
        for f in _FIELDS:
            values = [getattr(c, f) for c in self.chunks]
            if f == "related_tables":
                distinct = list(dict.fromkeys(values))
                at = {v: i for i, v in enumerate(distinct)}
                cols[f] = {"distinct": distinct, "index": [at[v] for v in values]}
            elif f == "keywords":
                vocab = list(dict.fromkeys(w for v in values for w in v))
                ids = {w: i for i, w in enumerate(vocab)}
                cols[f] = {"vocab": vocab, "index": [[ids[w] for w in v] for v in values]}
            elif values and all(v == values[0] for v in values):
                cols[f] = {"all": values[0]}
            else:
                cols[f] = values
        doc = {"table": self.table, "table_fp": self.table_fp, "documented": self.documented}
        doc |= {"n": len(self.chunks), "columns": cols}
        return zlib.compress(json.dumps(doc, separators=(",", ":")).encode("utf-8"), 1)

    @classmethod
    def decode(cls, blob: bytes, strings: dict[str, str] | None = None) -> CachedDoc:
        """The entry in ``blob``; ``strings`` (shared across the entries of one read) maps each
        keyword to one string object."""
        strings = {} if strings is None else strings
        doc: dict[str, Any] = json.loads(zlib.decompress(blob))
        n, cols = int(doc["n"]), doc["columns"]
        columns = []
        for f in _FIELDS:
            col = cols[f]
            if f == "related_tables":
                distinct = [tuple(v) for v in col["distinct"]]
                values = [distinct[i] for i in col["index"]]
            elif f == "keywords":
                vocab = [strings.setdefault(w, w) for w in col["vocab"]]
                values = [tuple([vocab[i] for i in idx]) for idx in col["index"]]
            else:
                values = col if isinstance(col, list) else [col["all"]] * n
            if len(values) != n:
                raise ValueError(f"cached column {f!r} has {len(values)} values, not {n}")
            columns.append(values)
        return cls(
            table=str(doc["table"]),
            table_fp=str(doc["table_fp"]),
            documented=[str(c) for c in doc["documented"]],
            chunks=[Chunk(*row) for row in zip(*columns, strict=True)],
        )


class ChunkCache:
    """``get_many``/``put_many``/``retain`` of :class:`CachedDoc` entries in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._conn = sqlite3.connect(path, timeout=60)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS docs (k TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self._strings: dict[str, str] = {}  # one object per keyword across every entry read

    def get_many(self, keys: list[str]) -> dict[str, CachedDoc]:
        """The decodable entries among ``keys`` (a damaged entry is a miss, never an error)."""
        out: dict[str, CachedDoc] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = f"SELECT k, v FROM docs WHERE k IN ({','.join('?' * len(part))})"
            for k, v in self._conn.execute(q, part):
                try:
                    out[k] = CachedDoc.decode(v, self._strings)
                except (ValueError, TypeError, KeyError, zlib.error):
                    continue
        return out

    def put_many(self, items: dict[str, CachedDoc]) -> None:
        if not items:
            return
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO docs (k, v) VALUES (?, ?)",
                [(k, d.encode()) for k, d in items.items()],
            )

    def retain(self, keys: set[str]) -> int:
        """Delete every entry not in ``keys`` (the ones this build used); returns how many."""
        with self._conn:
            self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS keep (k TEXT PRIMARY KEY)")
            self._conn.execute("DELETE FROM keep")
            self._conn.executemany("INSERT OR IGNORE INTO keep (k) VALUES (?)", [(k,) for k in keys])
            cur = self._conn.execute("DELETE FROM docs WHERE k NOT IN (SELECT k FROM keep)")
            return cur.rowcount

    def keys(self) -> set[str]:
        return {k for (k,) in self._conn.execute("SELECT k FROM docs")}

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ChunkCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChunkMemo:
    """One :func:`~schemarag.assets.lib.chunking.chunk_database` call's use of a cache: lookups
    per doc file and per table's schema-derived chunks, new entries collected and written (and
    everything this call did not use dropped) by :meth:`finish`. With ``cache=None`` every
    lookup misses and nothing is stored, so the chunker has one code path."""

    def __init__(
        self, cache: ChunkCache | None, db: Database, config_json: str, docs_label: str, docs: dict[str, str]
    ) -> None:
        self.cache = cache
        self.db = db
        self.context = context_fingerprint(db, config_json, docs_label) if cache else ""
        self._doc_keys = {f: entry_key(self.context, f, t) for f, t in docs.items()} if cache else {}
        self._hits = cache.get_many(list(self._doc_keys.values())) if cache else {}
        self._fresh: dict[str, CachedDoc] = {}
        self._used: set[str] = set()

    def doc(self, file_name: str) -> CachedDoc | None:
        """The cached chunks of ``file_name`` if its text, table and context are unchanged."""
        key = self._doc_keys.get(file_name)
        hit = self._hits.get(key) if key else None
        if hit is None:
            return None
        table = self.db.table(hit.table)
        if table is None or hit.table_fp != table_fingerprint(self.db, table):
            return None
        self._used.add(key)  # type: ignore[arg-type]
        return hit

    def put_doc(self, file_name: str, table: Table, chunks: list[Chunk], documented: set[str]) -> CachedDoc:
        """What ``file_name`` contributed (stored for the next build when there is a cache)."""
        entry = CachedDoc(
            table.name, table_fingerprint(self.db, table) if self.cache else "", sorted(documented), chunks
        )
        if self.cache:
            key = self._doc_keys[file_name]
            self._fresh[key] = entry
            self._used.add(key)
        return entry

    def schema_keys(self, specs: dict[str, list[tuple[str, str | None, str, str, str]]]) -> dict[str, str]:
        """Per table, the key of its schema-derived chunks: the exact inputs of every one of them
        (type, column, text, title, keyword; see ``chunking._schema_specs``) and the table's
        foreign-key neighbours (``related_tables``), under the context fingerprint."""
        if not self.cache:
            return {}
        keys = {}
        for table, table_specs in specs.items():
            body = json.dumps([sorted(self.db.neighbours(table)), table_specs], separators=(",", ":"))
            keys[table] = entry_key(self.context, "schema:" + table, body)
        self._hits.update(self.cache.get_many(list(keys.values())))
        return keys

    def schema(self, key: str | None) -> list[Chunk] | None:
        hit = self._hits.get(key) if key else None
        if hit is None:
            return None
        self._used.add(key)  # type: ignore[arg-type]
        return hit.chunks

    def put_schema(self, key: str | None, table: str, chunks: list[Chunk]) -> None:
        if self.cache and key:
            self._fresh[key] = CachedDoc(table, "", [], chunks)
            self._used.add(key)

    def finish(self) -> None:
        """Store the new entries and drop every entry this call did not use."""
        if self.cache:
            self.cache.put_many(self._fresh)
            self.cache.retain(self._used)
