"""What a FROM/JOIN target may be: a table of the schema, a CTE, a subquery, or a row generator.

A relation is where a query reads rows from, so it decides what the query can see. The function
allow-list (:mod:`.allowlist`) asks whether a call is side-effect free; a relation must also read
nothing but the schema's tables. Snowflake stages (``@stage/file.csv``, ``@%table``), table
functions that name what they read (``TABLE('SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY')``,
``TABLE(RESULT_SCAN(...))``, ``read_csv``, ``query_table``) and placeholders or parameters
standing for a relation (``FROM ?``, ``FROM :t``, ``FROM $1``: the caller picks the table at run
time) all read something the validator never saw, so each is invalid with its kind and text
(issue 39: they were "unchecked", exit 3, before). What stays allowed: the schema's tables
(checked by name afterwards), CTEs, subqueries, ``VALUES``, and the reviewed row generators below,
which only expand their own arguments (``UNNEST``, Snowflake's ``FLATTEN``, ``generate_series``,
SQLite's ``json_each``): Spider 2.0 and BIRD queries use them, and they read no table by name.

Example:
    >>> import sqlglot
    >>> relation_errors(sqlglot.parse_one("SELECT * FROM @s/x.csv", read="snowflake"))[0][:44]
    'not allowed: stage, placeholder or parameter'
"""

from __future__ import annotations

from typing import Any

# sqlglot classes of table functions that produce rows from their arguments only.
ROW_GENERATOR_CLASSES = frozenset(
    {
        "Unnest", "Explode", "ExplodeOuter", "Posexplode", "PosexplodeOuter", "Flatten",
        "GenerateSeries", "ExplodingGenerateSeries", "GenerateDateArray", "GenerateTimestampArray",
    }
)  # fmt: skip
# Untyped (``exp.Anonymous``) table functions of the same kind; each must also pass the function
# allow-list of its dialect, so this list only narrows what a relation may be.
ROW_GENERATOR_NAMES = frozenset(
    {
        "unnest", "flatten", "generate_series", "range", "generate_subscripts",
        "json_each", "json_tree", "json_each_text", "jsonb_each", "jsonb_each_text",
        "json_array_elements", "json_array_elements_text", "jsonb_array_elements",
        "jsonb_array_elements_text", "regexp_split_to_table", "string_to_table", "split_to_table",
    }
)  # fmt: skip
_FIX = "read only tables of the schema (or CTEs, subqueries, UNNEST of them)"


def relation_errors(tree: Any, dialect: str | None = None) -> list[str]:
    """One message per FROM/JOIN target that is not a table, CTE, subquery or row generator, and
    per CTE whose body is not a query (found by the property test: a CTE is a relation too)."""
    from sqlglot import exp

    errors: list[str] = []
    for cte in tree.find_all(exp.CTE):
        if not isinstance(cte.this, exp.Query):  # WITH c AS (REMOVE @s): sqlglot reads an expression
            body = _short(cte.this.sql(dialect=dialect))
            errors.append(f"not allowed: CTE {cte.alias_or_name!r} is {body!r}, not a query; {_FIX}")
    for node in tree.find_all(exp.Table, exp.TableFromRows, exp.Lateral):
        target = node.this
        if isinstance(node, exp.Table) and isinstance(target, exp.Identifier):
            continue  # a name: the schema check decides
        if isinstance(node, exp.Lateral) and isinstance(target, (exp.Subquery, exp.Query)):
            continue
        message = _target_error(target, node, dialect)
        if message and message not in errors:
            errors.append(message)
    return errors


def _target_error(target: Any, node: Any, dialect: str | None) -> str:
    """Why ``target`` (the expression inside a Table/TABLE(...)/LATERAL node) may not be read,
    quoted as the dialect writes it (``$1`` stays ``$1`` in PostgreSQL)."""
    from sqlglot import exp

    text = _short((node if isinstance(target, exp.Var) else target).sql(dialect=dialect))
    # sqlglot writes a parameter in the dialect's own form (@s is $s in PostgreSQL), so the kinds
    # share one label: each reads a relation the validator never saw
    if (isinstance(target, exp.Var) and target.name.startswith("@")) or isinstance(
        target, (exp.Placeholder, exp.Parameter)
    ):
        shown = target.name if isinstance(target, exp.Var) else text
        return f"not allowed: stage, placeholder or parameter {shown!r} as a FROM/JOIN target; {_FIX}"
    if isinstance(target, exp.Func) and _is_row_generator(target) and not node.args.get("db"):
        return ""
    if isinstance(target, exp.Func) or isinstance(node, exp.TableFromRows):
        return f"not allowed: table function {text} as a FROM/JOIN target; {_FIX}"
    return f"not allowed: {text!r} as a FROM/JOIN target; {_FIX}"


def _is_row_generator(func: Any) -> bool:
    from sqlglot import exp

    if isinstance(func, exp.Anonymous):
        return str(func.this).lower() in ROW_GENERATOR_NAMES
    return type(func).__name__ in ROW_GENERATOR_CLASSES


def _short(text: str, limit: int = 80) -> str:
    """One line, at most ``limit`` characters: the message quotes hostile text."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
