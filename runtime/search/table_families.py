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
    ['s.GSOD2015', 's.STATIONS', 's.GSOD2016', 's.GSOD2014']
    >>> days = families_of([f"d._202301{d:02d}" for d in range(1, 32)])
    >>> family_order(sorted(days), days, "events on January 18, 2023", 1)[0]
    'd._20230118'

"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.search.per_artifact import per_artifact

DIGITS = re.compile(r"\d+")
# Whitespace says nothing of a table's content: BigQuery keeps `` accident_2015`` beside
# ``accident_2015`` when an export wrote both; they are members of one family.
SPACE = re.compile(r"\s+")


def families_of(
    names: Sequence[str],
    columns: Mapping[str, Sequence[str]] | None = None,
    min_members: int = SHIPPED.family_min_members,
    overlap: float = SHIPPED.family_column_overlap,
) -> dict[str, str]:
    """``{table: family key}`` for tables in a family of at least ``min_members`` (others
    absent). With ``columns`` (table -> column names), a member must share at least ``overlap``
    of its columns with the family's first member (``address_1`` / ``address_2`` that differ
    are no family)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if DIGITS.search(name.rpartition(".")[2]):
            groups.setdefault(numbered_key(name), []).append(name)
    out: dict[str, str] = {}
    for key, members in groups.items():
        if columns is not None and len(members) >= min_members:
            first = {c.lower() for c in columns.get(members[0], ())}
            members = [
                m for m in members if alike_columns(first, {c.lower() for c in columns.get(m, ())}, overlap)
            ]
        if len(members) >= min_members:
            out.update(dict.fromkeys(members, key))
    return out


def numbered_key(name: str) -> str:
    """``name`` with every digit run read as ``#`` (case and whitespace aside): the key tables of
    one family share (``s.gsod#`` for ``s.GSOD2015``), and dated tables (:mod:`.dated_tables`).

    >>> numbered_key(" Accident_2015"), numbered_key("s.GSOD2015")
    ('accident_#', 's.gsod#')
    """
    return DIGITS.sub("#", SPACE.sub("", name.lower()))


def alike_columns(a: set[str], b: set[str], overlap: float) -> bool:
    """Two tables' (lower-cased) column sets share at least ``overlap`` of their union (Jaccard;
    two empty sets are not alike): one rule for the members of a family and for sibling copies.

    >>> alike_columns({"id", "name"}, {"id", "name", "city"}, 0.5)
    True
    """
    union = len(a | b)
    return union > 0 and len(a & b) / union >= overlap


@per_artifact
def table_families(
    art: Any, min_members: int = SHIPPED.family_min_members, overlap: float = SHIPPED.family_column_overlap
) -> dict[str, str]:
    """:func:`families_of` the artifact's tables, once per opened artifact and rule."""
    return families_of(
        list(art.table_names), {t: d.columns for t, d in art.ddl.items()}, min_members, overlap
    )


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")  # fmt: skip
_WORDS = re.compile(r"[a-z]+")
YEAR = re.compile(r"^(19|20)\d\d$")  # a year as questions write it
# "from 2011 to 2020", "2011-2020", "2011 through 2020", "between 2011 and 2020": every year of
# the span is named (a question about 2011-2020 asks for GSOD2011 .. GSOD2020); "2010 and 2020"
# without "between" names two years
_SPAN = re.compile(
    r"\b(between\s+)?((?:19|20)\d\d)\s*(-|–|to|and|through|thru|until|till)\s*((?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def question_numbers(
    question: str, spans: bool = True, max_span: int = SHIPPED.year_span_max
) -> tuple[set[str], set[str]]:
    """``(numbers, months)``: the question's numbers (with and without leading zeros; a named
    year also as its two-digit form, ``cn16`` for 2016; with ``spans``, every year of a span
    "from 2011 to 2020", at most ``max_span`` years: a longer span names no member in particular)
    and the months it names, as ``01``..``12`` (general English month names).

    >>> sorted(question_numbers("trips from 2019 to 2021, Q1")[0])
    ['1', '19', '20', '2019', '2020', '2021', '21']
    """
    nums = set(DIGITS.findall(question))
    for between, lo, word, hi in _SPAN.findall(question) if spans else ():
        a, b = int(lo), int(hi)
        if 0 < b - a <= max_span and (word.lower() != "and" or between):
            nums |= {str(y) for y in range(a, b + 1)}
    nums |= {n.lstrip("0") or "0" for n in nums}
    nums |= {n[2:] for n in nums if YEAR.match(n)}
    months = {f"{i + 1:02d}" for i, m in enumerate(_MONTHS) for w in _WORDS.findall(question.lower())
              if w == m or (len(w) == 3 and m.startswith(w) and w != "may")}  # fmt: skip
    return nums, months


def specificity(
    table: str,
    numbers: set[str],
    months: frozenset[str] | set[str] = frozenset(),
    written: set[str] | None = None,
) -> int:
    """How much of a member's numbers the question names, summed over its digit runs: a year 2
    (1 when ``written`` is given and the year is only inside a span: "from 2000 to 2018" asks
    first for the two ends it compares), a full date 3 (``20230118`` for "January 18, 2023";
    year and month alone 2; a year without its month 0: it names twelve months, none in
    particular), any other number 1. ``COUNTY_2017_5YR`` for "5-year estimates of
    2017" is 3, ``COUNTY_2016_5YR`` 1: a small number the question happens to contain
    ("January 1", "5-year") no longer ties every member with the one whose year it names."""
    total = 0
    for run in DIGITS.findall(table.rpartition(".")[2]):
        if run in numbers or run.lstrip("0") in numbers:
            year = 2 if written is None or run in written else 1
            total += 3 if len(run) >= 6 else year if YEAR.match(run) else 1
        elif len(run) >= 6 and run[:4] in numbers:  # YYYYMM[DD]: the year, then month and day
            month = run[4:6] in months or run[4:6] in numbers or run[4:6].lstrip("0") in numbers
            day = len(run) >= 8 and (run[6:8] in numbers or run[6:8].lstrip("0") in numbers)
            # a year alone names twelve months or 365 days, no member in particular
            total += 1 + month + day if month else 0
    return total


def structures_of(
    columns: Mapping[str, Sequence[str]],
    exclude: Mapping[str, str] | None = None,
    min_members: int = SHIPPED.family_min_members,
    min_columns: int = SHIPPED.structure_min_columns,
) -> dict[str, str]:
    """``{table: key}`` for *structural families*: three or more tables of one schema with the
    same set of column names (at least ``min_columns``: fewer, such as id, name, code, say
    nothing about what a table holds), whatever their names. An export
    splits one kind of table by subject as it splits by year: ``co_daily_summary`` ..
    ``voc_daily_summary`` (one per pollutant), ``PLACES_ALABAMA`` .. (one per state),
    ``posts_answers`` / ``posts_questions`` / ``posts_tag_wiki`` ... Tables of a digit family
    (``exclude``: :func:`families_of`) are left to it.

    >>> cols = {f"epa.{p}_daily": ["site", "date", "mean", "max"] for p in ("co", "no2", "so2")}
    >>> sorted(set(structures_of({**cols, "epa.sites": ["site", "lat", "lon", "name"]}).values()))
    ['epa|date,max,mean,site']
    """
    groups: dict[str, list[str]] = {}
    for table, cols in columns.items():
        names = sorted({c.lower() for c in cols})
        if len(names) < min_columns or (exclude and table in exclude):
            continue
        groups.setdefault(table.rpartition(".")[0] + "|" + ",".join(names), []).append(table)
    return {t: key for key, members in groups.items() if len(members) >= min_members for t in members}


@per_artifact
def table_structures(
    art: Any,
    min_members: int = SHIPPED.family_min_members,
    min_columns: int = SHIPPED.structure_min_columns,
    overlap: float = SHIPPED.family_column_overlap,
) -> dict[str, str]:
    """:func:`structures_of` the artifact's tables (digit families excluded), once per opened
    artifact and rule."""
    columns = {t: d.columns for t, d in art.ddl.items()}
    return structures_of(columns, table_families(art, min_members, overlap), min_members, min_columns)


def structure_order(
    ranked: Sequence[str], structures: Mapping[str, str], named: set[str], slots: int
) -> list[str]:
    """``ranked`` with each structural family holding at most ``slots`` places for the members
    the question does not name (``named``: :mod:`.named_tables`; those keep their place), best
    ranked first; its other members follow every other table, in the same order (not dropped).

    >>> fam = {t: "k" for t in ("pm10", "co", "so2", "voc")}
    >>> structure_order(["co", "pm10", "so2", "sites", "voc"], fam, {"so2"}, 1)
    ['co', 'so2', 'sites', 'pm10', 'voc']
    """
    if not structures:
        return list(ranked)
    used: dict[str, int] = {}
    first: list[str] = []
    later: list[str] = []
    for t in ranked:
        key = structures.get(t)
        if key is None or t in named:
            first.append(t)
        elif used.get(key, 0) < slots:
            first.append(t)
            used[key] = used.get(key, 0) + 1
        else:
            later.append(t)
    return first + later


def twins_of(names: Sequence[str]) -> dict[str, str]:
    """``{table: key}`` for tables whose names are equal but for whitespace and case to another's
    (`` accident_2015`` beside ``accident_2015``: one relation exported twice); others absent."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(SPACE.sub("", name.lower()), []).append(name)
    return {m: key for key, members in groups.items() if len(members) > 1 for m in members}


@per_artifact
def table_twins(art: Any) -> dict[str, str]:
    """:func:`twins_of` the artifact's tables, once per opened artifact (empty almost always)."""
    return twins_of(list(art.table_names))


def twins_last(ranked: Sequence[str], twins: Mapping[str, str]) -> list[str]:
    """``ranked`` with each group of :func:`twins_of` taking one place: the plainest name (least
    whitespace) where the best-ranked twin was, the others after every other table. A question
    cannot tell twins apart, and a second copy would take a place another table needs. Nothing
    is dropped (a budget the rest does not fill still shows it).

    >>> names = ["s. accident_2015", "s.person_2015", "s.accident_2015"]
    >>> twins_last(names, twins_of(names))
    ['s.accident_2015', 's.person_2015', 's. accident_2015']
    """
    if not twins:
        return list(ranked)
    groups: dict[str, list[str]] = {}
    for t in ranked:
        if t in twins:
            groups.setdefault(twins[t], []).append(t)
    first: list[str] = []
    later: list[str] = []
    for t in ranked:
        key = twins.get(t)
        if key is None:
            first.append(t)
        elif key in groups:  # the group's first place goes to its plainest name
            members = groups.pop(key)
            plain = min(range(len(members)), key=lambda i: len(SPACE.findall(members[i])))
            first.append(members[plain])
            later.extend(m for i, m in enumerate(members) if i != plain)
    return first + later


def family_order(
    ranked: Sequence[str],
    families: dict[str, str],
    question: str,
    slots: int,
    most_named: int = SHIPPED.family_named,
    max_span: int = SHIPPED.year_span_max,
) -> list[str]:
    """``ranked`` with each family holding at most ``slots`` places among the other tables; the
    members that name most of the question's numbers (the family's highest :func:`specificity`,
    best ranked first, at most ``most_named``) move to where the family first appears, before
    its other places, and those other places go to the members naming more of the question
    first (a span's inner years before years it does not name), then by rank. When every
    member names the question alike (a number they all carry), none moves first. The members
    beyond the family's places come last, after every other table (a budget larger than the
    rest of the database takes them)."""
    if not families:
        return list(ranked)
    numbers, months = question_numbers(question, True, max_span)
    written = question_numbers(question, spans=False)[0]
    members: dict[str, list[tuple[int, int, str]]] = {}
    for pos, t in enumerate(ranked):
        key = families.get(t)
        if key is not None:
            spec = specificity(t, numbers, months, written) if numbers else 0
            members.setdefault(key, []).append((-spec, pos, t))
    out: list[str] = []
    used: dict[str, int] = {}
    queue: dict[str, Iterator[str]] = {}
    for t in ranked:
        key = families.get(t)
        if key is None:
            out.append(t)
            continue
        if key not in used:
            ordered = sorted(members[key])
            top, least = ordered[0][0], ordered[-1][0]
            # a number every member carries (HG38 in DNA_METHYLATION_CHR1_HG38 ..) names none of them
            first = [m for s, _, m in ordered if s == top and s < least][:most_named]
            out.extend(first)  # the question's own members take the family's places first
            used[key] = len(first)
            queue[key] = iter([m for _, _, m in ordered if m not in first])
        if used[key] < slots:
            nxt = next(queue[key], None)
            if nxt is not None:
                out.append(nxt)
                used[key] += 1
    # the members beyond their family's places follow every other table, in the same order: a
    # budget the database does not fill (7 tables, budget 10) shows the whole family instead of
    # leaving places empty ("clicks across all photo collections" needs PHOTOS_V_0_1 .. _3)
    for key in queue:
        out.extend(queue[key])
    return out
