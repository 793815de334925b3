"""Schema context for the SQL-writing model: ``CREATE TABLE`` statements plus retrieved docs.

DDL pieces (quoted name, one rendered line per column, PK and FK constraints) are rendered by
sqlglot in the database's dialect once, at build time, and stored in the artifact; a request
only joins strings. Key columns (PK, FK) are always kept when columns are pruned, and output
order is deterministic: tables in the order given, columns in schema order.

>>> from schemarag.runtime.core.schema import Database
>>> db = Database.model_validate({"name": "s", "tables": [{"name": "users", "columns": [
...     {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
...     {"name": "email", "type": "TEXT", "description": "login e-mail"}]}]})
>>> print(format_full_schema(db))
CREATE TABLE users (
  id INT NOT NULL,
  email TEXT, -- login e-mail
  PRIMARY KEY (id)
);
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.artifact.ddl import TableDDL, assemble, ddl_keyword, name_sql, table_note
from schemarag.runtime.core.schema import Column, Database, Table, check_type_text
from schemarag.runtime.core.type_text import compact_type, is_nested_type
from schemarag.runtime.search.shard_hints import shard_hints

if TYPE_CHECKING:
    from schemarag.runtime.search.results import RetrievalResult, TableRanking

DESCRIPTION_CHARS = 120
# A type longer than this is shown by its outer constructor (``ARRAY<STRUCT<...>>``); a nested
# type whose fields the schema lists as columns of their own (``device.os``) always is.
COMPACT_TYPE_CHARS = 400


def _data_type(type_text: str, dialect: str):
    from sqlglot import exp

    if "..." in type_text:  # a compacted nested type (``STRUCT<...>``): sqlglot would drop the "..."
        return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=check_type_text(type_text))
    try:
        return exp.DataType.build(type_text or "TEXT", dialect=dialect)
    except Exception:  # an exotic or vendor type: keep it verbatim as a user-defined type,
        # once it is known not to break out of its DDL line (schema load checks it too)
        return exp.DataType.build(check_type_text(type_text or "TEXT"), udt=True)


# Rendering is cached per distinct piece: a warehouse repeats a few dozen types and a few
# thousand column names across 100,000 columns, and parsing each type and generating each line
# with sqlglot was most of a 2,000-table build's DDL time. The bounds keep memory flat.
_PLACEHOLDER = "x"


@lru_cache(maxsize=4096)
def _column_tail(type_text: str, nullable: bool, dialect: str) -> str:
    """What follows the column name in its DDL line (`` INT NOT NULL``): sqlglot renders a
    column definition as name, then type and constraints, none of which depend on the name, so
    the tail is rendered once per (type, nullability, dialect) behind a placeholder name."""
    from sqlglot import exp

    constraints = [] if nullable else [exp.ColumnConstraint(kind=exp.NotNullColumnConstraint())]
    node = exp.ColumnDef(
        this=exp.to_identifier(_PLACEHOLDER), kind=_data_type(type_text, dialect), constraints=constraints
    )
    sql = node.sql(dialect=dialect)
    if not sql.startswith(_PLACEHOLDER):  # not how sqlglot lays out column definitions today
        raise AssertionError(f"unexpected column definition layout from sqlglot: {sql!r}")
    return sql[len(_PLACEHOLDER) :]


@lru_cache(maxsize=1 << 17)
def _ident_sql(name: str, dialect: str) -> str:
    """``name`` as the dialect writes it in DDL (quoted only when needed)."""
    return _ident(name, dialect).sql(dialect=dialect)


def column_sql(col: Column, dialect: str, compact: bool = False) -> str:
    """One column's DDL line (``"order" INT NOT NULL``), exactly as sqlglot renders the whole
    ``ColumnDef`` (tested against it), from cached pieces. ``compact``: the type by its outer
    constructor only (``STRUCT<...>``)."""
    type_text = compact_type(col.type) if compact else col.type
    return _ident_sql(col.name, dialect) + _column_tail(type_text or "TEXT", col.nullable, dialect)


def _compact_columns(table: Table) -> set[str]:
    """Columns whose type is shown compactly: nested types whose fields are columns of their own
    (BigQuery ``field_path`` rows: ``device`` beside ``device.os``), and any type that is long."""
    parents = {c.name.lower().rsplit(".", 1)[0] for c in table.columns if "." in c.name}
    return {
        c.name
        for c in table.columns
        if len(c.type) > COMPACT_TYPE_CHARS or (c.name.lower() in parents and is_nested_type(c.type))
    }


def _restates(description: str, name: str) -> bool:
    """A description that only repeats the column name ("School Type" for ``School Type``) says
    nothing the DDL does not; leaving it out saves tokens in every prompt."""

    def norm(x: str) -> str:
        return "".join(ch for ch in x.lower() if ch.isalnum())

    return not description.strip() or norm(description) == norm(name)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= DESCRIPTION_CHARS else flat[: DESCRIPTION_CHARS - 3] + "..."


# Postgres' reserved words (DuckDB's parser is Postgres', and sqlglot ships DuckDB's list); sqlglot
# prints them bare for postgres/sqlite, which neither the database nor sqlglot accepts back.
_QUOTE_RESERVED_DIALECTS = {"postgres", "postgresql", "redshift", "sqlite", "duckdb"}


@lru_cache(maxsize=8192)
def _quote_needed(name: str, dialect: str) -> bool:
    """Whether ``name`` must be quoted so the DDL parses back (``select``, ``order``, ``user``...)."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.dialects.duckdb import DuckDB

    bare = exp.to_identifier(name)
    if bare.quoted:
        return True
    if dialect.lower() in _QUOTE_RESERVED_DIALECTS and name.lower() in DuckDB.Generator.RESERVED_KEYWORDS:
        return True
    sql = bare.sql(dialect=dialect)
    try:
        tree = sqlglot.parse_one(f"SELECT {sql} FROM t", read=dialect)
    except Exception:  # sqlglot raises several error types
        return True
    first = tree.expressions[0] if isinstance(tree, exp.Select) and tree.expressions else None
    return not (isinstance(first, exp.Column) and first.name == name)


def _ident(name: str, dialect: str):
    """An identifier for ``name``, quoted only when the dialect needs it."""
    from sqlglot import exp

    return exp.to_identifier(name, quoted=True if _quote_needed(name, dialect) else None)


def table_sql(name: str, dialect: str):
    """``sales.orders`` -> the table ``orders`` in schema ``sales`` (each part quoted on its own),
    so warehouse names render as real qualified names, not one quoted identifier with a dot."""
    from sqlglot import exp

    parts = name.split(".") if all(name.split(".")) else [name]
    parts = [".".join(parts[:-2]), *parts[-2:]] if len(parts) > 3 else parts
    idents = [_ident(p, dialect) for p in parts]
    return exp.Table(
        this=idents[-1],
        db=idents[-2] if len(idents) > 1 else None,
        catalog=idents[-3] if len(idents) > 2 else None,
    )


def render_table(table: Table, dialect: str, referenced: Iterable[str] = ()) -> TableDDL:
    """Render one table's DDL pieces with sqlglot.

    ``referenced``: this table's columns that other tables' foreign keys point at; with the
    primary key and its own foreign keys they are join columns, never pruned.
    """
    from sqlglot import exp

    col_sql, comments = [], []
    compact = _compact_columns(table)
    for col in table.columns:
        col_sql.append(column_sql(col, dialect, compact=col.name in compact))
        comments.append("" if _restates(col.description, col.name) else _one_line(col.description))
    pk = table.primary_key
    pk_sql = exp.PrimaryKey(expressions=[_ident(c, dialect) for c in pk]).sql(dialect=dialect) if pk else ""
    fks = []
    for col in table.columns:
        if col.foreign_key is None:
            continue
        target = table_sql(col.foreign_key.table, dialect)
        ref = exp.Reference(
            this=exp.Schema(this=target, expressions=[_ident(col.foreign_key.column, dialect)])
        )
        node = exp.ForeignKey(expressions=[_ident(col.name, dialect)], reference=ref)
        # an inferred join is a guess (from names, or values found on the live database): say so;
        # a block comment keeps the comma list valid
        fk = col.foreign_key
        note = f" /* inferred from {fk.evidence or 'names'}, not declared */" if fk.inferred else ""
        fks.append((col.name, node.sql(dialect=dialect) + note))
    keys = tuple(dict.fromkeys([*pk, *(c for c, _ in fks), *referenced]))
    return TableDDL(
        name=table.name,
        name_sql=table_sql(table.name, dialect).sql(dialect=dialect),
        columns=tuple(c.name for c in table.columns),
        column_sql=tuple(col_sql),
        comments=tuple(comments),
        key_columns=keys,
        pk_sql=pk_sql,
        fk_sql=tuple(fks),
        keyword=ddl_keyword(table.kind),
        note=table_note(table, dialect),
    )


def render_schema(db: Database) -> dict[str, TableDDL]:
    """DDL pieces for every table, keyed by exact table name."""
    referenced: dict[str, list[str]] = {}  # one pass over the keys, not one per table (2,000 tables)
    for _, _, rt, rc in db.foreign_keys():
        referenced.setdefault(rt.lower(), []).append(rc)
    return {t.name: render_table(t, db.dialect, referenced.get(t.name.lower(), [])) for t in db.tables}


def _referenced(db: Database, table: str) -> list[str]:
    return [rc for _, _, rt, rc in db.foreign_keys() if rt.lower() == table.lower()]


def format_tables(
    db: Database,
    tables: Sequence[str],
    columns: dict[str, list[str]] | None = None,
    ddl: dict[str, TableDDL] | None = None,
    described: dict[str, list[str]] | None = None,
    compact: dict[str, list[str]] | None = None,
    levels: dict[str, int] | None = None,
    hints: dict[str, str] | None = None,
) -> str:
    """CREATE TABLE statements for ``tables`` in the given order (unknown names are skipped).

    ``levels`` (per table, see :data:`DETAIL_LEVELS`) thins a table's rendering under a token
    budget; a table is never left out. ``hints``: per collapsed family, the shards the
    question's dates name (:func:`~schemarag.runtime.search.shard_hints.shard_hints`).
    """
    options = _TableOptions({n.lower() for n in tables}, columns, ddl, described, compact, hints)
    texts = (_table_text(db, name, options, levels) for name in tables if db.table(name) is not None)
    return "\n\n".join(texts)


# What a table shows at each detail level, each smaller than the one before: 0 focused DDL
# with descriptions and the other columns by name; 1 the same without descriptions; 2 one line
# of table and column names (every name level 1 shows: a column stays visible, only its type,
# key lines and description go); 3 the names of the focused and key columns and a count of
# the rest. Names come before DDL-only because a name is what a query needs to exist.
DETAIL_LEVELS = 4


@dataclass(frozen=True)
class _TableOptions:
    """How every table of one rendering is shown (per table name; None = no such limit).

    One value for a whole call, so thinning a table under a budget re-renders it with only its
    detail level changed."""

    shown: set[str]  # lower-cased names of the tables in the output: FK lines to others are dropped
    columns: dict[str, list[str]] | None = None  # focused columns (key columns are always kept)
    ddl: dict[str, TableDDL] | None = None  # pre-rendered pieces; a table without them is rendered
    described: dict[str, list[str]] | None = None  # the columns whose description is shown
    compact: dict[str, list[str]] | None = None  # further columns listed by name only
    hints: dict[str, str] | None = None  # the shards a question's dates name, per collapsed family


def _table_text(db: Database, name: str, options: _TableOptions, levels: dict[str, int] | None) -> str:
    """One table of ``options`` at its detail level in ``levels`` (0 when absent)."""
    t = db.table(name)
    assert t is not None
    piece = options.ddl.get(t.name) if options.ddl else None
    if piece is None:  # no pre-rendered pieces (a schema without an artifact): render this table
        piece = render_table(t, db.dialect, _referenced(db, t.name))
    cols = options.columns.get(t.name) if options.columns else None
    say = options.described.get(t.name) if options.described is not None else None
    rest = list(options.compact.get(t.name, ())) if options.compact else []
    if not rest and _no_column(piece, cols):  # its columns by name, never ``CREATE TABLE x ( );``
        rest = list(piece.columns)
    level = levels.get(t.name, 0) if levels else 0
    if level >= 2:
        return _names_line(piece, cols, rest, level)
    fks = None
    if options.columns is not None:  # focused: a FOREIGN KEY line to a table not shown is dead weight
        shown = options.shown
        fks = {c.name.lower() for c in t.columns if c.foreign_key and c.foreign_key.table.lower() in shown}
    if level >= 1:
        say = []
    hint = options.hints.get(t.name, "") if options.hints else ""
    return assemble(piece, cols, described=say, fk_columns=fks, compact=rest, hint=hint)


def _no_column(piece: TableDDL, cols: list[str] | None) -> bool:
    """Whether a focus leaves a table no column of its own to show as DDL (none focused, no key)."""
    known = {c.lower() for c in piece.columns}
    return cols is not None and not any(c.lower() in known for c in [*cols, *piece.key_columns])


def _names_line(piece: TableDDL, cols: list[str] | None, rest: list[str], level: int) -> str:
    """Detail level 2 or 3 of a table: one comment line of its table and column names, the
    focused ones first in the ranking's order (a names line is no definition, so it can lead
    with the columns the question needs), then the keys, then (level 2) the rest."""
    known = {c.lower(): c for c in piece.columns}
    focused = piece.columns if cols is None else cols
    first = dict.fromkeys(known[c.lower()] for c in [*focused, *piece.key_columns] if c.lower() in known)
    names = [name_sql(piece, c) for c in first]
    what = piece.keyword.lower()
    if level == 2 or not names:  # nothing focused: the names of the rest, not an empty line
        return f"-- {what} {piece.name_sql}: " + ", ".join(names + [name_sql(piece, c) for c in rest])
    more = f" (+{len(rest)} more columns)" if rest else ""
    return f"-- {what} {piece.name_sql}: " + ", ".join(names) + more


def format_ranking(
    db: Database,
    ranking: TableRanking,
    ddl: dict[str, TableDDL] | None = None,
    token_budget: int | None = None,
) -> str:
    """The focused schema of a :class:`TableRanking`: exactly what the generator is given and
    what ``schemarag eval`` measures.

    Under ``token_budget`` (and the ranking's own, from ``ColumnPolicy.context_share``; the
    smaller wins) tables are thinned in rounds, lowest-ranked first, through
    :data:`DETAIL_LEVELS`: descriptions go, then tables shrink to their table and column names,
    then to the names of their focused columns. No kept table is dropped, so the result can
    exceed a budget too small for every table's names.
    """
    return "\n\n".join(focused_parts(db, ranking, ddl, token_budget)[1].values())


def focused_parts(
    db: Database,
    ranking: TableRanking,
    ddl: dict[str, TableDDL] | None = None,
    token_budget: int | None = None,
) -> tuple[dict[str, int], dict[str, str]]:
    """``(detail level, text)`` per kept table of :func:`format_ranking`'s output: what an
    evaluation needs to tell which columns a thinned table still shows."""
    budgets = [b for b in (token_budget, ranking.token_budget) if b is not None]
    token_budget = min(budgets) if budgets else None
    tables = list(ranking.tables)
    columns = dict(ranking.columns) or None
    described = dict(ranking.described) if ranking.columns else None
    compact = dict(ranking.compact)
    hints = ranking.shard_hints
    levels = dict.fromkeys(tables, 0)
    options = _TableOptions({t.lower() for t in tables}, columns, ddl, described, compact, hints)
    parts = {t: _table_text(db, t, options, levels) for t in tables if db.table(t) is not None}
    if token_budget is not None:
        total = sum(estimate_tokens(p) + 1 for p in parts.values())
        for level in range(1, DETAIL_LEVELS):
            for t in reversed([t for t in tables if t in parts]):
                if total <= token_budget:
                    break
                levels[t] = level
                before = parts[t]
                parts[t] = _table_text(db, t, options, levels)
                total += estimate_tokens(parts[t]) - estimate_tokens(before)
    return levels, parts


def format_full_schema(db: Database, ddl: dict[str, TableDDL] | None = None) -> str:
    """Every table, schema order: the context of the ``full`` strategy."""
    return format_tables(db, [t.name for t in db.tables], ddl=ddl)


def docs_section(db: Database, chunks: Sequence, tables: Sequence[str]) -> str:
    """The retrieved documentation block that follows the DDL: chunks grouped by table (tables in
    the order given, then the rest), best first within a table; empty without chunks."""
    if not chunks:
        return ""
    by_table: dict[str, list] = {}
    for sc in chunks:
        by_table.setdefault(sc.chunk.table or db.name, []).append(sc)
    parts = ["", "-- Retrieved documentation", ""]
    for tname in [*tables, *(k for k in by_table if k not in tables)]:
        for sc in by_table.get(tname, []):
            parts.append(f"### {sc.chunk.title} (relevance {sc.score:.2f})\n{sc.chunk.text}\n")
    return "\n" + "\n".join(parts).rstrip() + "\n"


# The focused schema of an explicit selection (e.g. a TableRanking's tables, columns, described).
format_focused_schema_tables = format_tables


def _joins_or_labels(col: Column) -> bool:
    low = col.name.lower()
    return col.primary_key or col.foreign_key is not None or low.endswith("name") or low == "title"


def format_focused_schema(
    db: Database,
    result: RetrievalResult,
    token_budget: int | None = None,
    ddl: dict[str, TableDDL] | None = None,
) -> str:
    """The focused schema of ``result``: CREATE TABLE statements, then the retrieved docs by
    table (see :func:`focused_schema_levels`, which also says how far each table was thinned)."""
    return focused_schema_levels(db, result, token_budget, ddl)[0]


def focused_schema_levels(
    db: Database,
    result: RetrievalResult,
    token_budget: int | None = None,
    ddl: dict[str, TableDDL] | None = None,
) -> tuple[str, dict[str, int]]:
    """``(text, detail level per ranked table)``: exactly what a surface serves, and what
    ``schemarag eval --focus`` scores (the levels say which columns a thinned table still shows).

    Retrieved tables + FK neighbours as CREATE TABLE, then the retrieved docs by table.

    Retrieved tables show every column; a neighbour is there to be joined through, so it shows
    its key and label columns (PK, FKs, FK targets, ``*name``/``title``) without descriptions.
    With ``token_budget``, material is dropped lowest-score first: doc chunks from the
    lowest-scoring up, then expanded (neighbour) tables from the last, never a retrieved table.
    A budgeted ranking (``result.ranking``) keeps every ranked table and thins them instead
    (:func:`format_ranking`); its own size cap (``ColumnPolicy.context_share``, the "compact"
    focus) bounds the whole text, documentation included.
    """
    focus = _focus(db, result, ddl or result.ddl)
    ranking = result.ranking
    if ranking is not None and ranking.token_budget is not None:  # a size cap covers the docs too
        token_budget = min(b for b in (token_budget, ranking.token_budget) if b is not None)
    chunks = sorted(result.chunks, key=lambda sc: (-sc.score, sc.chunk.chunk_id))
    # the levels are those of the text itself: a ranking's own cap thins its tables before any
    # documentation is added, and an evaluation must score what that text shows
    out, levels = _render(db, focus, chunks)
    if token_budget is None:
        return out, levels
    while estimate_tokens(out) > token_budget and chunks:
        chunks = chunks[:-1]
        out, levels = _render(db, focus, chunks)
    if ranking is not None:  # every ranked table stays; they are thinned, not dropped
        if estimate_tokens(out) <= token_budget:
            return out, levels
        return _thin_ranking(db, focus, chunks, out, token_budget)
    return _drop_neighbours(db, focus, chunks, out, token_budget)


@dataclass
class _Focus:
    """What :func:`focused_schema_levels` renders: a budgeted ranking, or retrieved tables and
    their FK neighbours (``tables`` loses neighbours, last first, while over a budget)."""

    ddl: dict[str, TableDDL] | None
    ranking: TableRanking | None
    tables: list[str]
    retrieved: set[str]  # lower-cased: the tables a budget never drops
    columns: dict[str, list[str]] | None = None
    described: dict[str, list[str]] | None = None
    hints: dict[str, str] = field(default_factory=dict)


def _focus(db: Database, result: RetrievalResult, ddl: dict[str, TableDDL] | None) -> _Focus:
    """The tables of ``result`` and which columns each shows: a neighbour is there to be joined
    through, so it shows its key and label columns without descriptions."""
    ranking = result.ranking
    if ranking is not None:  # a budgeted table focus: its tables, columns and descriptions
        tables = list(ranking.tables)
        retrieved = {t.lower() for t in tables[:1]}
        columns = dict(ranking.columns) or None
        return _Focus(ddl, ranking, tables, retrieved, columns, described=dict(ranking.described) or None)
    tables = list(dict.fromkeys([*result.tables, *result.expanded_tables]))
    retrieved = {t.lower() for t in result.tables}
    shown_columns: dict[str, list[str]] = {}
    for name in tables:
        t = db.table(name)
        if t is not None and name.lower() not in retrieved:
            shown_columns[t.name] = [c.name for c in t.columns if _joins_or_labels(c)]
    described = {name: [] for name in shown_columns} if shown_columns else None
    hints = shard_hints(db, tables, result.question)
    return _Focus(ddl, None, tables, retrieved, shown_columns or None, described, hints)


def _render(
    db: Database, focus: _Focus, chunks: list, ddl_budget: int | None = None
) -> tuple[str, dict[str, int]]:
    """The focus's CREATE TABLE statements, then ``chunks`` as the documentation section, and
    the detail level of each table in that text."""
    ddl = focus.ddl
    if focus.ranking is not None:
        levels, parts = focused_parts(db, focus.ranking, ddl, ddl_budget)
        text = "\n\n".join(parts.values())
    else:
        levels = dict.fromkeys(focus.tables, 0)
        text = format_tables(
            db, focus.tables, focus.columns, ddl=ddl, described=focus.described, hints=focus.hints
        )
    return text + docs_section(db, chunks, focus.tables), levels


def _thin_ranking(
    db: Database, focus: _Focus, chunks: list, out: str, token_budget: int
) -> tuple[str, dict[str, int]]:
    """A ranking over budget: its tables thinned (:func:`focused_parts`) into what the kept
    documentation leaves of the budget."""
    assert focus.ranking is not None
    docs_tokens = estimate_tokens(out) - estimate_tokens(format_ranking(db, focus.ranking, focus.ddl))
    ddl_budget = max(0, token_budget - docs_tokens)
    return _render(db, focus, chunks, ddl_budget)


def _drop_neighbours(
    db: Database, focus: _Focus, chunks: list, out: str, token_budget: int
) -> tuple[str, dict[str, int]]:
    """Neighbour tables dropped from the last while over budget; a retrieved table always stays."""
    tables = focus.tables
    retrieved = {t for t in tables if t.lower() in focus.retrieved}
    while estimate_tokens(out) > token_budget and len(tables) > len(retrieved):
        drop = next(t for t in reversed(tables) if t not in retrieved)
        tables.remove(drop)
        out = _render(db, focus, chunks)[0]
    return out, dict.fromkeys(tables, 0)
