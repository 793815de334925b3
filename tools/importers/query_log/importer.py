"""``schemarag import queries``: a warehouse's query log -> the stored history of one database.

Reads every SOURCE (:mod:`.sources`), parses each statement once (:mod:`.statements`), keeps one
row per distinct normalized statement and question with its counts, and writes the versioned
layout of :mod:`schemarag.assets.lib.query_history` beside the database's schema. A re-import
replaces the history; ``append=True`` adds to it (the stored rows are parsed again with the new
ones, so they are resolved against the current schema and deduplicated together).

Memory follows the number of *distinct* statements, not the size of the log: each distinct row
goes to a temporary spool file on first sight, and only its digest, counts and seen-times stay in
memory (about 200 bytes each); identical raw texts are parsed once (a bounded cache).

Bad statements never stop an import: they are counted per reason and reported in one summary
line (``--verbose`` lists each). What does stop it, with one line naming the file and what to
pass: a missing source, a header that is no query-log view, a log that mostly does not parse in
the dialect while another dialect parses it, a limit of :mod:`..limits` reached, or a log of
which no statement could be kept (the previous history is then left as it was).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from schemarag.assets.lib import query_history as layout
from schemarag.runtime.core.errors import ImportFormatError, SchemaragError, SQLValidationError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import did_you_mean, list_databases, schema_path
from schemarag.runtime.core.schema import Database, load_schema
from schemarag.tools.importers.limits import DEFAULT_LIMITS, ImportLimits, Warnings
from schemarag.tools.importers.query_log.short_names import (
    AMBIGUOUS,
    RULES,
    check_session_schema,
    schema_set_by,
)
from schemarag.tools.importers.query_log.sources import Record, Source, records, resolve_source
from schemarag.tools.importers.query_log.statements import (
    SKIP_REASONS,
    Parsed,
    normalize,
    parse_statements,
    resolve,
    sql_limits,
)

log = logging.getLogger(__name__)

DIALECT_CHECK_AFTER = 200  # statements of one source before the wrong-dialect check first runs
_SAMPLES = 20  # unparsable statements kept per source for that check
_CACHE = 100_000  # raw texts remembered (digest -> outcome) before the cache starts over
_MAPPINGS = 10_000  # distinct (short name, table, rule) remembered for --verbose
_USERS_CAP = 10_000  # distinct users counted exactly per statement; above, the count stops
_TOKEN = re.compile(r"<Token token_type: [^,]*, text: ([^,]*),[^>]*>")  # sqlglot's repr -> 'text'
_OTHER_DIALECTS = ("postgres", "bigquery", "snowflake", "mysql", "tsql", "duckdb", "databricks", "redshift")


class Outcome(NamedTuple):
    """What one statement of a logged text came to: ``parsed`` (None when it was skipped for
    ``reason``, with ``detail``), how its short names were qualified (``rules``: ``(written,
    table, rule) -> times``) and, for a ``USE`` / ``SET search_path`` statement, the schema it
    makes the session's (``session``) for the statements after it."""

    parsed: Parsed | None
    reason: str
    detail: str = ""
    rules: Counter | None = None
    session: str | None = None


@dataclass
class SourceReport:
    path: str
    format: str
    rows: int = 0
    kept: int = 0


# statements skipped for names written short that several schemas hold: what they are, what to pass
_AMBIGUOUS_FIX = (
    "name only tables several schemas hold: pass --default-schema, "
    "or each statement's schema or referenced_tables"
)


@dataclass
class QueryImportReport:
    """What one import did: where, how many kept, skipped per reason, per source."""

    database: str
    folder: Path
    rows: int = 0  # distinct rows stored
    statements: int = 0  # statements kept from the sources (before dedup)
    runs: int = 0  # sum of the stored counts (a pg_stat_statements row counts its calls)
    skipped: Counter = field(default_factory=Counter)
    sources: list[SourceReport] = field(default_factory=list)
    skipped_list: list[str] = field(default_factory=list)  # for --verbose, bounded
    warnings: list[str] = field(default_factory=list)
    ambiguous: int = 0  # of the no_known_table skips: names several schemas hold, written short
    # table names written short in the statements kept, per rule that qualified them (RULES),
    # and per (name as written, table, rule) for --verbose (at most _MAPPINGS distinct ones)
    short_names: Counter = field(default_factory=Counter)
    qualified: Counter = field(default_factory=Counter)

    def count_qualified(self, names: Counter) -> None:
        """Count one kept statement's short names (``(written, table, rule)`` -> times)."""
        for (written, table, rule), n in names.items():
            self.short_names[rule] += n
            if (written, table, rule) in self.qualified or len(self.qualified) < _MAPPINGS:
                self.qualified[(written, table, rule)] += n

    def qualified_lines(self, limit: int) -> list[str]:
        """``--verbose``: the ``limit`` most frequent names written short and what each became."""
        return [
            f"{written} -> {table} ({RULES[rule]}): {n:,} time(s)"
            for (written, table, rule), n in self.qualified.most_common(limit)
        ]

    def summary(self) -> str:
        """One line: kept, distinct, where, how the table names written short were qualified (by
        which rule of :mod:`.short_names`, so a user can check what a log's ``FROM orders`` was
        taken to mean), and skipped per reason."""
        line = (
            f"imported {self.statements:,} statement(s) of {self.database} ({self.runs:,} runs) as "
            f"{self.rows:,} distinct into {self.folder}"
        )
        qualified = sum(self.short_names.values())
        if qualified:
            how = ", ".join(f"{n:,} by {RULES[r]}" for r, n in self.short_names.most_common())
            line += f"; {qualified:,} table name(s) written short were qualified: {how}"
        total = sum(self.skipped.values())
        if total:
            parts = ", ".join(f"{n:,} {SKIP_REASONS[r]}" for r, n in self.skipped.most_common())
            line += f"; skipped {total:,}: {parts} (--verbose lists them)"
        if self.ambiguous:
            line += f"; {self.ambiguous:,} of them {_AMBIGUOUS_FIX} (docs/query-history.md)"
        return line


@dataclass
class _Row:
    seq: int
    count: int
    users: set[int]
    extra_users: int
    first: str | None
    last: str | None


class _Store:
    """Distinct rows: digest -> counts in memory, the row itself in a spool file."""

    def __init__(self, spool_dir: Path) -> None:
        self.rows: dict[bytes, _Row] = {}
        self.spool = tempfile.TemporaryFile(mode="w+", encoding="utf-8", dir=spool_dir)  # noqa: SIM115
        self.sources: set[str] = set()

    def add(self, parsed: Any, question: str | None, source: str) -> bytes:
        key = hashlib.blake2b(f"{parsed.sql}\x00{question or ''}".encode(), digest_size=16).digest()
        if key not in self.rows:
            self.rows[key] = _Row(len(self.rows), 0, set(), 0, None, None)
            row = {
                "sql": parsed.sql,
                "fingerprint": hashlib.sha256(parsed.sql.encode()).hexdigest()[:16],
                "question": question,
                "tables": parsed.tables,
                "unknown_tables": parsed.unknown_tables,
                "joins": [dict(zip(_JOIN_KEYS, j, strict=True)) for j in parsed.joins],
                "columns": [{"table": t, "column": c} for t, c in parsed.columns],
                "source": source,
            }
            self.spool.write(json.dumps(row) + "\n")
        return key

    def count(self, key: bytes, record: Record, users: int = 0) -> None:
        row = self.rows[key]
        row.count += record.count
        row.extra_users += users
        if record.user is not None and len(row.users) < _USERS_CAP:
            row.users.add(hash(record.user))
        for t in (record.start_time, record.last_time):
            if t:
                row.first = t if row.first is None or t < row.first else row.first
                row.last = t if row.last is None or t > row.last else row.last

    def write(self, path: Path) -> int:
        """Stream the spool into ``queries.parquet`` at ``path``; returns the sum of counts."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = layout.arrow_schema()
        by_seq = sorted(self.rows.values(), key=lambda r: r.seq)
        total = 0
        self.spool.seek(0)
        with pq.ParquetWriter(path, schema, compression="zstd") as writer:
            batch: list[dict[str, Any]] = []
            for row, line in zip(by_seq, self.spool, strict=True):
                item = json.loads(line)
                item.update(
                    count=row.count,
                    users=len(row.users) + row.extra_users,
                    first_seen=row.first,
                    last_seen=row.last,
                )
                total += row.count
                batch.append(item)
                if len(batch) >= 10_000:
                    writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                    batch = []
            if batch or not by_seq:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        self.spool.close()
        return total


_JOIN_KEYS = ("left_table", "left_column", "right_table", "right_column")


def _schema(data: Path, db: str, tenant: str | None) -> tuple[Database, Path]:
    path = schema_path(data, db)
    if not path.is_file():
        hint = did_you_mean(db, list_databases(data))
        raise ImportFormatError(
            f"{path}: no schema for database {db!r}{hint}; import the schema first (schemarag import "
            "catalog/dbt/...) or pass --data DIR holding <db>.json"
        )
    database = load_schema(path)
    if database.tenant is not None and database.tenant != tenant:
        raise ImportFormatError(
            f"{path}: database {db!r} belongs to tenant {database.tenant!r}; pass --tenant {database.tenant}"
        )
    return database, path


def _dialect(name: str) -> str:
    import sqlglot

    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        raise ImportFormatError(
            f"--dialect {name!r} is not a SQL dialect sqlglot knows; pass one of postgres, bigquery, "
            "snowflake, redshift, databricks, mysql, duckdb, tsql, sqlite"
        ) from None
    return name


class _Run:
    """One import: the store, the counters and the parse cache."""

    def __init__(
        self,
        db: Database,
        dialect: str,
        keep_literals: bool,
        limits: ImportLimits,
        report,
        default_schema: str | None = None,
    ) -> None:
        self.db, self.dialect, self.keep = db, dialect, keep_literals
        self.default_schema = default_schema  # --default-schema: a record's own schema wins
        self.limits, self.report = limits, report
        self.sql_limits = sql_limits(limits.field_bytes)
        self.cache: dict[bytes, list[Outcome]] = {}  # raw text -> outcomes
        self.sessions: dict[str, str] = {}  # a .sql file -> the schema its last USE made the session's
        self.resolutions: dict[bytes, Parsed] = {}  # normalized text -> its resolution
        self.store: _Store | None = None

    def skip(self, reason: str, where: str, detail: str = "") -> None:
        self.report.skipped[reason] += 1
        if len(self.report.skipped_list) < self.limits.warnings:
            self.report.skipped_list.append(
                f"{where}: {SKIP_REASONS[reason]}" + (f": {detail[:200]}" if detail else "")
            )

    def outcomes(
        self, text: str, unwrap: bool, schema: str | None = None, referenced: tuple[str, ...] = ()
    ) -> list[Outcome]:
        """One :class:`Outcome` per statement of ``text`` (cached; ``schema``: the session's,
        ``referenced``: the tables the log says the statement read, both for table names written
        short). A ``USE`` among them is the session's schema for the statements after it; the
        rules travel with each outcome, so a statement repeated in the log counts them each time."""
        key = f"{unwrap}\x00{schema or ''}\x00{','.join(referenced)}\x00{text}"
        digest = hashlib.blake2b(key.encode(), digest_size=16).digest()
        hit = self.cache.get(digest)
        if hit is not None:
            return hit
        try:
            trees = parse_statements(text, self.dialect, self.sql_limits)
        except SQLValidationError as exc:
            out = [Outcome(None, "too_long" if "too long" in str(exc) else "unparsable", str(exc))]
        except RecursionError:
            out = [Outcome(None, "unparsable", "nested too deeply")]
        except Exception as exc:
            first = str(exc).replace("\x1b[4m", "").replace("\x1b[0m", "").splitlines()
            detail = _TOKEN.sub(r"'\1'", first[0]) if first else type(exc).__name__
            out = [Outcome(None, "unparsable", detail)]
        else:
            out = []
            for tree in trees:
                if (session := schema_set_by(tree, self.dialect)) is not None:
                    schema = session  # the statements after it run in that schema
                    out.append(Outcome(None, "not_a_query", tree.key.upper(), session=session))
                    continue
                rules: Counter = Counter()
                try:
                    parsed = self.resolved(tree, unwrap, schema, referenced, rules)
                except RecursionError:
                    out.append(Outcome(None, "unparsable", "nested too deeply"))
                    continue
                out.append(Outcome(parsed, parsed.skipped, parsed.detail, rules))
            out = out or [Outcome(None, "empty")]
        if len(self.cache) >= _CACHE:
            self.cache.clear()
        self.cache[digest] = out
        return out

    def resolved(
        self,
        tree: Any,
        unwrap: bool,
        schema: str | None = None,
        referenced: tuple[str, ...] = (),
        rules: Counter | None = None,
    ) -> Parsed:
        """:func:`.statements.analyze_tree`, resolving each normalized text once: the same query
        with other literals (most of a log) costs a parse, not a resolution. The normalized text
        names its tables in full (the session's ``schema`` and ``referenced`` applied), so it is
        the cache key; ``rules`` counts how this statement's short names were qualified (the
        normalizing runs per statement, so a shared resolution does not share them)."""
        query, sql = normalize(tree, self.dialect, self.keep, unwrap, self.db, schema, referenced, rules)
        if query is None:
            return Parsed(skipped="not_a_query", detail=sql)
        digest = hashlib.blake2b(sql.encode(), digest_size=16).digest()
        hit = self.resolutions.get(digest)
        if hit is None:
            hit = resolve(query, sql, self.db, self.dialect, self.sql_limits)
            if len(self.resolutions) >= _CACHE:
                self.resolutions.clear()
            self.resolutions[digest] = hit
        return hit

    def take(self, record: Record, source: Source, stats: SourceReport, users: int = 0) -> tuple[int, int]:
        """Count ``record`` in; returns ``(statements kept, statements unparsable)``."""
        if record.skipped:
            self.skip(record.skipped, record.where)
            return 0, 0
        kept = bad = 0
        script = record.script
        schema = record.schema or (self.sessions.get(script) if script else None) or self.default_schema
        outcomes = self.outcomes(record.text, source.unwrap_ddl, schema, record.referenced)
        for parsed, reason, detail, rules, session in outcomes:
            if session is not None and script:
                self.sessions[script] = session  # for the script's statements after this one
            if reason:
                self.skip(reason, record.where, detail)
                self.report.ambiguous += reason == "no_known_table" and detail.startswith(AMBIGUOUS)
                bad += reason == "unparsable"
                continue
            assert self.store is not None
            key = self.store.add(parsed, record.question, source.format or source.kind)
            self.store.count(key, record, users)
            if rules:
                self.report.count_qualified(rules)
            kept += 1
        stats.kept += kept
        return kept, bad


def _wrong_dialect(where: str, dialect: str, attempts: int, bad: int, samples: list[str]) -> str:
    """A one-line error when most statements do not parse in ``dialect`` but do in another."""
    from schemarag.app.querygen.sql_bounds import parse_bounded

    if attempts < 5 or bad * 2 <= attempts or not samples:
        return ""
    best, best_ok = "", 0
    for other in _OTHER_DIALECTS:
        if other == dialect:
            continue
        ok = 0
        for text in samples:
            try:
                parse_bounded(text, other, sql_limits(max(len(text), 1)))
                ok += 1
            except Exception:
                continue
        if ok > best_ok:
            best, best_ok = other, ok
    if not best or best_ok * 5 < len(samples) * 4:
        return ""
    return (
        f"{where}: {bad:,} of {attempts:,} statements do not parse as {dialect} SQL, and {best_ok} of "
        f"{len(samples)} of them parse as {best}; pass --dialect {best}"
    )


def import_queries(
    sources: list[str],
    *,
    db: str,
    data: Path,
    tenant: str | None = None,
    dialect: str | None = None,
    append: bool = False,
    keep_literals: bool = False,
    limits: ImportLimits = DEFAULT_LIMITS,
    default_schema: str | None = None,
) -> QueryImportReport:
    """Import the query log ``sources`` as the history of ``db`` (see the module docstring);
    ``default_schema``: the session's schema of every statement whose source does not say it
    (a ``search_path``, a default dataset), for table names written without one."""
    check_name(db, "database")
    if tenant is not None:
        check_name(tenant, "tenant")
    if not sources:
        raise ImportFormatError(
            "import queries: give at least one SOURCE (.sql, .jsonl, an export or a folder)"
        )
    database, schema_file = _schema(data, db, tenant)
    dialect = _dialect(dialect or database.dialect)
    if default_schema is not None:
        default_schema = check_session_schema(database, default_schema)
    folder = layout.history_dir(data, db, tenant)
    report = QueryImportReport(database=db, folder=folder, warnings=Warnings(limits))
    resolved = [resolve_source(spec, report.warnings) for spec in sources]  # all errors before work
    previous = layout.read_manifest(folder) if append else None
    if previous is not None and previous.get("dialect") != dialect:
        raise ImportFormatError(
            f"{folder / layout.MANIFEST}: the history was imported as {previous.get('dialect')} SQL; pass "
            f"--dialect {previous.get('dialect')}, or re-import without --append to replace it"
        )
    folder.mkdir(parents=True, exist_ok=True)
    run = _Run(database, dialect, keep_literals, limits, report, default_schema)
    run.store = _Store(folder)
    if previous is not None:
        _take_previous(run, folder)
    for source in resolved:
        stats = SourceReport(source.spec, source.kind)
        report.sources.append(stats)
        attempts = bad = 0
        samples: list[str] = []
        for record in records(source, dialect, limits):
            stats.rows += 1
            kept, unparsable = run.take(record, source, stats)
            if not record.skipped:
                attempts += 1
                bad += unparsable > 0 and kept == 0
                if unparsable and len(samples) < _SAMPLES:
                    samples.append(record.text[:65_536])
            if attempts == DIALECT_CHECK_AFTER:
                _raise_if(_wrong_dialect(source.spec, dialect, attempts, bad, samples))
        stats.format = source.format or source.kind
        _raise_if(_wrong_dialect(source.spec, dialect, attempts, bad, samples))
    report.statements = sum(s.kept for s in report.sources)
    if not run.store.rows:
        run.store.spool.close()
        raise ImportFormatError(
            f"{', '.join(sources)}: no statement kept ({_skips(report)}); the history in {folder} was "
            "left as it was ("
            + (f"{report.ambiguous:,} {_AMBIGUOUS_FIX}; " if report.ambiguous else "")
            + "check --db and --dialect; --verbose lists the statements)"
        )
    tmp = folder / f".{layout.QUERIES}.tmp"
    try:
        total = run.store.write(tmp)
        import sqlglot

        literals = "kept" if keep_literals else "placeholders"
        if previous is not None and previous.get("literals") not in (None, literals):
            literals = "mixed"
        layout.publish(
            folder,
            tmp,
            {
                "database": db,
                "tenant": tenant,
                "dialect": dialect,
                "literals": literals,
                "schema_sha256": layout.file_sha256(schema_file),
                "rows": len(run.store.rows),
                "statements": total,
                "imported_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "sqlglot": sqlglot.__version__,
                "sources": [
                    *((previous or {}).get("sources", [])),
                    *(
                        {"path": s.path, "format": s.format, "rows": s.rows, "kept": s.kept}
                        for s in report.sources
                    ),
                ],
                "skipped": dict(report.skipped),
            },
        )
    finally:
        tmp.unlink(missing_ok=True)
    report.rows, report.runs = len(run.store.rows), total
    for warning in report.warnings:
        log.warning("%s", warning)
    return report


def _raise_if(message: str) -> None:
    if message:
        raise ImportFormatError(message)


def _skips(report: QueryImportReport) -> str:
    total = sum(report.skipped.values())
    if not total:
        return "the sources hold no statements"
    return f"{total:,} skipped: " + ", ".join(
        f"{n:,} {SKIP_REASONS[r]}" for r, n in report.skipped.most_common()
    )


def _take_previous(run: _Run, folder: Path) -> None:
    """The stored rows, parsed again against the current schema, as the first statements."""
    try:
        stored = layout.open_queries(folder)
    except SchemaragError as exc:
        raise ImportFormatError(f"{exc}; re-import without --append") from None
    source = Source(str(folder / layout.QUERIES), "history", [])
    stats = SourceReport(source.spec, "history")
    for batch in stored.iter_batches(batch_size=10_000):
        for item in batch.to_pylist():
            source.format = item.get("source") or "history"
            record = Record(
                f"{folder / layout.QUERIES}: stored row",
                text=item["sql"],
                question=item.get("question"),
                count=max(1, int(item.get("count") or 1)),
                start_time=item.get("first_seen"),
            )
            record.last_time = item.get("last_seen")
            run.take(record, source, stats, users=int(item.get("users") or 0))
