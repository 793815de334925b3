"""Inferred relationships: candidate joins from column names and types, for schemas that
declare no foreign keys (most warehouses, many exports).

Two rules, both from names alone (no data is read, so it works on any schema):

* **reference by name**: ``orders.customer_id`` / ``customerId`` / ``CustomerID`` names the
  table ``customer(s)`` and that table has a one-column primary key (or an ``id`` column):
  ``orders.customer_id -> customers.<pk>``;
* **shared key name**: a column named exactly like another table's one-column primary key
  (``transactions.CustomerID`` ~ ``customers.CustomerID``) references it, unless the column
  is its own table's sole primary key too (two tables keyed alike are siblings, not parent
  and child).

A candidate needs compatible types (both numeric or both text-like) and stays within one
source database of a union (``Table.database``). Declared foreign keys are never changed;
inferred ones carry ``inferred=True`` and the DDL says so.

Example:
    >>> from schemarag.runtime.schema import Database
    >>> db = Database.model_validate({"name": "s", "tables": [
    ...     {"name": "customers", "columns": [{"name": "id", "type": "INTEGER", "primary_key": True}]},
    ...     {"name": "orders", "columns": [{"name": "id", "type": "INTEGER", "primary_key": True},
    ...                                    {"name": "customer_id", "type": "INTEGER"}]}]})
    >>> fk = infer_foreign_keys(db).table("orders").column("customer_id").foreign_key
    >>> fk.table, fk.column, fk.inferred
    ('customers', 'id', True)
"""

from __future__ import annotations

import logging
import re

from schemarag.runtime.schema import Column, Database, ForeignKey, Table

log = logging.getLogger(__name__)

_REF = re.compile(r"^(?P<stem>.+?)(?:_id|_key|id|Id|ID|_no|No)$")
_NUMERIC = ("INT", "NUM", "DEC", "REAL", "FLOAT", "DOUBLE", "BIGINT", "SMALLINT")


def _kind(col_type: str) -> str:
    upper = (col_type or "TEXT").upper()
    return "number" if any(k in upper for k in _NUMERIC) else "text"


def _singular(word: str) -> str:
    for suffix, repl in (("ies", "y"), ("ses", "s"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 1:
            return word[: -len(suffix)] + repl
    return word


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _local(table: Table) -> str:
    """The table's own name within its source (a union prefixes it with the database)."""
    prefix = f"{table.database}__" if table.database else ""
    return table.name[len(prefix) :] if prefix and table.name.startswith(prefix) else table.name


def _target_key(table: Table) -> Column | None:
    pk = [c for c in table.columns if c.primary_key]
    if len(pk) == 1:
        return pk[0]
    return table.column("id") if not pk else None


def infer_foreign_keys(db: Database) -> Database:
    """A copy of ``db`` with inferred foreign keys on columns that declare none."""
    groups: dict[str | None, list[Table]] = {}
    for t in db.tables:
        groups.setdefault(t.database, []).append(t)
    added = 0
    new_tables: list[Table] = []
    for table in db.tables:
        peers = [t for t in groups[table.database] if t.name != table.name]
        by_stem = {_singular(_norm(_local(t))): t for t in peers}
        by_key = {}
        for t in peers:
            key = _target_key(t)
            if key is not None and key.primary_key:
                by_key.setdefault(key.name.lower(), (t, key))
        own_pk = [c.name for c in table.columns if c.primary_key]
        columns = []
        for col in table.columns:
            fk = col.foreign_key or _infer(col, own_pk, by_stem, by_key)
            if fk is not None and col.foreign_key is None:
                added += 1
                col = col.model_copy(update={"foreign_key": fk})
            columns.append(col)
        new_tables.append(table.model_copy(update={"columns": columns}))
    log.info("%s: %d foreign key(s) inferred from names", db.name, added)
    return db.model_copy(update={"tables": new_tables})


def _infer(
    col: Column,
    own_pk: list[str],
    by_stem: dict[str, Table],
    by_key: dict[str, tuple[Table, Column]],
) -> ForeignKey | None:
    sole_pk = own_pk == [col.name]
    hit = by_key.get(col.name.lower())
    if hit is not None and not sole_pk and _kind(hit[1].type) == _kind(col.type):
        return ForeignKey(table=hit[0].name, column=hit[1].name, inferred=True)
    m = _REF.match(col.name)
    if m is None or sole_pk:
        return None
    target = by_stem.get(_singular(_norm(m.group("stem"))))
    key = _target_key(target) if target is not None else None
    if target is None or key is None or _kind(key.type) != _kind(col.type):
        return None
    return ForeignKey(table=target.name, column=key.name, inferred=True)
