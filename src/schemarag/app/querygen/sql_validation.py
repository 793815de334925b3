"""Check SQL a model wrote against the authoritative schema before anyone runs it.

The docs are never consulted here: only :class:`~schemarag.runtime.core.schema.Database`, because a doc can be
stale while the schema file (or live snapshot) is what the database really has. Six checks, in
order, each cheaper than the next and each stopping the pipeline when it fails:

1. it is within size and nesting bounds, checked before parsing (:mod:`.sql_bounds`), so hostile
   input costs time linear in its length and never exhausts the stack;
2. its comments and quoting mean the same to every engine (:mod:`.comment_policy`): no
   executable comment ``/*! */``, no optimizer hint ``/*+ */`` off the reviewed list, no nested
   or unterminated comment, no string whose end depends on a server setting;
3. it parses in the database's dialect (sqlglot) as exactly one query;
4. it is a plain query by *allow-list* (:mod:`.allowlist`): every node of the tree is a type a
   ``SELECT`` is made of (a ``DELETE`` hidden in a CTE, ``SELECT ... INTO``, ``FOR UPDATE`` and
   assignments such as ``@a := 1`` are not) and every function is a reviewed side-effect-free one
   for the dialect, so an unknown function such as ``pg_sleep_for`` or ``lo_put`` is rejected by
   name, never merely warned about;
5. every FROM/JOIN target is a table, CTE, subquery or reviewed row generator, never a stage, a
   table function naming what it reads or a placeholder (:mod:`.relations`); every table and
   column exists (tables directly; columns through sqlglot's ``qualify``, which
   resolves aliases, CTEs and subqueries, for trees small enough to qualify quickly);
6. it binds in DuckDB against empty tables created from the schema (:mod:`.duckdb_bind`), on a
   connection that cannot reach files, the network or the extension repository.

The verdict has three values. ``valid`` is True only when all six passed; False with ``errors``
when one failed; None (*unchecked*) when nothing failed but the bind check could not run or
could not finish (a dialect DuckDB cannot emulate, SQL it cannot transpile, a binder error that
may be a dialect difference): ``unchecked_reason`` says which, and no caller may treat it as valid.

Identifier matching is case-insensitive in every dialect: models vary case freely and most
engines fold it, so strict PostgreSQL quoted-case rules are not enforced.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "shop", "dialect": "sqlite", "tables": [
    ...     {"name": "users", "columns": [{"name": "id", "type": "INTEGER"}]}]})
    >>> validate_sql("SELECT id FROM users", db).valid
    True
    >>> validate_sql("SELECT id FROM users /*! INTO OUTFILE '/tmp/x' */", db).errors[0][:48]
    'not allowed: executable comment /*! INTO OUTFILE'
    >>> validate_sql("DELETE FROM users", db).errors
    ['not read-only: DELETE statement; only SELECT queries are allowed']
    >>> validate_sql("SELECT id, sqlite_version() FROM users", db).errors
    ['not allowed: function sqlite_version() is not on the sqlite allow-list of side-effect-free functions']
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import asdict, dataclass, field
from typing import Any

from schemarag.app.querygen.allowlist import disallowed
from schemarag.app.querygen.comment_policy import DEFAULT_COMMENT_POLICY, CommentPolicy, lexical_errors
from schemarag.app.querygen.sql_bounds import (
    DEFAULT_LIMITS,
    SQLLimits,
    measure,
    parse_tokens,
    tokenize_bounded,
)
from schemarag.runtime.core.errors import SQLValidationError
from schemarag.runtime.core.schema import Database

log = logging.getLogger(__name__)


@dataclass
class ValidationReport:
    """Outcome of :func:`validate_sql`. ``errors`` are exact, repair-ready messages.

    ``valid`` is True (every check passed), False (``errors`` says why) or None: *unchecked*, no
    error found but the bind check did not run to the end (``unchecked_reason`` says why). Test it
    with ``is True``; ``if report.valid`` also treats unchecked as not valid."""

    valid: bool | None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)  # schema tables referenced, canonical names
    bind_checked: bool = False
    unchecked_reason: str | None = None

    @property
    def status(self) -> str:
        """``valid``, ``invalid`` or ``unchecked``."""
        return {True: "valid", False: "invalid", None: "unchecked"}[self.valid]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, snake_case keys (the CLI's ``--json``, ``/v1/validate`` and MCP)."""
        return asdict(self)


def validate_sql(
    sql: str,
    db: Database,
    limits: SQLLimits = DEFAULT_LIMITS,
    comments: CommentPolicy = DEFAULT_COMMENT_POLICY,
) -> ValidationReport:
    """Validate ``sql`` for ``db`` (see the module docstring for the checks, ``limits`` and
    ``comments``, the optimizer hints allowed)."""
    from sqlglot.errors import SqlglotError

    report = ValidationReport(valid=False)
    if not sql or not sql.strip():
        report.errors.append("empty SQL: the answer's 'query' must be one SELECT statement")
        return report
    try:
        tokens = tokenize_bounded(sql, db.dialect, limits)
        report.errors.extend(lexical_errors(sql, tokens, db.dialect, comments))
        if report.errors:
            return report
        statements = parse_tokens(tokens, sql, db.dialect, limits)
    except SQLValidationError as exc:
        report.errors.append(str(exc))
        return report
    except SqlglotError as exc:
        report.errors.append(f"does not parse as {db.dialect} SQL: {_first_line(exc)}")
        return report
    if not statements:
        report.errors.append("empty SQL: the answer's 'query' must be one SELECT statement")
        return report
    if len(statements) > 1:
        report.errors.append(f"multiple statements ({len(statements)}): return exactly one SELECT statement")
        return report
    try:
        _check(sql, statements[0], db, limits, report)
    except RecursionError:  # a backstop: the bounds above should make this unreachable
        report.errors.append("SQL nested too deeply to validate; flatten the expression")
    if report.errors:
        report.valid, report.unchecked_reason = False, None
    elif report.unchecked_reason:
        report.valid = None
    else:
        report.valid = True
    return report


def _check(sql: str, tree: Any, db: Database, limits: SQLLimits, report: ValidationReport) -> None:
    """Checks 3-5 of the module docstring, appending to ``report``."""
    report.errors.extend(read_only_errors(tree, db.dialect))
    if report.errors:
        return
    from schemarag.app.querygen.relations import relation_errors

    report.errors.extend(relation_errors(tree, db.dialect))  # stages, table functions, placeholders
    if report.errors:
        return
    from schemarag.app.querygen.qualified_names import fold_qualified_tables

    tree = fold_qualified_tables(tree, db)  # sales.orders -> the schema's "sales.orders"
    table_errors, report.tables = _check_tables(tree, db)
    if table_errors:
        report.errors.extend(table_errors)
        return
    if db.dialect == "sqlite":
        tree = _sqlite_string_identifiers(tree, sql, db)
    nodes, _ = measure(tree)
    if nodes > limits.qualify_max_nodes:
        report.warnings.append(
            f"column check by sqlglot skipped: {nodes:,} expression nodes > {limits.qualify_max_nodes:,}; "
            "DuckDB's binder checks the names"
        )
    else:
        column_errors, column_warnings = _check_columns(tree, db, report.tables)
        report.errors.extend(column_errors)
        report.warnings.extend(column_warnings)
        if report.errors:
            return
    from schemarag.app.querygen.duckdb_bind import bind_check

    bind = bind_check(tree, db, copy=False)  # the last step: the tree may be rewritten
    report.bind_checked = bind.checked
    report.errors.extend(bind.errors)
    report.warnings.extend(bind.warnings)
    report.unchecked_reason = bind.unchecked_reason


def read_only_errors(tree: Any, dialect: str = "postgres") -> list[str]:
    """Reasons ``tree`` is not one plain, side-effect-free query (empty when it is one)."""
    from sqlglot import exp

    if not isinstance(tree, exp.Query):
        kind = tree.key.upper() if isinstance(tree, exp.Expression) else type(tree).__name__
        return [f"not read-only: {kind} statement; only SELECT queries are allowed"]
    return disallowed(tree, dialect)


def _check_tables(tree: Any, db: Database) -> tuple[list[str], list[str]]:
    """Unknown tables (CTE names excluded) and the canonical names of the known ones."""
    from sqlglot import exp

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    errors: list[str] = []
    used: list[str] = []
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # a table-valued function such as generate_series(...)
        name = table.name
        if not table.db and name.lower() in ctes:
            continue
        known = db.table(name)
        if known is None:
            msg = f"unknown table {name!r}"
            hint = _qualified_hint(table, db) or _suggest(name, [t.name for t in db.tables])
            errors.append(msg + (f"; did you mean {hint}?" if hint else "; use only tables of the schema"))
        elif known.name not in used:
            used.append(known.name)
    return sorted(set(errors), key=errors.index), used


def _qualified_hint(table: Any, db: Database) -> str:
    """The schema's full relation names that end with what the query wrote (``ga4.users`` ->
    ``other-proj.ga4.users``): a warehouse resolves a shorter name against a default catalog
    the focused schema does not know, so the query should use the name the DDL shows."""
    from schemarag.app.querygen.qualified_names import written_name

    written = written_name(table)
    hits = [t.name for t in db.tables if t.name.lower().endswith("." + written)]
    return ", ".join(hits[:3])


def _sqlite_string_identifiers(tree: Any, sql: str, db: Database) -> Any:
    """SQLite reads an unresolvable ``"double-quoted"`` identifier as a string literal; do the same.

    Rewrites ``tree`` in place (it is :func:`validate_sql`'s own parse; copying a large tree costs
    more than parsing it)."""
    from sqlglot import exp

    columns = {c.name.lower() for t in db.tables for c in t.columns}
    aliases = {a.alias.lower() for a in tree.find_all(exp.Alias)}
    for col in list(tree.find_all(exp.Column)):
        ident = col.this
        if col.table or not isinstance(ident, exp.Identifier) or not ident.quoted:
            continue
        start = ident.meta.get("start")
        if start is None or sql[start : start + 1] != '"':
            continue
        if ident.name.lower() not in columns and ident.name.lower() not in aliases:
            col.replace(exp.Literal.string(ident.name))
    return tree


def _check_columns(tree: Any, db: Database, tables: list[str]) -> tuple[list[str], list[str]]:
    """Resolve every column with sqlglot's qualifier; unresolvable ones become errors."""
    from sqlglot import exp
    from sqlglot.errors import OptimizeError, SqlglotError
    from sqlglot.optimizer.qualify import qualify

    from schemarag.app.querygen.pseudo_columns import pseudo_columns

    mapping = {
        t.name.lower(): {
            c.lower(): "UNKNOWN" for c in [*(c.name for c in t.columns), *pseudo_columns(t.name, db.dialect)]
        }
        for t in db.tables
    }  # lower-case keys + lower-cased query = case-insensitive matching
    lowered = tree.copy()
    for ident in lowered.find_all(exp.Identifier):
        ident.set("this", ident.name.lower())
    try:
        qualify(
            lowered,
            schema=mapping,
            dialect=db.dialect,
            validate_qualify_columns=True,
            identify=False,
        )
    except OptimizeError as exc:
        message = _first_line(exc)
        if "could not be resolved" in message or "Unknown column" in message or "Ambiguous" in message:
            return [_column_message(message, db, tables)], []
        return [], [f"column check incomplete: {message}"]
    except (SqlglotError, ValueError, KeyError, TypeError, RecursionError) as exc:
        # sqlglot's qualifier does not cover every construct; DuckDB's binder still checks.
        return [], [f"column check skipped ({type(exc).__name__}: {_first_line(exc)})"]
    return [], []


def _column_message(message: str, db: Database, tables: list[str]) -> str:
    """Turn a qualifier message into an actionable one listing close column names."""
    import re

    match = re.search(r"Column '([^']+)'|Unknown column: (\S+)", message)
    name = (match.group(1) or match.group(2)) if match else ""
    candidates = [f"{t}.{c.name}" for t in tables for c in db.table(t).columns]
    hint = _suggest(name, [c.split(".", 1)[1] for c in candidates], full=candidates)
    out = f"unknown or ambiguous column {name!r} ({message})" if name else f"column error: {message}"
    if hint:
        out += f"; did you mean {hint}?"
    elif tables:
        out += "; qualify it with its table and use only columns of " + ", ".join(tables)
    return out


def _suggest(name: str, options: list[str], full: list[str] | None = None) -> str:
    """Up to three close matches (from ``full`` when given, aligned with ``options``)."""
    lowered = [o.lower() for o in options]
    hits = difflib.get_close_matches(name.lower(), lowered, n=3, cutoff=0.6)  # closest first
    shown = full or options
    picked = [shown[i] for hit in hits for i, o in enumerate(lowered) if o == hit]
    return ", ".join(list(dict.fromkeys(picked))[:3])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    # sqlglot underlines the offending token with ANSI codes; keep plain text only.
    return text.replace("\x1b[4m", "").replace("\x1b[0m", "").splitlines()[0] if text else type(exc).__name__
