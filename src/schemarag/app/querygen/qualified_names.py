"""Schema-qualified table names (``sales.orders``) in generated SQL, folded to the schema's names.

Imported warehouse catalogs name tables ``schema.table`` (and sharded families ``events_*``); the
checks after this one look tables up by one name, and DuckDB's bind check creates one table per
schema name. So ``FROM sales.orders`` becomes ``FROM "sales.orders" AS orders`` before them: the
same table, one identifier, and ``orders.amount`` still resolves through the alias.

Example:
    >>> import sqlglot
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "w", "tables": [
    ...     {"name": "sales.orders", "columns": [{"name": "amount"}]}]})
    >>> fold_qualified_tables(sqlglot.parse_one("select orders.amount from sales.orders"), db).sql()
    'SELECT orders.amount FROM "sales.orders" AS orders'
"""

from __future__ import annotations

from typing import Any

from schemarag.runtime.core.schema import Database


def fold_qualified_tables(tree: Any, db: Database) -> Any:
    """A copy of ``tree`` with each ``schema.table`` the schema knows as one name made one
    identifier, and each shard of a collapsed family (``ga4.events_20210105``), or a wildcard over
    part of it (``ga4.events_202101*``), named as its family (``ga4.events_*``, the table that
    holds its columns)."""
    from sqlglot import exp

    families = [t for t in db.tables if t.shards is not None]
    if not families and not any("." in t.name for t in db.tables):
        return tree
    tree = tree.copy()
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            continue
        parts = [table.text("catalog"), table.text("db"), table.name]
        names = [".".join(p for p in parts[start:] if p) for start in range(len(parts))]  # longest first
        known = qualified_table(table, db)
        if known is None and db.table(names[0]) is None:
            known = next((f for n in names for f in families if _in_family(f, n)), None)
        if known is not None:
            table.set("this", exp.to_identifier(known.name, quoted=True))
            table.set("db", None)
            table.set("catalog", None)
            if not table.alias:
                table.set("alias", exp.TableAlias(this=exp.to_identifier(parts[-1])))
    return tree


def written_name(table: Any) -> str:
    """A table reference's name as the query qualifies it, lower case (``sales.orders``)."""
    return ".".join(p for p in (table.text("catalog"), table.text("db"), table.name) if p).lower()


def qualified_table(table: Any, db: Database) -> Any:
    """The schema table a qualified reference names: the longest of its dotted suffixes the
    schema knows (``proj.sales.orders`` -> ``sales.orders``), or None (a plain name, or unknown)."""
    parts = written_name(table).split(".")
    names = (".".join(parts[start:]) for start in range(len(parts) - 1))  # longest first, dotted
    return next((t for n in names if (t := db.table(n)) is not None), None)


def _in_family(family: Any, name: str) -> bool:
    """``name`` is one of ``family``'s shards, or a wildcard over part of them."""
    return family.shards is not None and (family.shards.member(name) or family.shards.wildcard(name))
