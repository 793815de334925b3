"""Schema-qualified table names (``sales.orders``) in generated SQL, folded to the schema's names.

Imported warehouse catalogs name tables ``schema.table`` (and sharded families ``events_*``); the
checks after this one look tables up by one name, and DuckDB's bind check creates one table per
schema name. So ``FROM sales.orders`` becomes ``FROM "sales.orders" AS orders`` before them: the
same table, one identifier, and ``orders.amount`` still resolves through the alias.

Example:
    >>> import sqlglot
    >>> from schemarag.runtime.schema import Database
    >>> db = Database.model_validate({"name": "w", "tables": [
    ...     {"name": "sales.orders", "columns": [{"name": "amount"}]}]})
    >>> fold_qualified_tables(sqlglot.parse_one("select orders.amount from sales.orders"), db).sql()
    'SELECT orders.amount FROM "sales.orders" AS orders'
"""

from __future__ import annotations

from typing import Any

from schemarag.runtime.schema import Database


def fold_qualified_tables(tree: Any, db: Database) -> Any:
    """A copy of ``tree`` with each ``schema.table`` the schema knows as one name made one identifier."""
    from sqlglot import exp

    if not any("." in t.name for t in db.tables):
        return tree
    tree = tree.copy()
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier) or not table.args.get("db"):
            continue
        parts = [table.text("catalog"), table.text("db"), table.name]
        for start in range(len(parts)):  # the longest qualified name the schema knows
            name = ".".join(p for p in parts[start:] if p)
            known = db.table(name)
            if known is not None and "." in name:
                table.set("this", exp.to_identifier(known.name, quoted=True))
                table.set("db", None)
                table.set("catalog", None)
                if not table.alias:
                    table.set("alias", exp.TableAlias(this=exp.to_identifier(parts[-1])))
                break
    return tree
