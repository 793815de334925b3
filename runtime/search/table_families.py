"""Table families at query time: ``GSOD2014`` ... ``GSOD2023``, ``ZIP_CODES_2017_5YR``, ``_20230118``.

``import catalog`` collapses shards it recognises (a date or number suffix after a separator)
into one table. Exports hold many more families it leaves apart: a year glued to the name
(``GSOD2015``), in the middle (``CENSUSTRACT_2018_5YR``), a bare date (``DAY._20230118``), a
release (``CLINICAL_GDC_R39``). Ranked one by one they fill the budget with near-copies and
crowd out the other tables a question needs. Here a family is three or more tables of one
database whose names are equal once every digit run is read as ``#``; in the ranking a family
takes at most ``slots`` places, and the members whose numbers the question names (its year,
its date) come first: "trips in 2015" keeps ``GSOD2015``, not the best-scoring ``GSOD2019``.

The grouping is read from the index's table names once per opened version (weak-keyed cache).

Example:
    >>> fams = families_of(["s.GSOD2014", "s.GSOD2015", "s.GSOD2016", "s.STATIONS"])
    >>> fams["s.GSOD2015"] == fams["s.GSOD2014"], "s.STATIONS" in fams
    (True, False)
    >>> family_order(["s.GSOD2016", "s.STATIONS", "s.GSOD2014", "s.GSOD2015"], fams, "weather in 2015", 1)
    ['s.GSOD2015', 's.STATIONS']
    >>> days = families_of([f"d._202301{d:02d}" for d in range(1, 32)])
    >>> family_order(sorted(days), days, "events on January 18, 2023", 1)[0]
    'd._20230118'

"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from schemarag.runtime.search.per_artifact import per_artifact

MIN_MEMBERS = 3
MAX_NAMED = 4  # members the question names that may come first (a year names 365 daily shards)
_DIGITS = re.compile(r"\d+")


def families_of(names: Sequence[str], columns: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """``{table: family key}`` for tables in a family of at least MIN_MEMBERS (others absent).
    With ``columns`` (table -> column names), a member must share at least half of its columns
    with the family's first member (``address_1`` / ``address_2`` that differ are no family)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if _DIGITS.search(name.rpartition(".")[2]):
            groups.setdefault(_DIGITS.sub("#", name.lower()), []).append(name)
    out: dict[str, str] = {}
    for key, members in groups.items():
        if columns is not None and len(members) >= MIN_MEMBERS:
            first = {c.lower() for c in columns.get(members[0], ())}

            def alike(m: str, first: set[str] = first) -> bool:
                cols = {c.lower() for c in columns.get(m, ())}
                return bool(first | cols) and len(first & cols) / len(first | cols) >= 0.5

            members = [m for m in members if alike(m)]
        if len(members) >= MIN_MEMBERS:
            out.update(dict.fromkeys(members, key))
    return out


@per_artifact
def table_families(art: Any) -> dict[str, str]:
    """:func:`families_of` the artifact's tables, once per opened artifact."""
    return families_of(list(art.table_names), {t: d.columns for t, d in art.ddl.items()})


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")  # fmt: skip
_WORDS = re.compile(r"[a-z]+")


def question_numbers(question: str) -> tuple[set[str], set[str]]:
    """``(numbers, months)``: the question's numbers (with and without leading zeros) and the
    months it names, as ``01``..``12`` (general English month names)."""
    nums = set(_DIGITS.findall(question))
    nums |= {n.lstrip("0") or "0" for n in nums}
    months = {f"{i + 1:02d}" for i, m in enumerate(_MONTHS) for w in _WORDS.findall(question.lower())
              if w == m or (len(w) == 3 and m.startswith(w) and w != "may")}  # fmt: skip
    return nums, months


def specificity(table: str, numbers: set[str], months: frozenset[str] | set[str] = frozenset()) -> int:
    """How much of a member's number the question names: 0 (nothing) up to one point per part
    (a plain number; a date's year, month and day: ``20230118`` for "January 18, 2023" is 3)."""
    best = 0
    for run in _DIGITS.findall(table.rpartition(".")[2]):
        if run in numbers or run.lstrip("0") in numbers:
            best = max(best, 3 if len(run) >= 6 else 1)
        elif len(run) >= 6 and run[:4] in numbers:  # YYYYMM[DD]: the year, then month and day
            month = run[4:6] in months or run[4:6] in numbers or run[4:6].lstrip("0") in numbers
            day = len(run) >= 8 and (run[6:8] in numbers or run[6:8].lstrip("0") in numbers)
            best = max(best, 1 + month + day)
    return best


def family_order(ranked: Sequence[str], families: dict[str, str], question: str, slots: int) -> list[str]:
    """``ranked`` with each family reduced to at most ``slots`` members, the members the question
    names (best ranked first, at most MAX_NAMED) moved to where the family first appears."""
    if not families:
        return list(ranked)
    numbers, months = question_numbers(question)
    named: dict[str, list[tuple[int, int, str]]] = {}
    for pos, t in enumerate(ranked):
        key = families.get(t)
        spec = specificity(t, numbers, months) if key is not None and numbers else 0
        if spec:
            named.setdefault(key, []).append((-spec, pos, t))
    out: list[str] = []
    used: dict[str, int] = {}
    placed: set[str] = set()
    for t in ranked:
        key = families.get(t)
        if key is None:
            out.append(t)
            continue
        if key not in used:
            used[key] = 0
            first = [m for _, _, m in sorted(named.get(key, []))[:MAX_NAMED]]
            for m in first:  # the question's own members take the family's places first
                out.append(m)
                placed.add(m)
            used[key] = len(first)
        if t in placed:
            continue
        if used[key] < slots:
            out.append(t)
            used[key] += 1
    return out
