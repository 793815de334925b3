"""Dated tables: one table per year (``vehicle_2015`` / ``vehicle_2016``), and the year a question names.

Warehouses keep a table per year beside each other: ``vehicle_2015`` and ``vehicle_2016``,
``accident_2015`` beside the shard family ``accident_*`` of 2016 .. 2019 that ``import catalog``
collapsed, ``county_2015_5yr`` beside ``county_2017_5yr``. Their chunks hold the same words, so
for "traffic accidents in 2015" the 2016 copies and the 2016 .. 2019 family score as high as the
2015 tables and take the places of the 2015 tables the question also needs (``person_2015``).
A family of three or more numbered tables takes few places already
(:mod:`~.table_families`); two copies, or a collapsed family beside the year it left out, do not
form one.

A *dated group* is the tables of one database whose names are equal once every digit run and a
shard family's ``*`` are read as ``#`` (whitespace and case aside), that share at least
``overlap`` of their columns with the group's first member, and that cover at least two
different spans of years. A table covers the years of its name (a 4-digit run 1800 .. 2099, or
the year of a ``YYYYMM[DD]`` run; two of them are a range, ``icoads_core_1800_2000``) or of its
shard family's range (``YYYY``-shaped patterns, or numbers that are years). When the question
names years (:func:`~.table_families.question_numbers`: its years, every year of a span "from
2011 to 2020"), the members of a group covering none of them score ``year_prior`` of their
score, if another member covers one: the question's own year then leads, and a question naming
no year, or only years no member covers, changes nothing.

A table of a period may also have a name of its own (``icoads_core_2005_2017`` beside GSOD's
daily family ``gsod*`` of 1929 .. 2024): :class:`TableSpans` holds every table whose name or
shard range gives years, and the database-wide prior scores those covering none of the
question's years ``year_prior_wide`` of their score, when some table of the database covers one
(a member of a group already scored is left to the group's prior). A table whose name gives no
year (``stations``) never changes.

The groups are read from the index's names, columns and shard ranges once per opened version
(weak-keyed cache); per request the cost is the question's years and one comparison per table
with years, nothing in an index without them.

Example:
    >>> cols = ["st_case", "state", "veh_no"]
    >>> groups = dated_groups_of(["vehicle_2015", "vehicle_2016", "person_2015"],
    ...                          {"vehicle_2015": cols, "vehicle_2016": cols, "person_2015": cols}, {})
    >>> groups.outdated({2015}).tolist(), groups.outdated({2016}).tolist(), groups.outdated({2020}).tolist()
    ([1], [0], [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from typing import Any

import numpy as np

from schemarag.runtime.core.schema import ShardRange
from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.search.per_artifact import per_artifact
from schemarag.runtime.search.table_families import (
    DIGITS,
    YEAR,
    alike_columns,
    numbered_key,
    question_numbers,
)

_DATED_PATTERNS = ("YYYYMMDD", "YYYY_MM_DD", "YYYYMM", "YYYY")
FIRST_YEAR, LAST_YEAR = 1800, 2099  # a 4-digit run of a table name read as a year (not a 1705 deployment)


def _year(run: str) -> int | None:
    """The year a digit run of a table name holds: 4 digits in range, or ``YYYYMM[DD]``'s first 4."""
    if len(run) == 4 or (len(run) in (6, 8) and run[:2] in ("19", "20")):
        y = int(run[:4])
        return y if FIRST_YEAR <= y <= LAST_YEAR else None
    return None


def table_years(name: str, shards: ShardRange | None = None) -> tuple[int, int] | None:
    """``(first, last)`` year the table covers, from its shard range or its name (None: no year).

    >>> table_years("vehicle_2015"), table_years("noaa_icoads.icoads_core_1800_2000")
    ((2015, 2015), (1800, 2000))
    >>> days = ShardRange(stem="ev_", pattern="YYYYMMDD", first="20210101", last="20220131", count=396)
    >>> years = ShardRange(stem="accident_", pattern="N", first="2016", last="2019", count=4)
    >>> table_years("ev_*", days), table_years("accident_*", years)
    ((2021, 2022), (2016, 2019))
    >>> table_years("cpsaat18"), table_years("bls_qcew.2017_q2")
    (None, (2017, 2017))
    """
    if shards is not None:
        if shards.pattern not in _DATED_PATTERNS and shards.pattern != "N":
            return None
        # a dated suffix begins with its year (``2021_01_01``); a number is a year or none
        lo, hi = (_year(v if shards.pattern == "N" else v[:4]) for v in (shards.first, shards.last))
        return (lo, hi) if lo is not None and hi is not None and lo <= hi else None
    years = [y for y in map(_year, DIGITS.findall(name.rpartition(".")[2])) if y is not None]
    return (min(years), max(years)) if years else None


def question_years(question: str, max_span: int = SHIPPED.year_span_max) -> set[int]:
    """The years a question names (a span's years included: :func:`question_numbers`).

    >>> sorted(question_years("accidents from 2015 to 2017 on route 2000"))
    [2000, 2015, 2016, 2017]
    """
    numbers, _ = question_numbers(question, True, max_span)
    return {int(n) for n in numbers if YEAR.match(n)}


def _covers(first: np.ndarray, last: np.ndarray, years: Set[int]) -> np.ndarray:
    """Per span ``first[i] .. last[i]``, whether it covers one of ``years``: one broadcast
    comparison (the dated groups and the database-wide spans read it alike)."""
    wanted = np.asarray(sorted(years), dtype=np.int64)
    return ((first[:, None] <= wanted) & (wanted <= last[:, None])).any(axis=1)


class DatedGroups:
    """Every dated group's tables (indices of the index's names) and the years each covers, as
    flat arrays ordered by group: a request compares the question's years with all members at
    once, with no loop over the groups."""

    def __init__(self, groups: Sequence[tuple[Sequence[int], Sequence[tuple[int, int]]]]) -> None:
        self.ids = np.asarray([i for ids, _ in groups for i in ids], dtype=np.int64)
        self.first = np.asarray([lo for _, spans in groups for lo, _ in spans], dtype=np.int64)
        self.last = np.asarray([hi for _, spans in groups for _, hi in spans], dtype=np.int64)
        self.sizes = np.asarray([len(ids) for ids, _ in groups], dtype=np.int64)
        self.group = np.repeat(np.arange(len(groups)), self.sizes)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    def __len__(self) -> int:
        """The number of dated groups."""
        return int(self.sizes.size)

    def outdated(self, years: Set[int]) -> np.ndarray:
        """Indices of the members covering none of ``years`` in groups where another one does."""
        if not years or not self.ids.size:
            return np.zeros(0, dtype=np.int64)
        covers = _covers(self.first, self.last, years)
        covered = np.add.reduceat(covers.astype(np.int64), self.starts)
        partly = (covered > 0) & (covered < self.sizes)
        return self.ids[~covers & partly[self.group]]


def dated_groups_of(
    names: Sequence[str],
    columns: Mapping[str, Sequence[str]],
    shards: Mapping[str, ShardRange],
    overlap: float = SHIPPED.family_column_overlap,
) -> DatedGroups:
    """The :class:`DatedGroups` of tables ``names`` (``columns`` and shard ranges by name).
    Linear in the tables."""
    by_stem: dict[str, list[int]] = {}
    spans: dict[int, tuple[int, int]] = {}
    for i, name in enumerate(names):
        span = table_years(name, shards.get(name))
        if span is None:
            continue
        spans[i] = span
        stem = numbered_key(name).replace("*", "#")  # a collapsed family is its members' name
        by_stem.setdefault(stem, []).append(i)
    groups = []
    for members in by_stem.values():
        if len(members) < 2:
            continue
        first = {c.lower() for c in columns.get(names[members[0]], ())}
        alike = [
            m
            for m in members
            if alike_columns(first, {c.lower() for c in columns.get(names[m], ())}, overlap)
        ]
        if len({spans[m] for m in alike}) >= 2:
            groups.append((alike, [spans[m] for m in alike]))
    return DatedGroups(groups)


@per_artifact
def dated_groups(art: Any, overlap: float = SHIPPED.family_column_overlap) -> DatedGroups:
    """:func:`dated_groups_of` the artifact's tables, once per opened artifact and rule."""
    names = list(art.table_names)
    shards = {}
    for t in names:
        s = getattr(art.schema.table(t), "shards", None)
        if s is not None:
            shards[t] = s
    return dated_groups_of(names, {t: d.columns for t, d in art.ddl.items()}, shards, overlap)


class TableSpans:
    """Every table of the index whose name or shard range gives years (indices into the index's
    names), the span each covers and its source database (a union's member; 0 in one
    database): what the database-wide year prior compares with the question's years."""

    def __init__(
        self, ids: Sequence[int], spans: Sequence[tuple[int, int]], sources: Sequence[int] | None = None
    ) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.first = np.asarray([lo for lo, _ in spans], dtype=np.int64)
        self.last = np.asarray([hi for _, hi in spans], dtype=np.int64)
        self.sources = np.asarray(sources if sources is not None else [0] * len(ids), dtype=np.int64)

    def outdated(self, years: Set[int]) -> np.ndarray:
        """Indices of the tables covering none of ``years``, where another table of their
        database covers one."""
        if not years or not self.ids.size:
            return np.zeros(0, dtype=np.int64)
        covers = _covers(self.first, self.last, years)
        covered = np.zeros(int(self.sources.max()) + 1, dtype=bool)
        covered[self.sources[covers]] = True
        return self.ids[~covers & covered[self.sources]]


@per_artifact
def table_spans(art: Any) -> TableSpans:
    """:class:`TableSpans` of the artifact's tables, once per opened artifact."""
    source_of, _ = art.table_sources
    ids, spans = [], []
    for i, name in enumerate(art.table_names):
        span = table_years(name, getattr(art.schema.table(name), "shards", None))
        if span is not None:
            ids.append(i)
            spans.append(span)
    return TableSpans(ids, spans, [int(source_of[i]) for i in ids])


def year_prior(
    scores: np.ndarray,
    groups: DatedGroups,
    years: Set[int],
    prior: float,
    spans: TableSpans | None = None,
    wide: float = 1.0,
) -> np.ndarray:
    """``scores`` with the members of a dated group that cover none of the question's ``years``
    (:meth:`DatedGroups.outdated`) times ``prior`` (1: unchanged), and any other table of known
    years covering none of them, where some table covers one (``spans``), times ``wide``."""
    if (prior >= 1.0 and wide >= 1.0) or not years:
        return scores
    factor = np.ones_like(scores)
    if spans is not None and wide < 1.0:
        factor[spans.outdated(years)] = np.float32(wide)
    if prior < 1.0:  # a group member takes its group's prior alone
        factor[groups.outdated(years)] = np.float32(prior)
    return scores * factor
