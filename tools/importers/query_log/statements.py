"""One logged statement -> what the history keeps of it, or why it is skipped.

Parsing happens here, at import, so the build only reads the stored facts. Per statement:

1. bounded parse in the dialect (:mod:`schemarag.app.querygen.sql_bounds`: length capped at
   ``--max-field-bytes``, nesting and tree size capped, so a hostile statement costs linear time);
2. only queries are kept (``SELECT``/``WITH``/set operations; DML, DDL and commands are skipped as
   ``not_a_query``) -- except the query inside dbt's ``create ... as (select ...)`` and
   ``insert into ... select`` in ``target/run``, which is what the model reads;
3. string and number literals become ``?`` placeholders and comments are dropped before anything
   is kept (``--keep-literals`` keeps literals; comments are never kept);
4. tables are resolved against the schema the way the SQL validator resolves them
   (:func:`~schemarag.app.querygen.qualified_names.fold_qualified_tables` for schema-qualified
   names and BigQuery shard families, then the validator's table check: CTE names excluded,
   case-insensitive), after step 2 has qualified the names written shorter than the schema's,
   as a session's default schema lets an analyst write them (:mod:`.short_names`); a statement
   reading no table of the schema is skipped (``no_known_table``);
5. columns and equi-join edges are resolved with sqlglot's qualifier (aliases, CTEs, subqueries,
   ``USING``, correlated references), as the validator's column check does; an edge is an
   equality of two tables' columns, each alone or inside a function of it (``CAST(a.k AS
   INT) = b.k``), or a semi-join (``a.k IN (SELECT b.k FROM b)``); a CTE or subquery
   column is followed to the base table column it projects. When the qualifier cannot run, the
   tables are kept and the columns and joins are left empty.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "s", "tables": [
    ...     {"name": "orders", "columns": [{"name": "id"}, {"name": "customer_id"}]},
    ...     {"name": "customers", "columns": [{"name": "id"}, {"name": "name"}]}]})
    >>> p = analyze("select c.name from orders o join customers c on o.customer_id = c.id "
    ...             "where c.name = 'Ann'", db)
    >>> p.sql
    'SELECT c.name FROM orders AS o JOIN customers AS c ON o.customer_id = c.id WHERE c.name = ?'
    >>> p.tables, p.joins
    (['orders', 'customers'], [('customers', 'id', 'orders', 'customer_id')])
    >>> analyze("delete from orders", db).skipped
    'not_a_query'
    >>> analyze("create view v as (select id from orders)", db, unwrap_ddl=True).sql
    'SELECT id FROM orders'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from schemarag.app.querygen.qualified_names import fold_qualified_tables
from schemarag.app.querygen.sql_bounds import SQLLimits, parse_bounded
from schemarag.app.querygen.sql_validation import _check_tables
from schemarag.runtime.core.errors import SQLValidationError
from schemarag.runtime.core.schema import Database
from schemarag.tools.importers.query_log.short_names import ambiguous_names, fold_short_names

# why a statement was skipped -> how the summary line says it
SKIP_REASONS: dict[str, str] = {
    "not_a_query": "not a query (DML/DDL/command)",
    "unparsable": "unparsable",
    "no_known_table": "touching no known table",
    "too_long": "over --max-field-bytes",
    "failed": "failed or not a query job in the warehouse",
    "empty": "empty",
    "bad_line": "not a JSON object with a sql field",
}
_LINEAGE_DEPTH = 8  # CTE -> CTE -> ... -> base table hops followed for one column


@dataclass
class Parsed:
    """What one statement contributes, or ``skipped`` (a key of :data:`SKIP_REASONS`)."""

    sql: str = ""
    tables: list[str] = field(default_factory=list)
    unknown_tables: list[str] = field(default_factory=list)
    joins: list[tuple[str, str, str, str]] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    skipped: str = ""
    detail: str = ""


def sql_limits(max_chars: int) -> SQLLimits:
    """The validator's bounds with the length cap of ``--max-field-bytes``: logged statements
    are longer than generated ones (dbt models, BI tools), nesting stays capped for the stack."""
    return SQLLimits(max_chars=max_chars, max_nodes=max(50_000, max_chars // 4), qualify_max_nodes=20_000)


def parse_statements(text: str, dialect: str, limits: SQLLimits) -> list[Any]:
    """The statements of ``text`` (bounded); raises :class:`SQLValidationError` or sqlglot's
    errors when it does not parse."""
    return parse_bounded(text, dialect, limits)


def normalize(
    tree: Any,
    dialect: str,
    keep_literals: bool,
    unwrap_ddl: bool = False,
    db: Database | None = None,
    default_schema: str | None = None,
    referenced: tuple[str, ...] = (),
    rules: Counter | None = None,
) -> tuple[Any, str]:
    """Steps 2-3 of the module docstring: ``(query, normalized SQL)``, or ``(None, kind)`` for a
    statement that is no query (``unwrap_ddl``: a dbt ``target/run`` file, whose ``create ... as
    (select)`` counts as its query). With ``db``, table names written shorter than the schema's
    are qualified first (:func:`.short_names.fold_short_names`, ``default_schema``: the session's
    schema the log gives, ``referenced``: the tables it says the statement read), so the stored
    SQL names its tables as the DDL does (``rules`` counts how each such name was qualified). Cheap next to
    :func:`resolve`, so a caller can skip resolving a normalized text it has seen."""
    from sqlglot import exp

    query = _query_of(tree, unwrap_ddl)
    if query is None:
        return None, tree.key.upper() if isinstance(tree, exp.Expression) else ""
    if db is not None:
        query = fold_short_names(query, db, default_schema, referenced, rules)
    shown = query.copy()
    if not keep_literals:
        strip_literals(shown)
    return query, shown.sql(dialect=dialect, comments=False)


def resolve(query: Any, sql: str, db: Database, dialect: str, limits: SQLLimits) -> Parsed:
    """Steps 4-5 of the module docstring for one query and its normalized text ``sql``."""
    folded = fold_qualified_tables(query, db)
    _, tables = _check_tables(folded, db)
    if not tables:
        return Parsed(skipped="no_known_table", detail=ambiguous_names(folded, db))
    out = Parsed(sql=sql, tables=tables, unknown_tables=_unknown(folded, db))
    try:
        out.columns, out.joins = _columns_and_joins(folded, db, dialect, limits)
    except Exception:  # the qualifier does not cover every construct: keep the tables
        out.columns, out.joins = [], []
    return out


def analyze_tree(
    tree: Any, db: Database, dialect: str, keep_literals: bool, limits: SQLLimits, unwrap_ddl: bool = False
) -> Parsed:
    """Steps 2-5 of the module docstring for one parsed statement."""
    query, sql = normalize(tree, dialect, keep_literals, unwrap_ddl, db)
    if query is None:
        return Parsed(skipped="not_a_query", detail=sql)
    return resolve(query, sql, db, dialect, limits)


def analyze(
    text: str, db: Database, dialect: str | None = None, keep_literals: bool = False, unwrap_ddl: bool = False
) -> Parsed:
    """:func:`analyze_tree` for the first statement of ``text`` (for tests and doctests)."""
    dialect = dialect or db.dialect
    limits = sql_limits(1 << 20)
    try:
        trees = parse_statements(text, dialect, limits)
    except SQLValidationError as exc:
        return Parsed(skipped="unparsable", detail=str(exc))
    except Exception as exc:
        return Parsed(skipped="unparsable", detail=str(exc).splitlines()[0] if str(exc) else "")
    if not trees:
        return Parsed(skipped="empty")
    return analyze_tree(trees[0], db, dialect, keep_literals, limits, unwrap_ddl)


def _query_of(tree: Any, unwrap_ddl: bool) -> Any:
    """The query ``tree`` is, or with ``unwrap_ddl`` holds as dbt writes it (``create view v as
    (select ...)``, ``insert into t select ...``); None for any other statement."""
    from sqlglot import exp

    if isinstance(tree, exp.Query):
        return tree
    if unwrap_ddl and isinstance(tree, (exp.Create, exp.Insert)):
        inner = tree.expression
        if isinstance(inner, exp.Subquery):
            inner = inner.this
        if isinstance(inner, exp.Query):
            return inner
    return None


_LITERALS = ("Literal", "HexString", "BitString", "ByteString", "RawString", "National", "UnicodeString")


def strip_literals(tree: Any) -> Any:
    """Replace every string and number literal in ``tree`` by a ``?`` placeholder, in place.

    Numbers that are syntax, not data, stay: type parameters (``VARCHAR(10)``), ``GROUP BY 1`` /
    ``ORDER BY 2`` ordinals, ``LIMIT``/``OFFSET``/``TOP`` counts.

    >>> import sqlglot
    >>> strip_literals(sqlglot.parse_one("select a, 'x' from t where b > 3 group by 1 limit 5")).sql()
    'SELECT a, ? FROM t WHERE b > ? GROUP BY 1 LIMIT 5'
    >>> strip_literals(sqlglot.parse_one("select a from t where b in (1, 2, 3)")).sql()
    'SELECT a FROM t WHERE b IN (?)'
    """
    from sqlglot import exp

    kinds = tuple(getattr(exp, k) for k in _LITERALS if hasattr(exp, k))
    syntax = (exp.DataTypeParam, exp.Limit, exp.Offset, exp.Fetch, exp.Group, exp.Ordered)
    for node in list(tree.find_all(*kinds)):
        parent = node.parent
        if isinstance(parent, syntax) and not (isinstance(node, exp.Literal) and node.is_string):
            continue
        if isinstance(parent, (exp.Parameter, exp.Placeholder)):  # $1 is a placeholder already
            continue
        if isinstance(parent, exp.Top if hasattr(exp, "Top") else ()):
            continue
        node.replace(exp.Placeholder(jdbc=True))
    for in_list in tree.find_all(exp.In):  # IN (?, ?, ?) and IN (?, ?) are one statement
        values = in_list.expressions
        if len(values) > 1 and all(isinstance(v, exp.Placeholder) for v in values):
            in_list.set("expressions", values[:1])
    return tree


def _unknown(tree: Any, db: Database) -> list[str]:
    """Relations the statement reads that the schema does not have (temp tables, other schemas)."""
    from sqlglot import exp

    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    out: list[str] = []
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        if (not table.db and table.name.lower() in ctes) or db.table(table.name) is not None:
            continue
        name = ".".join(p for p in (table.text("catalog"), table.text("db"), table.name) if p)
        if name not in out:
            out.append(name)
    return out[:64]


def _columns_and_joins(
    tree: Any, db: Database, dialect: str, limits: SQLLimits
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str, str]]]:
    """Schema columns the statement reads and its equi-join edges between two schema tables,
    each edge ``(table, column, table, column)`` with the smaller side first."""
    from sqlglot import exp
    from sqlglot.optimizer.qualify import qualify
    from sqlglot.optimizer.scope import traverse_scope

    from schemarag.app.querygen.pseudo_columns import pseudo_columns
    from schemarag.app.querygen.sql_bounds import measure

    nodes, _ = measure(tree)
    if nodes > limits.qualify_max_nodes:
        return [], []
    mapping = {  # the validator's mapping: lower-case names, lower-cased query
        t.name.lower(): {
            c.lower(): "UNKNOWN" for c in [*(c.name for c in t.columns), *pseudo_columns(t.name, db.dialect)]
        }
        for t in db.tables
    }
    lowered = tree.copy()
    for table in lowered.find_all(
        exp.Table
    ):  # analytics.public.orders -> orders, as the table check reads it
        if isinstance(table.this, exp.Identifier) and table.db and db.table(table.name) is not None:
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(table.name)))
            table.set("db", None)
            table.set("catalog", None)
    for ident in lowered.find_all(exp.Identifier):  # case-insensitive, quoted or not (Snowflake's
        ident.set("this", ident.name.lower())  # "NAME" is NAME): unquoted, no dialect folds it back
        ident.set("quoted", False)
    qualified = qualify(
        lowered, schema=mapping, dialect=dialect, validate_qualify_columns=False, identify=False
    )
    columns: list[tuple[str, str]] = []
    joins: list[tuple[str, str, str, str]] = []
    scopes = list(traverse_scope(qualified))
    by_select = {id(s.expression): s for s in scopes}
    for scope in scopes:
        mine = {id(c) for c in scope.columns}
        for col in scope.columns:
            hit = _resolve(scope, col.table, col.name, db, 0)
            if hit is not None and hit not in columns:
                columns.append(hit)
        for left, right, inner in _key_pairs(scope.expression, by_select):
            if id(left) not in mine or (inner is None and id(right) not in mine):
                continue
            a = _resolve(scope, left.table, left.name, db, 0)
            b = _resolve(inner or scope, right.table, right.name, db, 0)
            if a is None or b is None or a[0] == b[0]:
                continue
            edge = (*min(a, b), *max(a, b))
            if edge not in joins:
                joins.append(edge)
    return columns, joins


def _key_pairs(expression: Any, by_select: dict[int, Any]) -> list[tuple[Any, Any, Any]]:
    """The column pairs ``expression`` equates, as ``(left, right, scope of right or None)``:

    * ``a.k = b.k``, also with a key wrapped in a function of it alone (``CAST(a.k AS INT)``,
      ``UPPER(TRIM(a.k))``, ``LTRIM(a.k, '0')``): a key-less warehouse joins keys of mismatched
      types and paddings this way;
    * ``a.k IN (SELECT b.k FROM b ...)``, ``NOT IN``, ``= ANY (...)``: the semi-join (``right`` in
      the subquery's scope).
    """
    from sqlglot import exp

    pairs: list[tuple[Any, Any, Any]] = []
    semi: list[tuple[Any, Any, Any]] = []  # listed after the equalities
    for node in expression.find_all(exp.In, exp.EQ, exp.NEQ):  # one walk over the scope
        if isinstance(node, exp.EQ):
            left, right = _key_column(node.left), _key_column(node.right)
            if left is not None and right is not None:
                pairs.append((left, right, None))
        if isinstance(node, exp.In):
            query = node.args.get("query")
        else:  # = ANY (SELECT ...), and NOT IN as Snowflake's parser writes it: <> ALL (SELECT ...)
            query = node.expression.this if isinstance(node.expression, exp.Any | exp.All) else None
        select = query.this if isinstance(query, exp.Subquery) else query
        left = _key_column(node.this)
        if left is None or not isinstance(select, exp.Select) or len(select.expressions) != 1:
            continue
        projected = select.expressions[0]
        right = _key_column(projected.this if isinstance(projected, exp.Alias) else projected)
        inner = by_select.get(id(select))
        if right is not None and inner is not None:
            semi.append((left, right, inner))
    return pairs + semi


def _key_column(node: Any) -> Any:
    """The column ``node`` is, or is a function of with no other column in it; else None.

    >>> import sqlglot
    >>> [_key_column(sqlglot.parse_one(s)) is not None for s in
    ...  ("a.k", "CAST(a.k AS INT)", "LTRIM(a.k, '0')", "a.k + b.k", "SUM(a.k)", "COALESCE(a.k, b.k)")]
    [True, True, True, False, False, False]
    """
    from sqlglot import exp

    if isinstance(node, exp.Column):
        return node
    if not isinstance(node, exp.Func | exp.Paren) or isinstance(
        node, exp.AggFunc | exp.Window | exp.Case | exp.If
    ):
        return None
    if node.find(exp.Select) is not None:
        return None
    found = list(node.find_all(exp.Column))
    return found[0] if len(found) == 1 else None


def _resolve(scope: Any, alias: str, column: str, db: Database, depth: int) -> tuple[str, str] | None:
    """``(schema table, column)`` that ``alias.column`` reads in ``scope`` (parents searched for a
    correlated reference; a CTE or subquery followed to the column it projects), or None."""
    from sqlglot import exp

    if depth > _LINEAGE_DEPTH or not alias:
        return None
    while scope is not None and alias not in scope.sources:
        scope = scope.parent
    if scope is None:
        return None
    source = scope.sources[alias]
    if isinstance(source, exp.Table):
        table = db.table(source.name)
        col = table.column(column) if table is not None else None
        return (table.name, col.name) if table is not None and col is not None else None
    inner = getattr(source, "expression", None)  # a Scope: a CTE, a subquery
    if not isinstance(inner, exp.Select):
        return None
    for projection in inner.expressions:
        if projection.alias_or_name.lower() != column.lower():
            continue
        target = projection.this if isinstance(projection, exp.Alias) else projection
        if isinstance(target, exp.Column):
            return _resolve(source, target.table, target.name, db, depth + 1)
        return None
    return None
