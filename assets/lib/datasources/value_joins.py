"""Inferred joins from value containment: for a live datasource that declares no foreign keys,
ask the database whether a column's values are all found in another table's key.

Names alone (:mod:`schemarag.assets.lib.join_inference`) guess; the data can confirm or refute.
But containment alone is weak evidence: a column holding ``{1, 2}`` is "contained" in every
integer id column. So a candidate pair ``child.col -> parent.key`` must pass all of:

* **a key on the parent side**: the parent column is its table's one-column primary key, or a
  key-like column (``id``, ``uuid``, ``code``, ``*_id``, ``*Code``) whose values the query finds
  unique and non-null;
* **join-compatible types**: both integer, both text, or both uuid (no floats, dates, booleans);
* **no declared FK** on the child column, which is not the parent column itself, nor its own
  table's sole primary key unless it is a one-to-one extension (strongly named after the parent,
  fewer rows);
* **evidence beyond chance** (:func:`name_tier`): a *strong* name (``orders.customer_id`` ~
  ``customers``, ``posts.owner_user_id`` ~ ``users``, the same key name ``CustomerID`` on both
  sides) needs one value; a *weak* name (the parent table is a word of the child's name,
  ``away_player_3`` ~ ``player``) or none at all needs ``min_distinct`` distinct values, and
  without any name relation an integer child must look like a key (``*_id``): plain integers
  (counts, years, ratings) fall inside id ranges all the time;
* **containment**: at least ``min_containment`` (default 95%: undeclared keys come with orphan
  rows) of up to ``sample_values`` distinct non-null child values exist in the parent column
  (with ``min_containment: 1`` integer ranges are pre-checked with MIN/MAX, saving queries).

Each child column then gets at most one parent: a stronger name tier wins, then a declared
primary key beats a key found by query, and a tie at the top is ambiguous,
so nothing is inferred (``orders.buyer_ref`` contained in both ``users.id`` and ``shops.id``).
Pairs are checked strongest names first, at most ``max_pairs`` per database; every statement goes through
the adapter's ``query`` (read-only session, statement timeout) and a timeout skips that pair.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any

from schemarag.assets.lib.datasources.adapters.base import Adapter, QueryTimeout, RawTable, quote_ident
from schemarag.assets.lib.datasources.config import DatasourceEntry
from schemarag.assets.lib.join_inference import _norm, _singular
from schemarag.runtime.core.schema import Column, ForeignKey, Table

log = logging.getLogger(__name__)

_INTEGER = re.compile(r"(?<![a-z])u?(big|small|tiny|medium|huge)?int(eger|2|4|8)?(?![a-z])|serial")
_TEXT = re.compile(r"char|text|clob|string|citext")
_UUID = re.compile(r"\buuid\b")


def type_class(col_type: str) -> str | None:
    """``integer``, ``text`` or ``uuid`` for join-compatible types; None for everything else.

    >>> [type_class(t) for t in ("INTEGER", "bigint", "character varying(20)", "POINT", "REAL", "")]
    ['integer', 'integer', 'text', None, None, None]
    """
    low = (col_type or "").lower()
    if _INTEGER.search(low):
        return "integer"
    if _TEXT.search(low):
        return "text"
    return "uuid" if _UUID.search(low) else None


# join_inference's key suffixes plus "code" (``setCode`` -> ``sets.code``)
_KEY_SUFFIX = re.compile(r"^(?P<stem>.+?)(?:_id|_key|id|Id|ID|_no|No|_code|Code)$")
_KEY_NAMES = {"id", "uuid", "guid", "key", "code"}
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

STRONG, WEAK, NONE = 2, 1, 0


def _table_stem(table: str) -> str:
    return _singular(_norm(table.rsplit(".", 1)[-1]))


def name_tier(child: str, parent_table: str, parent_col: str) -> int:
    """How strongly the child column's name points at ``parent_table.parent_col``.

    ``STRONG``: ``<parent>_id`` (also ``owner_user_id`` -> ``users``) or the same key name on
    both sides (``CustomerID``); ``WEAK``: the parent table is one word of the child's name
    (``away_player_3`` -> ``player``, ``link_to_event`` -> ``event``) or both are called ``id``;
    ``NONE`` otherwise (``UpVotes`` -> ``votes`` too: a plural word counts, it does not point).
    Weak and unrelated names need ``min_distinct`` values.

    >>> name_tier("customer_id", "customers", "id"), name_tier("OwnerUserId", "users", "Id")
    (2, 2)
    >>> name_tier("CustomerID", "customers", "CustomerID"), name_tier("link_to_event", "event", "event_id")
    (2, 1)
    >>> name_tier("quantity", "items", "id"), name_tier("ID", "Patient", "ID")
    (0, 1)
    """
    target = _table_stem(parent_table)
    if _norm(child) == _norm(parent_col):
        return WEAK if _norm(parent_col) == "id" else STRONG
    m = _KEY_SUFFIX.match(child)
    if m is not None and target:
        stem = _singular(_norm(m.group("stem")))
        if stem == target or (len(target) >= 3 and stem.endswith(target)):
            return STRONG
    # the word in its singular form: a reference names one parent, a count names many (UpVotes)
    words = {w.lower() for w in _WORDS.findall(child)}
    return WEAK if len(target) >= 3 and target in words else NONE


def names_relate(child: str, parent_table: str, parent_col: str) -> bool:
    """True when :func:`name_tier` is ``STRONG``."""
    return name_tier(child, parent_table, parent_col) == STRONG


def _key_like(name: str, table: str) -> bool:
    """A column that could be a key: ``id``, ``uuid``, ``code``, ``*_id``, ``*Code`` (checked by query)."""
    return _norm(name) in _KEY_NAMES or _KEY_SUFFIX.match(name) is not None


@dataclass
class _Parent:
    table: Table
    sql_name: str
    column: Column
    kind: str
    declared: bool
    range: tuple[Any, Any] | None = None


@dataclass
class _Child:
    table: Table
    sql_name: str
    column: Column
    kind: str
    distinct: int = 0
    range: tuple[Any, Any] | None = None


@dataclass
class ValueJoinReport:
    """What the inference did, for logs and the snapshot result."""

    inferred: list[str] = field(default_factory=list)  # "orders.customer_id -> customers.id (40/40)"
    # queried pairs with over half of the child's values missing from the parent
    refuted: set[tuple[str, str, str, str]] = field(default_factory=set)
    pairs_checked: int = 0
    pairs_over_cap: int = 0
    timeouts: int = 0


class ValueJoinInference:
    """One pass over a snapshot's tables with an open adapter."""

    def __init__(self, entry: DatasourceEntry, adapter: Adapter, raw: list[RawTable]) -> None:
        self.entry = entry
        self.adapter = adapter
        self.settings = entry.join_inference
        self.scan_rows = entry.sampling.scan_rows
        self.sql_names = {t.name: t.sql_name for t in raw}
        self.report = ValueJoinReport()
        self._child_stats: dict[tuple[str, str], tuple[int, tuple[Any, Any] | None]] = {}

    def run(self, tables: list[Table]) -> list[Table]:
        """``tables`` with inferred ``foreign_key`` set on columns the data supports."""
        parents = self._parents(tables)
        pairs = self._pairs(tables, parents)
        found: dict[tuple[str, str], list[tuple[tuple[int, int], _Parent]]] = {}
        for tier, child, parent in pairs:
            if self.report.pairs_checked >= self.settings.max_pairs:
                self.report.pairs_over_cap += 1
                continue
            if not self._plausible(tier, child, parent):
                continue
            if self._contained(child, parent):
                rank = (tier, int(parent.declared))
                found.setdefault((child.table.name, child.column.name), []).append((rank, parent))
        return self._apply(tables, found)

    # -- candidates ---------------------------------------------------------------------------

    def _parents(self, tables: list[Table]) -> list[_Parent]:
        """One-column primary keys, and key-like columns the query finds unique and non-null."""
        out = []
        for t in tables:
            pk = [c for c in t.columns if c.primary_key]
            if len(pk) == 1 and type_class(pk[0].type):
                out.append(_Parent(t, self.sql_names[t.name], pk[0], type_class(pk[0].type) or "", True))
            for c in t.columns:
                kind = type_class(c.type)
                sole = len(pk) == 1 and pk[0] is c
                if not kind or sole or c.foreign_key is not None or not _key_like(c.name, t.name):
                    continue
                if not self.entry.column_excluded(t.name, c.name) and self._unique(t, c):
                    out.append(_Parent(t, self.sql_names[t.name], c, kind, False))
        return out

    def _pairs(self, tables: list[Table], parents: list[_Parent]) -> list[tuple[int, _Child, _Parent]]:
        pairs = []
        for t in tables:
            sole_pk = [c.name for c in t.columns if c.primary_key]
            for c in t.columns:
                kind = type_class(c.type)
                if kind is None or c.foreign_key is not None or self.entry.column_excluded(t.name, c.name):
                    continue
                if names_relate(c.name, t.name, "") and sole_pk == [c.name]:
                    continue  # ``constructorResultsId`` in ``constructorResults``: its own key
                child = _Child(t, self.sql_names[t.name], c, kind)
                for p in parents:
                    if p.kind != kind or (p.table.name == t.name and p.column.name == c.name):
                        continue
                    tier = name_tier(c.name, p.table.name, p.column.name)
                    if sole_pk == [c.name] and not (tier == STRONG and _smaller(t, p.table)):
                        # two tables keyed alike are siblings; a one-to-one extension table is
                        # named after its parent and holds fewer rows
                        continue
                    if tier > NONE or kind != "integer" or _KEY_SUFFIX.match(c.name):
                        pairs.append((tier, child, p))
        # strongly named pairs first, so the cap spends its queries on the likeliest joins
        pairs.sort(key=lambda x: (-x[0], x[1].table.name, x[1].column.name, x[2].table.name))
        return pairs

    # -- queries ------------------------------------------------------------------------------

    def _query(self, sql: str) -> list[tuple[Any, ...]] | None:
        try:
            return self.adapter.query(sql)
        except QueryTimeout:
            self.report.timeouts += 1
            return None

    def _sample(self, child: _Child) -> str:
        col = quote_ident(child.column.name)
        return (
            f"(SELECT DISTINCT v FROM (SELECT {col} AS v FROM {child.sql_name} WHERE {col} IS NOT NULL "
            f"LIMIT {int(self.scan_rows)}) AS s0 LIMIT {int(self.settings.sample_values)}) AS s"
        )

    def _unique(self, t: Table, c: Column) -> bool:
        col = quote_ident(c.name)
        rows = self._query(
            f"SELECT COUNT(*), COUNT(v), COUNT(DISTINCT v) FROM "
            f"(SELECT {col} AS v FROM {self.sql_names[t.name]} LIMIT {int(self.scan_rows)}) AS s"
        )
        if not rows:
            return False
        total, non_null, distinct = (int(x or 0) for x in rows[0])
        return total > 0 and total == non_null == distinct

    def _child_info(self, child: _Child) -> None:
        cache = self._child_stats  # one statistics query per child column, not per pair
        key = (child.table.name, child.column.name)
        if key not in cache:
            rows = self._query(f"SELECT COUNT(*), MIN(v), MAX(v) FROM {self._sample(child)}")
            distinct = int(rows[0][0] or 0) if rows else 0
            cache[key] = (distinct, (rows[0][1], rows[0][2]) if rows and distinct else None)
        child.distinct, child.range = cache[key]

    def _parent_range(self, parent: _Parent) -> tuple[Any, Any] | None:
        if parent.range is None and parent.kind == "integer":
            col = quote_ident(parent.column.name)
            rows = self._query(f"SELECT MIN({col}), MAX({col}) FROM {parent.sql_name}")
            parent.range = (rows[0][0], rows[0][1]) if rows else (None, None)
        return parent.range

    def _plausible(self, tier: int, child: _Child, parent: _Parent) -> bool:
        """Cheap filters before the containment query: empty, too few values, out of range."""
        self._child_info(child)
        if child.distinct == 0 or (tier < STRONG and child.distinct < self.settings.min_distinct):
            return False
        if child.kind != "integer" or tier == STRONG or self.settings.min_containment < 1:
            # text order depends on the collation; a strongly named pair is always queried, so
            # `both` learns whether its values are there; orphans may lie outside the range
            return True
        low, high = self._parent_range(parent) or (None, None)
        if low is None or child.range is None:
            return True
        with contextlib.suppress(TypeError):
            if int(child.range[0]) < int(low) or int(child.range[1]) > int(high):
                return False
        return True

    def _contained(self, child: _Child, parent: _Parent) -> bool:
        self.report.pairs_checked += 1
        key = quote_ident(parent.column.name)
        rows = self._query(
            f"SELECT COUNT(DISTINCT s.v), COUNT(DISTINCT CASE WHEN p.{key} IS NOT NULL THEN s.v END) "
            f"FROM {self._sample(child)} LEFT JOIN {parent.sql_name} AS p ON p.{key} = s.v"
        )
        if rows is None:
            return False
        total, hits = (int(x or 0) for x in rows[0])
        if total and hits * 2 < total:  # most values missing: the data contradicts the names too
            self.report.refuted.add(
                (child.table.name, child.column.name, parent.table.name, parent.column.name)
            )
        return total > 0 and hits > 0 and hits >= math.ceil(self.settings.min_containment * total)

    # -- choice -------------------------------------------------------------------------------

    def _apply(
        self, tables: list[Table], found: dict[tuple[str, str], list[tuple[tuple[int, int], _Parent]]]
    ) -> list[Table]:
        out = []
        for t in tables:
            columns = []
            for c in t.columns:
                hits = sorted(found.get((t.name, c.name), []), key=lambda h: h[0], reverse=True)
                best = [p for rank, p in hits if rank == hits[0][0]] if hits else []
                if len(best) > 1:
                    names = ", ".join(f"{p.table.name}.{p.column.name}" for p in best)
                    log.info(
                        "%s: %s.%s ambiguous (contained in %s); no join inferred",
                        self.entry.name,
                        t.name,
                        c.name,
                        names,
                    )
                elif best:
                    p = best[0]
                    fk = ForeignKey(
                        table=p.table.name, column=p.column.name, inferred=True, evidence="values"
                    )
                    c = c.model_copy(update={"foreign_key": fk})
                    self.report.inferred.append(f"{t.name}.{c.name} -> {p.table.name}.{p.column.name}")
                columns.append(c)
            out.append(t.model_copy(update={"columns": columns}))
        return out


def _smaller(child: Table, parent: Table) -> bool:
    return child.row_count is not None and parent.row_count is not None and child.row_count < parent.row_count


def infer_value_joins(
    entry: DatasourceEntry, adapter: Adapter, raw: list[RawTable], tables: list[Table]
) -> tuple[list[Table], ValueJoinReport]:
    """Tables with value-inferred joins, and the report (see the module docstring for the rules)."""
    inference = ValueJoinInference(entry, adapter, raw)
    out = inference.run(tables)
    r = inference.report
    log.info(
        "%s: %d join(s) inferred from values (%d pair(s) checked, %d over the cap of %d, %d timeout(s))",
        entry.name,
        len(r.inferred),
        r.pairs_checked,
        r.pairs_over_cap,
        entry.join_inference.max_pairs,
        r.timeouts,
    )
    return out, r
