"""A rendered model's output columns (and their types when sqlglot can infer them).

sqlglot qualifies the query against the columns already known for its upstream relations, so
``select * from {{ ref('stg_customers') }}`` expands to ``stg_customers``' columns; a star over an
unknown relation is dropped rather than guessed.

Example:
    >>> output_columns("select id, cast(d as date) as day, count(*) as n from __dbt__.x group by 1, 2",
    ...                {"__dbt__": {"x": {"id": "INT", "d": "TEXT"}}}, "postgres")
    [('id', 'INT'), ('day', 'DATE'), ('n', 'BIGINT')]
"""

from __future__ import annotations

import logging
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

log = logging.getLogger(__name__)

SQLGLOT_DIALECTS = {
    "postgres": "postgres",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "mysql": "mysql",
    "bigquery": "bigquery",
    "snowflake": "snowflake",
    "tsql": "tsql",
}


class SqlColumnsError(Exception):
    """The rendered SQL does not parse, or its output columns cannot be listed."""


def _final_select(tree: exp.Expression) -> exp.Select | None:
    node = tree
    while isinstance(node, exp.SetOperation):  # UNION: the left branch names the columns
        node = node.left
    while isinstance(node, exp.Subquery):
        node = node.this
    return node if isinstance(node, exp.Select) else None


def output_columns(sql: str, schema: dict[str, Any], dialect: str) -> list[tuple[str, str]]:
    """``[(column, type)]`` of the statement's result, type ``""`` when sqlglot cannot tell."""
    read = SQLGLOT_DIALECTS.get(dialect)
    try:
        statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    except SqlglotError as exc:
        raise SqlColumnsError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None
    if not statements:
        raise SqlColumnsError("the rendered SQL is empty")
    tree = statements[-1]
    try:
        tree = qualify(
            tree,
            schema=schema,
            dialect=read,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )
        tree = annotate_types(tree, schema=schema, dialect=read)
    except (SqlglotError, KeyError, ValueError, AttributeError) as exc:
        log.debug("qualify failed (%s); listing the select list as written", exc)
    select = _final_select(tree)
    if select is None:
        raise SqlColumnsError(f"the last statement is a {type(tree).__name__}, not a SELECT")
    out: list[tuple[str, str]] = []
    for item in select.selects:
        name = item.alias_or_name
        if not name or name == "*" or isinstance(item, exp.Star):
            continue
        dtype = item.type
        type_sql = "" if dtype is None or dtype.this == exp.DataType.Type.UNKNOWN else dtype.sql(read)
        out.append((name, type_sql))
    return out
