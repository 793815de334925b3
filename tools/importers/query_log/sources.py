"""What ``import queries`` reads: each SOURCE as a stream of logged statements.

A SOURCE is

- a ``.sql`` file (plain or ``.gz``/``.bz2``/``.zst``): statements split at the semicolons
  sqlglot's tokenizer finds for the dialect (a ``;`` inside a string, a comment or a dollar-quoted
  body does not split), streamed in pieces: at most one statement (``--max-field-bytes``) plus a
  piece is held;
- a ``.jsonl``/``.ndjson`` file: one object a line with ``sql`` (or ``query_text``/``query``),
  optional ``question``, ``count``/``calls``, ``user``, ``start_time``, ``schema`` (the session's,
  for table names written without one: :mod:`.short_names`), ``referenced_tables`` (the tables the
  statement read, in full: BigQuery's JOBS as ``bq`` writes it, a list of ``{project_id,
  dataset_id, table_id}``, or of names); a line is read up to ``--max-line-bytes``;
- a folder holding ``.sql`` files (a dbt ``target/compiled`` or ``target/run``): each file's
  statements; in a ``compiled``/``run`` folder the query inside dbt's ``create ... as (...)`` and
  ``insert into ... select`` counts as the model's query;
- anything else: a CSV/TSV/Parquet export of a warehouse's query-log view (a file, a folder of
  parts or a glob, read as ``import catalog`` reads exports), its format told by its header
  (:mod:`.formats`).

Every source yields :class:`Record` items; a record that cannot be a statement (failed in the
warehouse, too long, not a JSON object) carries ``skipped`` instead of ``text``.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.export_parts import COMPRESSION, export_parts
from schemarag.tools.importers.export_reader import open_decompressed, read_batches
from schemarag.tools.importers.limits import ImportLimits
from schemarag.tools.importers.query_log.formats import ACCEPTED, ALL_HEADERS, Format, detect
from schemarag.tools.importers.safe_paths import inside

PIECE_CHARS = 256 * 1024
_MAGIC = set("*?[")
_JSON_SQL = ("sql", "query_text", "query")
# how exports write "no error": empty, SQL NULL as text, Snowflake's unload NULL \N, code 0
_NO_ERROR = frozenset({"", "null", "none", "\\n", "0", "{}"})


@dataclass
class Record:
    """One logged statement (``text``) or a skipped row (``skipped``), with where it was."""

    where: str
    text: str = ""
    question: str | None = None
    count: int = 1
    user: str | None = None
    start_time: str | None = None
    skipped: str = ""
    last_time: str | None = None  # a stored row's last_seen, on --append
    schema: str | None = None  # the session's schema (``SCHEMA_NAME``), for names written short
    referenced: tuple[str, ...] = ()  # the tables the warehouse says it read, in full (lower case)
    script: str = ""  # a .sql file's statements share its session: a USE there sets it for the rest


@dataclass
class Source:
    """One SOURCE argument resolved: its kind (``sql``, ``jsonl``, ``sql_folder``, ``export``)."""

    spec: str
    kind: str
    paths: list[Path]
    unwrap_ddl: bool = False
    format: str = ""  # the export format once read (snowflake, ...), else the kind


def _strip_codec(name: str) -> str:
    lower = name.lower()
    for suffix in COMPRESSION:
        if lower.endswith(suffix):
            return lower[: -len(suffix)]
    return lower


def resolve_source(spec: str, warnings: list[str]) -> Source:
    """What ``spec`` is (see the module docstring); one-line errors name it and what to pass."""
    path = Path(spec)
    if not (_MAGIC & set(spec)):
        if path.is_file():
            stem = _strip_codec(path.name)
            if stem.endswith(".sql"):
                return Source(spec, "sql", [path])
            if stem.endswith((".jsonl", ".ndjson")):
                return Source(spec, "jsonl", [path])
            if stem.endswith(".json"):
                raise ImportFormatError(
                    f'{spec}: a .json file; write one object a line as .jsonl ({{"sql": ...}})'
                )
        elif path.is_dir():
            sql_files = _sql_files(path, warnings)
            if sql_files:
                dbt = any(p.lower() in ("compiled", "run") for p in path.resolve().parts)
                return Source(spec, "sql_folder", sql_files, unwrap_ddl=dbt, format="dbt" if dbt else "")
        else:
            raise ImportFormatError(
                f"{spec}: not found; give a .sql or .jsonl file, a query-log export (CSV/Parquet: a "
                "file, a folder of parts or a quoted glob) or a dbt target/compiled folder"
            )
    return Source(spec, "export", export_parts(spec, warnings, "query-log export"))


def _sql_files(root: Path, warnings: list[str]) -> list[Path]:
    """``.sql`` files under ``root`` in name order, each inside it (symlinks out are refused)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not _strip_codec(name).endswith(".sql"):
                continue
            candidate = Path(folder) / name
            real = inside(root, candidate, warnings, "SQL file")
            if real is not None and real.is_file():
                found.append(candidate)
    return found


def records(source: Source, dialect: str, limits: ImportLimits) -> Iterator[Record]:
    """Every statement of ``source`` as a :class:`Record` (see the module docstring)."""
    if source.kind in ("sql", "sql_folder"):
        for path in source.paths:
            yield from sql_records(path, dialect, limits)
    elif source.kind == "jsonl":
        yield from jsonl_records(source.paths[0], limits)
    else:
        yield from export_records(source, limits)


# --- .sql -------------------------------------------------------------------------------------


def sql_records(path: Path, dialect: str, limits: ImportLimits) -> Iterator[Record]:
    """The statements of one ``.sql`` file, split at the dialect tokenizer's semicolons.

    Streaming: text is read in pieces and tokenized only when a piece holds a ``;``; the
    complete statements are handed on and the tail kept. A statement longer than
    ``--max-field-bytes`` is skipped (``too_long``); the reader then drops text up to the next
    line that ends in ``;`` and goes on from there."""
    import sqlglot
    from sqlglot.errors import TokenError
    from sqlglot.tokens import TokenType

    tokenizer_class = sqlglot.Dialect.get_or_raise(dialect).tokenizer_class
    cap = limits.field_bytes
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    buffer, line, statements, eof = "", 1, 0, False
    with open_decompressed(path, limits) as stream:
        while not eof:
            raw = stream.read(PIECE_CHARS)
            eof = not raw
            piece = decoder.decode(raw, final=eof)
            buffer += piece
            if not eof and ";" not in piece and len(buffer) <= cap:
                continue
            tokenizer = tokenizer_class()
            try:
                tokens = tokenizer.tokenize(buffer)
            except TokenError:  # an open string or comment at the end: cut at what was read
                tokens = tokenizer.tokens
            start = 0
            for tok in tokens:
                if tok.token_type != TokenType.SEMICOLON:
                    continue
                text = buffer[start : tok.start]
                statements += 1
                yield _statement(path, line + buffer.count("\n", 0, start), text, cap, statements, limits)
                start = tok.end + 1
            line += buffer.count("\n", 0, start)
            buffer = buffer[start:]
            if eof:
                if buffer.strip():
                    statements += 1
                    yield _statement(path, line, buffer, cap, statements, limits)
                break
            if len(buffer) > cap:  # one statement over the limit: skip it, resynchronise
                statements += 1
                yield Record(f"{path}: line {line}", skipped="too_long")
                line, buffer = _resync(stream, decoder, buffer, line)


def _resync(stream, decoder, buffer: str, line: int) -> tuple[int, str]:
    """Drop text up to and including the next ``;`` at a line end; returns (line, tail)."""
    while True:
        end = buffer.find(";\n")
        if end >= 0:
            line += buffer.count("\n", 0, end + 2)
            return line, buffer[end + 2 :]
        line += buffer.count("\n")
        keep = buffer[-1:] if buffer.endswith(";") else ""
        raw = stream.read(PIECE_CHARS)
        if not raw:
            return line, ""
        buffer = keep + decoder.decode(raw)


def _statement(path: Path, line: int, text: str, cap: int, n: int, limits: ImportLimits) -> Record:
    if n > limits.rows:
        raise limits.exceeded(path, "rows", f"the number of statements ({n:,})")
    lead = len(text) - len(text.lstrip())
    where = f"{path}: line {line + text.count(chr(10), 0, lead)}"
    if not text.strip():
        return Record(where, skipped="empty")
    if len(text) > cap:
        return Record(where, skipped="too_long")
    return Record(where, text=text.strip(), script=str(path))


# --- .jsonl -----------------------------------------------------------------------------------


def jsonl_records(path: Path, limits: ImportLimits) -> Iterator[Record]:
    """One record per line of a ``.jsonl`` file (a bad line is skipped as ``bad_line``)."""
    from schemarag.runtime.core.json_limits import loads_bounded

    with open_decompressed(path, limits) as stream:
        number = 0
        while True:
            raw = stream.readline(limits.line_bytes + 1)
            if not raw:
                return
            number += 1
            if number > limits.rows:
                raise limits.exceeded(path, "rows", f"the number of lines ({number:,})")
            if len(raw) > limits.line_bytes and not raw.endswith(b"\n"):
                raise limits.exceeded(path, "line_bytes", f"line {number:,}")
            where = f"{path}: line {number}"
            if not raw.strip():
                continue
            try:
                obj = loads_bounded(raw, where)
            except (ValueError, RecursionError):
                yield Record(where, skipped="bad_line")
                continue
            if not isinstance(obj, dict):
                yield Record(where, skipped="bad_line")
                continue
            text = next((obj[k] for k in _JSON_SQL if isinstance(obj.get(k), str)), None)
            if text is None:
                yield Record(where, skipped="bad_line")
                continue
            question = obj.get("question")
            yield _row_record(
                where,
                text,
                limits,
                question=question if isinstance(question, str) else None,
                count=obj.get("count", obj.get("calls")),
                user=obj.get("user"),
                start_time=obj.get("start_time"),
                schema=obj.get("schema"),
                referenced=obj.get("referenced_tables", obj.get("direct_objects_accessed")),
            )


def _row_record(where: str, text: str, limits: ImportLimits, **extra) -> Record:
    if len(text) > limits.field_bytes:
        return Record(where, skipped="too_long")
    if not text.strip():
        return Record(where, skipped="empty")
    count = _count(extra.get("count"))
    user = extra.get("user")
    start = extra.get("start_time")
    question = extra.get("question")
    schema = extra.get("schema")
    return Record(
        where,
        text=text,
        schema=str(schema)[:512] if isinstance(schema, str) and schema.strip() else None,
        referenced=referenced_tables(extra.get("referenced"), limits.field_bytes),
        question=question.strip()[: limits.field_bytes]
        if isinstance(question, str) and question.strip()
        else None,
        count=count,
        user=str(user)[:512] if user not in (None, "") else None,
        start_time=str(start)[:64] if start not in (None, "") else None,
    )


MAX_REFERENCED = 1_000  # tables one statement may say it read; more are not read


def referenced_tables(value: object, max_bytes: int) -> tuple[str, ...]:
    """The full names (lower case) of the tables a log row says the statement read: BigQuery's
    ``referenced_tables``, an array of ``{project_id, dataset_id, table_id}``, or Snowflake
    ACCESS_HISTORY's ``direct_objects_accessed``, an array of ``{objectName, ...}`` (a list from
    a ``.jsonl`` line, JSON text from a Parquet or a CSV column), or names as a list or
    comma-separated text. A hint only: text that is none of these (or longer than
    ``max_bytes``) is no hint, never a skipped statement.

    >>> referenced_tables('[{"project_id": "p", "dataset_id": "Sales", "table_id": "orders"}]', 99)
    ('p.sales.orders',)
    >>> referenced_tables('[{"objectDomain": "Table", "objectName": "PROD.SAPABAP1.KNA1"}]', 99)
    ('prod.sapabap1.kna1',)
    >>> referenced_tables("p.sales.orders, p.crm.Customers", 99)
    ('p.sales.orders', 'p.crm.customers')
    >>> referenced_tables("[{not json", 99), referenced_tables(None, 99)
    ((), ())
    """
    if isinstance(value, str):
        text = value.strip()
        if not text or len(text) > max_bytes:
            return ()
        if text[0] in "[{":
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                return ()
        else:
            value = text.split(",")
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return ()
    names: list[str] = []
    for item in value[:MAX_REFERENCED]:
        if isinstance(item, dict):
            lower = {str(k).lower(): v for k, v in item.items()}
            parts = [lower.get(k) for k in ("project_id", "dataset_id", "table_id")]
            if not isinstance(parts[-1], str):
                parts = [lower.get("objectname")]
            name = ".".join(str(p).strip() for p in parts if isinstance(p, str) and p.strip())
        else:
            name = item.strip().strip("`\"'[] ") if isinstance(item, str) else ""
        if name and len(name) <= 512:
            names.append(name.lower())
    return tuple(dict.fromkeys(names))


def _count(value: object) -> int:
    """Times run: a positive integer, else 1 (a count of 0 means a statement still logged)."""
    try:
        n = int(float(value)) if value not in (None, "") else 1  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 1
    return max(1, min(n, 1 << 62))


# --- warehouse exports ------------------------------------------------------------------------


def export_records(source: Source, limits: ImportLimits) -> Iterator[Record]:
    """Rows of a query-log export, whose format its header row tells (:mod:`.formats`)."""
    current: tuple[Path, Format] | None = None
    for path, start, cols in read_batches(source.paths, ALL_HEADERS, limits):
        if current is None or current[0] != path:
            fmt = detect(cols)
            if fmt is None:
                raise ImportFormatError(
                    f"{path}: no query column in the header; export the view with its own column "
                    f"names and a header row ({ACCEPTED}; docs/query-history.md has the queries)"
                )
            current = (path, fmt)
            source.format = fmt.name
        fmt = current[1]
        fields = {k: next((cols[h] for h in hs if h in cols), None) for k, hs in fmt.fields().items()}
        present = {k: v for k, v in fields.items() if v is not None and k != "sql"}
        for i, text in enumerate(fields["sql"] or []):
            where = f"{path}: row {start + i}"
            row = {k: v[i] for k, v in present.items()}
            value = row.get
            if _failed(fmt, value):
                yield Record(where, skipped="failed")
                continue
            if text is None:
                yield Record(where, skipped="empty")
                continue
            yield _row_record(
                where,
                text,
                limits,
                question=value("question"),
                count=value("count"),
                user=value("user"),
                start_time=value("start_time"),
                schema=_session_schema(value("database"), value("schema")),
                referenced=value("referenced"),
            )


def _session_schema(database: object, schema: object) -> str | None:
    """``DATABASE.SCHEMA`` of the session (or the schema alone), as the log's columns give it;
    an unload's NULL (``\\N``, ``NULL``) is no schema."""
    database, schema = (str(v).strip() if v is not None and str(v).strip() not in _NULLS else None
                        for v in (database, schema))  # fmt: skip
    if not schema:
        return None
    return f"{database}.{schema}" if database else schema


_NULLS = {"", "\\N", "NULL", "null"}


def _empty_struct(text: str) -> bool:
    """A struct with no value set (a Parquet ``error_result`` of nulls, as JSON text).

    >>> _empty_struct('{"reason": null, "message": null}'), _empty_struct('{"reason": "invalidQuery"}')
    (True, False)
    """
    if not text.startswith("{") or len(text) > 4096:
        return False
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and all(v in (None, "", [], {}) for v in obj.values())


def _failed(fmt: Format, value) -> bool:
    """The warehouse says this statement did not run, or the job was no query."""
    status = value("status")
    if fmt.ok_status and status and status.strip().lower() not in fmt.ok_status:
        return True
    error = value("error")
    if error and error.strip().lower() not in _NO_ERROR and not _empty_struct(error):
        return True
    job = value("job_type")
    return bool(job) and job.strip().upper() != "QUERY"
