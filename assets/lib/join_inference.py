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
    >>> from schemarag.runtime.core.schema import Database
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
import math
import re

from schemarag.runtime.core.schema import Column, Database, ForeignKey, Table

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
    """The table's own name within its source (a union prefixes it with the database, a
    warehouse qualifies it with its schema)."""
    prefix = f"{table.database}__" if table.database else ""
    name = table.name[len(prefix) :] if prefix and table.name.startswith(prefix) else table.name
    return name.rpartition(".")[2]  # a warehouse's schema.table: the table is what a key names


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


# ---------------------------------------------------------------------------------------------
# Warehouse join keys: schemas with no declared keys at all (catalog exports, dbt projects).
# ---------------------------------------------------------------------------------------------

# Last name token of a key column: general English and the usual warehouse spellings.
KEY_SUFFIXES = frozenset({"id", "key", "code", "cd", "no", "nbr", "num", "sk", "fk", "pk", "uuid", "guid"})
# Table-name decoration that says what kind of table it is, not what it holds (dim_customer).
TABLE_DECORATION = frozenset(
    {"dim", "fct", "fact", "tbl", "lkp", "lookup", "ref", "stg", "vw", "view", "d", "f"}
)
# A key name shared by more tables than this without an owner is a ubiquitous attribute
# (``country_code``, ``date_key`` in every fact table), not a join worth spending budget on.
MAX_SHARED_WITHOUT_OWNER = 6
CONF_REFERENCE = 0.9  # orders.customer_id -> customers.<pk or id>
CONF_OWNER = 0.8  # orders.customer_key ~ customer_dim.customer_key (the table named after the key)
CONF_SHARED = 0.6  # a key name a few tables share, no owner: joined to the narrowest of them

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^A-Za-z0-9]+")


def name_tokens(name: str) -> list[str]:
    """Lower-case word tokens of an identifier: ``CUST_ACCT_DIM`` and ``custAcctDim`` alike.

    >>> name_tokens("CUST_ACCT_DIM"), name_tokens("customerId"), name_tokens("ds.order_items")
    (['cust', 'acct', 'dim'], ['customer', 'id'], ['order', 'items'])
    """
    base = name.rpartition(".")[2]
    return [t.lower() for part in _SPLIT.split(base) if part for t in _CAMEL.split(part) if t]


def key_stem(column: str) -> str | None:
    """The entity a key-like column names (``customer_key`` -> ``customer``), None if not key-like.

    >>> key_stem("CUSTOMER_KEY"), key_stem("orderId"), key_stem("status"), key_stem("id")
    ('customer', 'order', None, None)
    """
    tokens = name_tokens(column)
    if len(tokens) < 2 or tokens[-1] not in KEY_SUFFIXES:
        glued = _REF.match(column)  # customerid, CustomerID
        stem = glued.group("stem").lower() if glued and len(tokens) == 1 else ""
        return _singular(stem) if len(stem) >= 4 else None  # "customerid", not "valid"
    return "_".join(_singular(t) for t in tokens[:-1])


def table_stem(table: Table) -> str:
    """What a table holds, from its name without decoration: ``dim_customers`` -> ``customer``."""
    tokens = [t for t in name_tokens(_local(table)) if t not in TABLE_DECORATION] or name_tokens(
        _local(table)
    )
    return "_".join(_singular(t) for t in tokens)


def _owns(table: Table, column: Column, stem: str) -> bool:
    """Is ``column`` ``table``'s own key: its sole primary key, or the table is named after it
    (``customers.customer_id``, ``customer_dim.customer_key``, ``sales_customer.customer_id``)."""
    if [c.name for c in table.columns if c.primary_key] == [column.name]:
        return True
    tstem = table_stem(table)
    return tstem == stem or tstem.endswith("_" + stem)


def infer_join_keys(db: Database) -> Database:
    """A copy of ``db`` with inferred joins (``inferred=True``, ``confidence``) on columns that
    declare none; declared keys are never changed. Rules, highest confidence first:

    * **reference by name** (:data:`CONF_REFERENCE`): :func:`infer_foreign_keys`' two rules;
    * **owner by name** (:data:`CONF_OWNER`): a key-like column (``*_id``, ``*_key``, ``*_code``
      ...) shared with a table named after it (its own key) references that table;
    * **shared key** (:data:`CONF_SHARED`): a key-like name 2..MAX_SHARED_WITHOUT_OWNER tables
      share with compatible types, none owning it: each references the narrowest of them (a
      lookup is narrower than a fact table), with confidence falling as more tables share it.

    Bridge tables need no rule of their own: a table whose columns are keys of two others gets
    an edge to each, and join-path completion walks through it.
    """
    named = infer_foreign_keys(db)
    groups: dict[str | None, list[Table]] = {}
    for t in named.tables:
        groups.setdefault(t.database, []).append(t)
    extra: dict[tuple[str, str], ForeignKey] = {}
    for tables in groups.values():
        by_name: dict[str, list[tuple[Table, Column]]] = {}
        for t in tables:
            for c in t.columns:
                if key_stem(c.name) is not None:
                    by_name.setdefault(c.name.lower(), []).append((t, c))
        for pairs in by_name.values():
            if len({t.name for t, _ in pairs}) < 2:
                continue
            stem = key_stem(pairs[0][1].name) or ""
            owners = [(t, c) for t, c in pairs if _owns(t, c, stem)]
            if len(owners) == 1:
                parent, conf = owners[0], CONF_OWNER
            elif not owners and len(pairs) <= MAX_SHARED_WITHOUT_OWNER:
                parent = min(pairs, key=lambda p: (len(p[0].columns), p[0].name))
                conf = round(CONF_SHARED / math.sqrt(len(pairs) - 1), 3)
            else:
                continue
            ptable, pcol = parent
            for t, c in pairs:
                if t.name == ptable.name or _kind(c.type) != _kind(pcol.type):
                    continue
                extra[(t.name, c.name)] = ForeignKey(
                    table=ptable.name, column=pcol.name, inferred=True, evidence="names", confidence=conf
                )
    added = 0
    new_tables = []
    for table in named.tables:
        columns = []
        for col in table.columns:
            fk = col.foreign_key
            if fk is not None and fk.inferred and fk.confidence is None:
                fk = fk.model_copy(update={"confidence": CONF_REFERENCE, "evidence": "names"})
                col = col.model_copy(update={"foreign_key": fk})
            elif fk is None and (table.name, col.name) in extra:
                col = col.model_copy(update={"foreign_key": extra[(table.name, col.name)]})
            added += col.foreign_key is not None and col.foreign_key.inferred
            columns.append(col)
        new_tables.append(table.model_copy(update={"columns": columns}))
    log.info("%s: %d join key(s) inferred from names", db.name, added)
    return named.model_copy(update={"tables": new_tables})


def declares_keys(db: Database) -> bool:
    """Whether any column declares a foreign key (inference is for schemas that declare none)."""
    return any(c.foreign_key is not None and not c.foreign_key.inferred for t in db.tables for c in t.columns)


# Version of the warehouse rules in the build key: a database that declares no keys is built
# with inferred join keys (``join_params``); changing the rules rebuilds exactly those.
JOIN_INFERENCE_VERSION = 1


def join_params(declared: bool) -> dict[str, int]:
    """Build parameters inference adds to the key: ``{"join_inference": N}`` for a database
    that declares no foreign key, nothing otherwise (so every other database keeps its key)."""
    return {} if declared else {"join_inference": JOIN_INFERENCE_VERSION}


def declares_keys_raw(decoded: dict) -> bool:
    """:func:`declares_keys` on an unvalidated schema JSON object (the no-op rebuild check)."""
    try:
        return any(
            isinstance(c, dict) and c.get("foreign_key") for t in decoded["tables"] for c in t["columns"]
        )
    except (TypeError, KeyError):
        return True
