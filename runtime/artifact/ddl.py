"""A table's CREATE statement as an artifact stores it: pre-rendered pieces, joined per request.

The build renders each table's pieces once, in the database's dialect with sqlglot
(:func:`schemarag.runtime.formatting.render_table`), and stores them in ``tables.parquet``; the
reader turns each row back into a :class:`TableDDL`. Everything here only joins strings, so the
reader and a request never run a SQL library, and the artifact layer needs nothing above it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from schemarag.runtime.core.schema import Table

_KEYWORDS = {"view": "VIEW", "materialized_view": "MATERIALIZED VIEW"}


def table_note(table: Table | None, dialect: str) -> str:
    """What the SQL writer must know to query a collapsed shard family (it is not one table in
    most warehouses): BigQuery queries the wildcard name and filters ``_TABLE_SUFFIX``; elsewhere
    each shard is a table of its own.

    >>> from schemarag.runtime.core.schema import ShardRange
    >>> days = ShardRange(stem="ev_", pattern="YYYYMMDD", first="20210101", last="20210131", count=31)
    >>> print(table_note(Table(name="ev_*", columns=[{"name": "a"}], shards=days), "bigquery"))
    31 shards ev_20210101 .. ev_20210131: filter with _TABLE_SUFFIX BETWEEN '20210101' AND '20210131'
    """
    if table is None or table.shards is None:
        return ""
    s = table.shards
    span = f"{s.count} shards {s.stem}{s.first} .. {s.stem}{s.last}"
    if dialect == "bigquery":
        return f"{span}: filter with _TABLE_SUFFIX BETWEEN '{s.first}' AND '{s.last}'"
    return f"{span}, same columns: query a shard by its name, or UNION ALL the shards needed"


def ddl_keyword(kind: str | None) -> str:
    """What the statement creates: ``VIEW`` and ``MATERIALIZED VIEW`` say the relation is read-only
    (queried like a table); tables and external tables are ``TABLE``."""
    return _KEYWORDS.get(kind or "", "TABLE")


@dataclass(frozen=True)
class TableDDL:
    """Pre-rendered pieces of one table's CREATE TABLE statement."""

    name: str
    name_sql: str
    columns: tuple[str, ...]  # column names, schema order
    column_sql: tuple[str, ...]  # rendered "name TYPE [NOT NULL]" per column
    comments: tuple[str, ...]  # one-line description per column ("" if none)
    key_columns: tuple[str, ...]  # PK, FK and FK-referenced columns: never pruned
    pk_sql: str
    fk_sql: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # (column, constraint sql)
    keyword: str = "TABLE"  # CREATE <keyword>: TABLE, VIEW or MATERIALIZED VIEW (:func:`ddl_keyword`)
    note: str = ""  # a comment on the statement's first line (:func:`table_note`)


def name_sql(ddl: TableDDL, column: str) -> str:
    """A column's name as its DDL line spells it (quoted where the dialect needs it), taken
    from the pre-rendered line so no SQL library runs at request time."""
    return _name_sqls(ddl).get(column, column)


@lru_cache(maxsize=4096)
def _name_sqls(ddl: TableDDL) -> dict[str, str]:
    return {c: _leading_name(line, c) for c, line in zip(ddl.columns, ddl.column_sql, strict=True)}


def _leading_name(line: str, column: str) -> str:
    closing = {'"': '"', "`": "`", "[": "]"}.get(line[:1])
    if closing is None:
        return line.split(" ", 1)[0]
    end = line.find(closing, 1)
    while end != -1 and line[end + 1 : end + 2] == closing:  # a doubled quote inside the name
        end = line.find(closing, end + 2)
    return line[: end + 1] if end != -1 else column


def statement_head(ddl: TableDDL) -> str:
    """``CREATE TABLE sales.orders (``: how a table's statement starts in a focused schema (the
    relation name as the warehouse spells it, e.g. a quoted BigQuery project)."""
    return f"CREATE {ddl.keyword} {ddl.name_sql} ("


def assemble(
    ddl: TableDDL,
    columns: Iterable[str] | None = None,
    with_comments: bool = True,
    described: Iterable[str] | None = None,
    fk_columns: set[str] | None = None,
    compact: Sequence[str] = (),
    hint: str = "",
) -> str:
    """One CREATE TABLE statement; ``columns`` prunes to those (plus key columns),
    ``described`` (when given) limits the description comments to those columns, and
    ``fk_columns`` (lower-case, when given) the FOREIGN KEY lines to those columns.
    ``compact`` columns are listed by name only in a closing comment (a few tokens each,
    so a column the ranking under-rated is still there). ``hint`` follows the table's note (the
    shard a question's date names, which the search finds)."""
    keep: set[str] | None = None
    if columns is not None:
        keep = {c.lower() for c in columns} | {c.lower() for c in ddl.key_columns}
    say = None if described is None else {c.lower() for c in described}
    items: list[tuple[str, str]] = []
    for name, sql, comment in zip(ddl.columns, ddl.column_sql, ddl.comments, strict=True):
        if keep is None or name.lower() in keep:
            show = with_comments and (say is None or name.lower() in say)
            items.append((sql, comment if show else ""))
    if ddl.pk_sql:
        items.append((ddl.pk_sql, ""))
    for col, fk in ddl.fk_sql:
        shown_col = keep is None or col.lower() in keep
        if shown_col and (fk_columns is None or col.lower() in fk_columns):
            items.append((fk, ""))
    lines = []
    for i, (sql, comment) in enumerate(items):
        sep = "," if i < len(items) - 1 else ""
        lines.append(f"  {sql}{sep}" + (f" -- {comment}" if comment else ""))
    if compact:
        lines.append("  -- also: " + ", ".join(name_sql(ddl, c) for c in compact))
    note = "; ".join(n for n in (ddl.note, hint) if n)
    head = statement_head(ddl) + (f" -- {note}" if note else "")
    return head + "\n" + "\n".join(lines) + "\n);"
