"""Turn a database's schema and markdown docs into typed chunks (SDR-REQ-01, -02).

Chunk types: ``database`` (``_index.md``), ``table`` (always, from the schema, so a database
without docs still indexes fully), ``overview`` (Purpose + Business Context + Notes),
``column`` (one per ``### column``; schema-derived for columns the docs do not cover),
``query`` (one per query pattern), ``relationship`` and ``example``.

Bad doc files are skipped with one warning each; the rest still load.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "s", "tables": [
    ...     {"name": "t", "columns": [{"name": "id", "primary_key": True}]}]})
    >>> [c.chunk_type for c in chunk_database(db, {}).chunks]
    ['table', 'column']
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from schemarag.assets.lib.chunk_cache import ChunkCache, ChunkMemo
from schemarag.assets.lib.markdown_docs import ParsedDoc, Section, parse_markdown
from schemarag.assets.lib.sql_refs import tables_in_sql
from schemarag.runtime.artifact.chunk_model import Chunk, estimate_tokens, make_chunk_id
from schemarag.runtime.core.errors import DocParseError
from schemarag.runtime.core.schema import Column, Database, Table
from schemarag.runtime.core.text_tokens import keywords

log = logging.getLogger(__name__)

MAX_DOC_BYTES = 2_000_000
_WORDS = re.compile(r"[\w$]+", re.UNICODE)


@dataclass(frozen=True)
class ChunkingConfig:
    """Every knob that changes the chunks; hashed into the artifact key."""

    version: int = 4  # 4: parser fixes (BOM, setext, line separators, quoted fences, empty ### names)
    schema_column_chunks: bool = True  # column chunks from the schema for undocumented columns
    max_sample_values: int = 12
    max_doc_bytes: int = MAX_DOC_BYTES
    # above this many columns a database is embedded sparingly (assets/lib/embed_plan.py)
    embed_all_columns_up_to: int = 20_000

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass
class ChunkSet:
    """Chunks plus the warnings raised while making them."""

    chunks: list[Chunk]
    warnings: list[str] = field(default_factory=list)
    doc_files: list[str] = field(default_factory=list)
    parsed: list[str] = field(default_factory=list)  # doc files parsed (not replayed from a cache)


def read_doc_bytes(docs: Path, max_bytes: int = MAX_DOC_BYTES) -> tuple[dict[str, bytes], list[str]]:
    """Raw bytes of ``docs/*.md``: ``({file name: bytes}, warnings)``.

    A missing folder is an empty doc set, not an error (SDR-REQ-01). Files over ``max_bytes``
    are skipped with a warning so one runaway file cannot stall a build.
    """
    files: dict[str, bytes] = {}
    warnings: list[str] = []
    if not docs.is_dir():
        return files, warnings
    for path in sorted(docs.glob("*.md")):
        if not path.is_file():
            continue
        try:
            size = path.stat().st_size
            if size > max_bytes:
                warnings.append(f"{path}: skipped: {size} bytes exceeds the {max_bytes}-byte doc limit")
                continue
            files[path.name] = path.read_bytes()
        except OSError as exc:
            warnings.append(f"{path}: skipped: cannot read: {exc.strerror}")
    return files, warnings


def decode_docs(files: dict[str, bytes], label: str = "docs") -> tuple[dict[str, str], list[str]]:
    """UTF-8 decode each file; undecodable ones are skipped with a warning naming the byte."""
    texts: dict[str, str] = {}
    warnings: list[str] = []
    for name, raw in files.items():
        try:
            texts[name] = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            warnings.append(
                f"{label}/{name}: skipped: not UTF-8 (bad byte at offset {exc.start}); save as UTF-8"
            )
    return texts, warnings


class _Builder:
    def __init__(self, db: Database, config: ChunkingConfig) -> None:
        self.db = db
        self.config = config
        self.chunks: list[Chunk] = []
        self.seen: set[str] = set()
        self.id_db = f"{db.name}@{db.schema_version}" if db.schema_version else db.name
        self._names = {t.name.lower(): t.name for t in db.tables}
        # "<docs folder>/": messages name the file as the build found it; a chunk names it
        # relative to the docs folder, so answers (source_url) never carry the build's local path
        self.docs_prefix = ""

    def mentioned(self, text: str) -> set[str]:
        return {self._names[w.lower()] for w in _WORDS.findall(text) if w.lower() in self._names}

    def sql_tables(self, sql: str) -> set[str]:
        return {
            self._names[t.lower()] for t in tables_in_sql(sql, self.db.dialect) if t.lower() in self._names
        }

    def push(self, chunk: Chunk | None) -> None:
        """Append ``chunk`` unless it is None or one with its ID is already in (first one wins)."""
        if chunk is None or chunk.chunk_id in self.seen:
            return
        self.seen.add(chunk.chunk_id)
        self.chunks.append(chunk)

    def make(
        self,
        table: str | None,
        ctype: str,
        column: str | None,
        text: str,
        *,
        title: str,
        source: str = "",
        line: int = 0,
        extra_related: set[str] | None = None,
        extra_keywords: list[str] | None = None,
    ) -> Chunk | None:
        """The chunk for ``text`` (None when it is blank), not yet added."""
        text = text.strip()
        if not text:
            return None
        related = set(self.db.neighbours(table)) if table else set()
        related |= self.mentioned(text)
        related |= extra_related or set()
        related.discard(table or "")
        kw = list(dict.fromkeys([*(extra_keywords or []), *keywords(title + "\n" + text)]))[:40]
        return Chunk(
            chunk_id=make_chunk_id(self.id_db, table, ctype, column, text),
            database=self.db.name,
            table=table,
            chunk_type=ctype,
            column=column,
            text=text,
            related_tables=tuple(sorted(related)),
            keywords=tuple(kw),
            tokens=estimate_tokens(text),
            source_path=source.removeprefix(self.docs_prefix),
            title=title,
            start_line=line,
        )


def _table_chunk_text(db: Database, table: Table, max_samples: int) -> str:
    cols = []
    for c in table.columns:
        piece = f"{c.name} {c.type}"
        if c.primary_key:
            piece += " primary key"
        if c.foreign_key:
            piece += f" references {c.foreign_key.table}.{c.foreign_key.column}"
        cols.append(piece)
    refs_out = sorted({c.foreign_key.table for c in table.columns if c.foreign_key})
    refs_in = sorted(db.neighbours(table.name) - set(refs_out))
    lines = [f"Table {table.name}" + (f": {table.description}" if table.description else "")]
    if table.primary_key:
        lines.append("Primary key: " + ", ".join(table.primary_key))
    lines.append("Columns: " + "; ".join(cols))
    if refs_out:
        lines.append("References: " + ", ".join(refs_out))
    if refs_in:
        lines.append("Referenced by: " + ", ".join(refs_in))
    return "\n".join(lines)


def _schema_column_text(table: Table, c: Column, max_samples: int) -> str:
    # the Column itself, not its name: a lookup by name scans the table (1,500-column tables)
    lines = [f"{table.name}.{c.name} ({c.type})"]
    if c.description:
        lines.append(c.description)
    if c.value_description:
        lines.append(f"Values: {c.value_description}")
    if c.sample_values and not c.pii:
        lines.append("Sample values: " + ", ".join(c.sample_values[:max_samples]))
    if c.foreign_key:
        lines.append(f"References {c.foreign_key.table}.{c.foreign_key.column}")
    return "\n".join(lines)


def _doc_chunks(b: _Builder, doc: ParsedDoc, table: Table, source: str) -> tuple[list[Chunk], set[str]]:
    """The chunks of one table doc, in order and not yet added (the chunk cache replays exactly
    this list), and the lower-cased columns it documented."""
    name = table.name
    documented: set[str] = set()
    overview: list[tuple[Section, str]] = []
    out: list[Chunk] = []

    def emit(chunk: Chunk | None) -> None:
        if chunk is not None:
            out.append(chunk)

    for sec in doc.sections:
        key = sec.title.strip().lower()
        if key in ("purpose", "business context", "notes"):
            overview.append((sec, f"{sec.title}:\n{sec.body}"))
        elif key == "columns":
            for sub in sec.children:
                col = table.column(sub.title.strip("` "))
                col_name = col.name if col else sub.title.strip("` ")
                if not col_name:  # '### ' or '### ``' names no column; a column chunk needs one
                    continue
                if col:
                    documented.add(col.name.lower())
                emit(
                    b.make(
                        name,
                        "column",
                        col_name,
                        f"{name}.{col_name}\n{sub.body}",
                        title=f"{name}.{col_name}",
                        source=source,
                        line=sub.start_line,
                        extra_keywords=[col_name.lower()],
                    )
                )
        elif key in ("common queries", "queries", "query patterns"):
            for sub in sec.children:
                extra = set().union(*(b.sql_tables(s) for s in sub.sql_blocks)) if sub.sql_blocks else set()
                emit(
                    b.make(
                        name,
                        "query",
                        None,
                        f"{name}: {sub.title}\n{sub.body}",
                        title=f"{name}: {sub.title}",
                        source=source,
                        line=sub.start_line,
                        extra_related=extra,
                    )
                )
        elif key in ("relationships", "relationship"):
            emit(
                b.make(
                    name,
                    "relationship",
                    None,
                    f"{name} relationships\n{sec.body}",
                    title=f"{name}: Relationships",
                    source=source,
                    line=sec.start_line,
                )
            )
        elif key in ("examples", "example"):
            emit(
                b.make(
                    name,
                    "example",
                    None,
                    f"{name} examples\n{sec.body}",
                    title=f"{name}: Examples",
                    source=source,
                    line=sec.start_line,
                )
            )
        else:  # unknown H2 sections still carry meaning: keep them with the overview
            overview.append((sec, f"{sec.title}:\n{sec.body}"))
    if overview:
        text = f"Table {name}\n" + "\n\n".join(t for _, t in overview)
        emit(
            b.make(
                name,
                "overview",
                None,
                text,
                title=f"{name}: overview",
                source=source,
                line=overview[0][0].start_line,
            )
        )
    return out, documented


def _schema_specs(
    db: Database, table: Table, documented: set[str], config: ChunkingConfig
) -> list[tuple[str, str | None, str, str, str]]:
    """``(type, column, text, title, keyword)`` of each chunk made from ``table``'s schema: its
    table chunk, and a column chunk per column its docs do not cover. These, the table's
    neighbours and the database context are everything those chunks depend on (the cache key)."""
    specs: list[tuple[str, str | None, str, str, str]] = [
        (
            "table",
            None,
            _table_chunk_text(db, table, config.max_sample_values),
            f"{table.name}: table",
            table.name.lower(),
        )
    ]
    if config.schema_column_chunks:
        for col in table.columns:
            if col.name.lower() not in documented:
                text = _schema_column_text(table, col, config.max_sample_values)
                specs.append(("column", col.name, text, f"{table.name}.{col.name}", col.name.lower()))
    return specs


def _parse_doc(b: _Builder, fname: str, text: str, source: str) -> tuple[Table | None, ParsedDoc | None]:
    """A table doc's table and parse; ``_index.md`` adds its database chunk here (None, None)."""
    db = b.db
    if fname == "_index.md":
        doc = parse_markdown(text, source, index=True)
        body = "\n\n".join(f"{s.title}:\n{s.body}" for s in doc.sections) or doc.title
        b.push(
            b.make(
                None,
                "database",
                None,
                f"Database {db.name}\n{body}",
                title=f"{db.name}: database",
                source=source,
                line=1,
            )
        )
        return None, None
    doc = parse_markdown(text, source)
    table = db.table(doc.name)
    if table is None:
        raise DocParseError(f"{source}: table {doc.name!r} is not in the schema of {db.name!r}")
    return table, doc


def chunk_database(
    db: Database,
    doc_files: dict[str, str],
    config: ChunkingConfig | None = None,
    docs_label: str = "docs",
    cache: ChunkCache | None = None,
) -> ChunkSet:
    """Chunks for ``db`` from its schema and the given doc texts (``{file name: text}``).

    With ``cache``, a table doc whose text, table and database context are unchanged is not
    parsed, and a table whose schema-derived chunk texts are unchanged is not re-tokenized:
    their chunks are replayed from the cache (:mod:`.chunk_cache`), which then keeps only what
    this call used. The chunks are the same either way.
    """
    config = config or ChunkingConfig()
    b = _Builder(db, config)
    b.docs_prefix = f"{docs_label}/"
    memo = ChunkMemo(
        cache, db, config.to_json(), docs_label, {f: t for f, t in doc_files.items() if f != "_index.md"}
    )
    warnings: list[str] = []
    used: list[str] = []
    parsed: list[str] = []
    documented: dict[str, set[str]] = {}
    for fname in sorted(doc_files):
        hit = memo.doc(fname)
        if hit is None:
            parsed.append(fname)
            source = f"{docs_label}/{fname}"
            try:
                table, doc = _parse_doc(b, fname, doc_files[fname], source)
            except DocParseError as exc:
                warnings.append(f"{exc}; file skipped")  # returned, reported once by the caller
                continue
            if table is None or doc is None:  # _index.md: its database chunk is in
                used.append(fname)
                continue
            hit = memo.put_doc(fname, table, *_doc_chunks(b, doc, table, source))
        used.append(fname)
        for chunk in hit.chunks:
            b.push(chunk)
        documented.setdefault(hit.table, set()).update(hit.documented)
    specs = {t.name: _schema_specs(db, t, documented.get(t.name, set()), config) for t in db.tables}
    keys = memo.schema_keys(specs)
    for table in db.tables:
        chunks = memo.schema(keys.get(table.name))
        if chunks is None:
            made = [
                b.make(table.name, ctype, col, text, title=title, extra_keywords=[kw])
                for ctype, col, text, title, kw in specs[table.name]
            ]
            chunks = [c for c in made if c is not None]
            memo.put_schema(keys.get(table.name), table.name, chunks)
        for chunk in chunks:
            b.push(chunk)
    memo.finish()
    return ChunkSet(chunks=b.chunks, warnings=warnings, doc_files=used, parsed=parsed)


def chunk_from_disk(db: Database, docs: Path, config: ChunkingConfig | None = None) -> ChunkSet:
    """Read ``docs`` and chunk; read warnings come first in the result."""
    config = config or ChunkingConfig()
    raw, read_warnings = read_doc_bytes(docs, config.max_doc_bytes)
    files, decode_warnings = decode_docs(raw, str(docs))
    read_warnings += decode_warnings
    result = chunk_database(db, files, config, docs_label=str(docs))
    result.warnings[:0] = read_warnings
    for w in result.warnings:  # no Dagster run here: the log is the only place they are reported
        log.warning(w)
    return result
