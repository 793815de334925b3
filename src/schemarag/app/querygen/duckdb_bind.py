"""Bind a query in DuckDB against empty tables built from the schema, without executing it.

sqlglot's qualifier knows names but not types, GROUP BY rules or function signatures; DuckDB's
binder does. The query is transpiled from the database's dialect, table qualifiers
(``catalog.schema.``) are dropped because the empty tables live in DuckDB's default schema,
and ``EXPLAIN`` binds and plans without running anything. The connection has external access,
extension auto-install and extension auto-load disabled and its configuration locked
(:data:`SANDBOX`), so even a query that slipped past the allow-list cannot touch files, reach the
network, or make DuckDB download an extension (a ``sqlite_scan(...)`` in untrusted SQL used to
trigger "trying to automatically install sqlite_scanner").

DuckDB is stricter than some source dialects (SQLite adds text to numbers; MySQL allows bare
columns next to aggregates), so for them only name errors are errors; a type or function mismatch
leaves the query *unchecked* (``unchecked_reason``), as does a dialect DuckDB cannot emulate or
SQL it cannot transpile: the binder did not confirm the query, so no caller may call it valid.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from schemarag.app.querygen.pseudo_columns import pseudo_columns
from schemarag.runtime.core.schema import Database

log = logging.getLogger(__name__)

# Settings of every binder connection; ``lock_configuration`` is set after the tables exist, so the
# query under test cannot undo any of them.
SANDBOX = {
    "enable_external_access": False,  # no files, no httpfs, no ATTACH
    "autoinstall_known_extensions": False,  # never download an extension because a query named it
    "autoload_known_extensions": False,  # never load one either
    "allow_community_extensions": False,
}
# Dialects sqlglot can transpile to DuckDB well enough for binding to mean something.
BIND_DIALECTS = frozenset({"duckdb", "postgres", "sqlite", "mysql", "snowflake", "bigquery", "tsql"})
# Column types that mean "not known" (importers write them when the source gives no type: a dbt
# yml without data_type); bound as VARCHAR, so type mismatches on them leave a query unchecked.
UNKNOWN_TYPES = frozenset({"UNKNOWN"})
# Dialects that reject a bare column next to an aggregate, as DuckDB does.
STRICT_GROUP_BY = frozenset({"duckdb", "postgres", "snowflake", "bigquery", "tsql"})


@dataclass
class BindResult:
    """``checked``: the binder ran to a verdict (bound, or a definite error in ``errors``);
    otherwise ``unchecked_reason`` says why it could not."""

    checked: bool
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unchecked_reason: str | None = None


class _Catalog:
    """One in-memory DuckDB connection holding a schema's empty tables, shared under a lock."""

    def __init__(self, db: Database) -> None:
        import duckdb

        self.lock = threading.Lock()
        self.con = duckdb.connect(":memory:", config=dict(SANDBOX))
        self._types: dict[str, str] = {}
        # a column whose type the source did not say (a dbt yml without data_type): its empty
        # table column is VARCHAR, so a type mismatch may be ours, not the query's
        self.unknown_types = any(
            c.type.strip().upper() in UNKNOWN_TYPES for t in db.tables for c in t.columns
        )
        for table in db.tables:
            cols = ", ".join(
                [f"{_quote(c.name)} {self._duck_type(c.type, db.dialect)}" for c in table.columns]
                + [
                    f"{_quote(p)} VARCHAR"
                    for p in pseudo_columns(table.name, db.dialect)
                    if table.column(p) is None
                ]
            )
            self.con.execute(f"CREATE TABLE {_quote(table.name)} ({cols})")
        self.con.execute("SET lock_configuration = true")

    def _duck_type(self, type_text: str, dialect: str) -> str:
        """The DuckDB spelling of a column type; VARCHAR when DuckDB has no equivalent."""
        key = f"{dialect}:{type_text}"
        if key not in self._types:
            self._types[key] = self._convert(type_text, dialect)
        return self._types[key]

    def _convert(self, type_text: str, dialect: str) -> str:
        import duckdb
        from sqlglot import exp
        from sqlglot.errors import SqlglotError

        if not type_text.strip():
            return "VARCHAR"
        try:
            dtype = exp.DataType.build(type_text, dialect=dialect, udt=True)
            if dtype.is_type(exp.DataType.Type.USERDEFINED):
                return "VARCHAR"
            candidate = dtype.sql("duckdb")
            self.con.execute(f"SELECT CAST(NULL AS {candidate})")
        except (SqlglotError, duckdb.Error, ValueError):
            return "VARCHAR"
        return candidate


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _schema_key(db: Database) -> str:
    return hashlib.sha256(db.model_dump_json(include={"dialect", "tables"}).encode()).hexdigest()


_MAX_CATALOGS = 16
_catalogs: dict[str, _Catalog] = {}
_catalogs_lock = threading.Lock()


def _catalog(db: Database) -> _Catalog:
    """The cached catalog for ``db`` (keyed by a hash of its tables, so edits rebuild it)."""
    key = _schema_key(db)
    with _catalogs_lock:
        if key not in _catalogs:
            if len(_catalogs) >= _MAX_CATALOGS:
                _catalogs.pop(next(iter(_catalogs))).con.close()
            _catalogs[key] = _Catalog(db)
        return _catalogs[key]


def bind_check(tree: Any, db: Database, copy: bool = True) -> BindResult:
    """Bind the parsed query ``tree`` (in ``db.dialect``) in DuckDB; see the module docstring.

    ``copy=False`` lets the caller hand over a tree it no longer needs (its table qualifiers are
    then dropped in place), saving a deep copy that costs more than the bind on large queries."""
    import duckdb
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, SqlglotError

    if db.dialect not in BIND_DIALECTS:
        return _unchecked(f"DuckDB bind skipped: dialect {db.dialect!r} cannot be emulated")
    work = tree.copy() if copy else tree
    for table in work.find_all(exp.Table):
        table.set("db", None)
        table.set("catalog", None)
    for select in work.find_all(exp.Select):
        select.set("hint", None)  # a reviewed optimizer hint (comment_policy) plans, never binds
    try:
        duck_sql = work.sql(dialect="duckdb", unsupported_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        return _unchecked(f"DuckDB bind skipped: cannot transpile to DuckDB ({exc})")
    catalog = _catalog(db)
    try:
        with catalog.lock:
            catalog.con.execute("EXPLAIN " + duck_sql)
    except duckdb.Error as exc:
        result = _classify(exc, db.dialect, catalog.unknown_types)
        if result.errors and db.dialect == "bigquery" and work.find(exp.Unnest) is not None:
            field = _unnested_field(str(exc), db)
            if field:
                return _unchecked(
                    f"DuckDB could not bind {field!r}: a field of an UNNESTed ARRAY<STRUCT>, which BigQuery "
                    "exposes as a column and DuckDB does not (not counted as an error)"
                )
        return result
    return BindResult(True)


def _unnested_field(message: str, db: Database) -> str | None:
    """The column a binder error names when the schema knows it as a nested field (a BigQuery
    ``field_path`` column ``event_params.key``): ``SELECT value.int_value FROM UNNEST(event_params)
    WHERE key = 'x'`` is valid BigQuery that DuckDB's UNNEST (one struct column) cannot bind."""
    import re

    m = re.search(r'column "([^"]+)" not found', message)
    if m is None:
        return None
    name = m.group(1).lower()
    nested = any(c.name.lower().endswith("." + name) for t in db.tables for c in t.columns if "." in c.name)
    return m.group(1) if nested else None


def _classify(exc: Exception, dialect: str, unknown_types: bool = False) -> BindResult:
    """Decide whether a DuckDB bind error is a real error for the source dialect (with columns of
    unknown type in the schema, a type or function mismatch is not: see ``UNKNOWN_TYPES``)."""
    import duckdb

    message = str(exc).strip().splitlines()[0]
    text = f"DuckDB could not bind the query: {message}"
    if isinstance(exc, duckdb.ParserException):
        return _unchecked(f"DuckDB bind skipped: transpiled SQL did not parse ({message})")
    name_error = ("not found in FROM clause", "does not exist", "Ambiguous reference")
    is_name_error = any(s in message for s in name_error) and "Function with name" not in message
    if unknown_types and not is_name_error and "must appear in the GROUP BY clause" not in message:
        return _unchecked(
            f"{text} (the schema has columns of unknown type, so a type mismatch is not an error)"
        )
    if dialect == "duckdb":
        return BindResult(True, errors=[text])
    if is_name_error:
        return BindResult(True, errors=[text])
    if "must appear in the GROUP BY clause" in message and dialect in STRICT_GROUP_BY:
        return BindResult(True, errors=[text])
    return _unchecked(f"{text} (may be a {dialect}/DuckDB difference, so it is not counted as an error)")


def _unchecked(reason: str) -> BindResult:
    return BindResult(False, unchecked_reason=reason)
