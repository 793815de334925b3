"""Gold tables and columns of a question, read from its gold SQL with sqlglot.

Benchmark SQL is messy: aliases (``T1``), unqualified columns, CTEs, derived tables,
backtick-quoted names with spaces, and double-quoted *strings* (SQLite accepts ``"Alameda"``
as a literal when no column has that name). Identifiers are lower-cased, columns are
qualified against the schema with sqlglot's optimizer, and every reference is mapped back to
the schema's exact spelling. Nothing here raises on odd SQL: what resolves is returned and
``ok`` is False with ``problems`` saying what did not.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "s", "dialect": "sqlite", "tables": [
    ...     {"name": "Users", "columns": [{"name": "Id"}, {"name": "Full Name"}]},
    ...     {"name": "orders", "columns": [{"name": "id"}, {"name": "user_id"}]}]})
    >>> g = gold_from_sql("SELECT `Full Name` FROM users u JOIN orders o ON o.user_id = u.id", SchemaView(db))
    >>> g.tables, g.columns["Users"], g.ok
    (['Users', 'orders'], ['Full Name', 'Id'], True)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from schemarag.runtime.core.schema import Database

log = logging.getLogger(__name__)


class SchemaView:
    """The tables a gold SQL may name, by lower-cased name, mapped to the schema's names.

    For a union schema pass ``database="<db_id>"``: only tables whose ``Table.database`` is
    that database are in view, under their names in the source (the SQL says ``frpm``, the
    union says ``california_schools__frpm``; the importer's naming is undone here, in the
    evaluation, never in ranking).
    """

    def __init__(self, db: Database, database: str | None = None) -> None:
        from schemarag.tools.importers.spider_bird import union_table_name

        self.tables: dict[str, str] = {}
        self.columns: dict[str, dict[str, str]] = {}
        prefix = union_table_name(database, "") if database is not None else ""
        for table in db.tables:
            if database is not None and table.database != database:
                continue
            local = table.name[len(prefix) :].lower() if table.name.startswith(prefix) else table.name.lower()
            self.tables[local] = table.name
            self.columns[local] = {c.name.lower(): c.name for c in table.columns}

    def sqlglot_schema(self) -> dict[str, dict[str, str]]:
        return {t: dict.fromkeys(cols, "TEXT") for t, cols in self.columns.items()}


@dataclass
class Gold:
    """Resolved references: ``tables`` in order of first appearance, ``columns`` per table."""

    tables: list[str] = field(default_factory=list)
    columns: dict[str, list[str]] = field(default_factory=dict)
    ok: bool = True
    problems: list[str] = field(default_factory=list)

    def add_table(self, name: str) -> None:
        if name not in self.tables:
            self.tables.append(name)

    def add_column(self, table: str, column: str) -> None:
        self.add_table(table)
        cols = self.columns.setdefault(table, [])
        if column not in cols:
            cols.append(column)

    def problem(self, message: str, fatal: bool = True) -> None:
        self.problems.append(message)
        self.ok = self.ok and not fatal


def _parse(sql: str, dialect: str, gold: Gold):
    import sqlglot
    from sqlglot import exp

    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except Exception as exc:  # sqlglot has many error types; gold SQL must never crash an eval
        gold.problem(f"unparseable SQL: {str(exc).splitlines()[0][:120]}")
        return None
    if not trees:
        gold.problem("no SQL statement")
        return None
    if len(trees) > 1:
        gold.problem(f"{len(trees)} statements; only the first is read")
    tree = trees[0]
    if not isinstance(tree, exp.Query):
        gold.problem(f"not a query ({type(tree).__name__})")
    for ident in tree.find_all(exp.Identifier):
        ident.set("this", ident.this.lower())  # SQLite names are case-insensitive, quoted or not
    return tree


def _fold_qualified(tree, view: SchemaView) -> None:
    """``sales.orders`` in the SQL -> the schema's table ``sales.orders`` (warehouse imports name
    tables schema-qualified), aliased ``orders`` so ``orders.amount`` still resolves; in place."""
    from sqlglot import exp

    for table in list(tree.find_all(exp.Table)):
        if not table.args.get("db") or not isinstance(table.this, exp.Identifier):
            continue
        qualified = ".".join(p for p in (table.text("catalog"), table.text("db"), table.name) if p)
        for name in (qualified, qualified.split(".", 1)[-1]):
            if "." in name and name in view.tables:
                bare = table.name
                table.set("this", exp.to_identifier(name, quoted=True))
                table.set("db", None)
                table.set("catalog", None)
                if not table.alias:
                    table.set("alias", exp.TableAlias(this=exp.to_identifier(bare)))
                break


def _qualify(tree, view: SchemaView, dialect: str, gold: Gold):
    from sqlglot.optimizer.qualify import qualify

    try:
        return qualify(
            tree.copy(),
            schema=view.sqlglot_schema(),
            dialect=dialect,
            expand_stars=False,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )
    except Exception as exc:  # fall back to our own resolution on the unqualified tree
        gold.problem(f"sqlglot could not qualify columns ({type(exc).__name__}); resolved by hand", False)
        return tree


def _outer_table(scope, alias: str) -> str | None:
    """The real table behind ``alias`` in an enclosing scope (correlated subqueries)."""
    from sqlglot import exp

    parent = scope.parent
    while parent is not None:
        src = parent.sources.get(alias)
        if isinstance(src, exp.Table):
            return src.name
        parent = parent.parent
    return None


def _resolve_scope(scope, view: SchemaView, gold: Gold) -> None:
    from sqlglot import exp

    tables = {alias: src.name for alias, src in scope.sources.items() if isinstance(src, exp.Table)}
    for real in tables.values():
        if real in view.tables:
            gold.add_table(view.tables[real])
        elif real not in scope.cte_sources:
            gold.problem(f"table {real!r} is not in the schema")
    derived = {alias for alias, src in scope.sources.items() if not isinstance(src, exp.Table)}
    select_aliases = {s.alias.lower() for s in getattr(scope.expression, "selects", []) if s.alias}
    for column in scope.columns:
        name, qualifier = column.name, column.table
        if not name:
            continue
        if qualifier:
            if qualifier in derived:
                continue  # a CTE or subquery column; its own scope resolves the real tables
            real = tables.get(qualifier) or _outer_table(scope, qualifier) or qualifier
            col = view.columns.get(real, {}).get(name)
            if col is None:
                gold.problem(f"column {qualifier}.{name} not found in the schema")
                continue
            gold.add_column(view.tables[real], col)
            continue
        owners = [r for r in tables.values() if name in view.columns.get(r, {})]
        if owners:
            gold.add_column(view.tables[owners[0]], view.columns[owners[0]][name])
            if len(set(owners)) > 1:
                gold.problem(f"column {name!r} is ambiguous among {sorted(set(owners))}", False)
        elif name not in select_aliases and not derived:
            # SQLite reads an unknown double-quoted identifier as a string literal.
            gold.problem(f"unqualified {name!r} matches no column (a string literal?)", False)


def gold_from_sql(sql: str, view: SchemaView, dialect: str = "sqlite") -> Gold:
    """Tables and columns ``sql`` reads, named as in the schema; never raises."""
    from sqlglot.optimizer.scope import traverse_scope

    gold = Gold()
    if not sql or not sql.strip():
        gold.problem("empty SQL")
        return gold
    tree = _parse(sql, dialect, gold)
    if tree is None:
        return gold
    _fold_qualified(tree, view)
    tree = _qualify(tree, view, dialect, gold)
    try:
        scopes = traverse_scope(tree)
    except Exception as exc:
        gold.problem(f"cannot walk query scopes ({type(exc).__name__})")
        scopes = []
    for scope in scopes:
        _resolve_scope(scope, view, gold)
    if not scopes:
        from sqlglot import exp

        for table in tree.find_all(exp.Table):
            if table.name in view.tables:
                gold.add_table(view.tables[table.name])
    for cols in gold.columns.values():
        cols.sort()
    return gold
