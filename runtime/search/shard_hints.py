"""Which members of a collapsed shard family the question's dates point at.

``import catalog`` collapses ``ev_20210101`` .. ``ev_20210131`` into one table ``ev_*`` whose
DDL note states the range and how to filter it (:func:`~schemarag.runtime.artifact.ddl.table_note`).
A question about "January 18, 2021" still leaves the SQL writer to work out the shard's name; the
note of the focused schema therefore also names it: ``...; the question's date: ev_20210118``.
A year or month on a finer family names a sub-range, not hundreds of names
(``ev_20210101 .. ev_20211231 (2021)``), and more than :data:`MAX_PIECES` pieces become one span.

The members are derived from the family's :class:`~schemarag.runtime.core.schema.ShardRange` (stem,
pattern, first .. last), never listed; the index is not read. Dates are read from the question by
a few linear scans (ISO ``2021-01-18`` / ``20210118``, ``01/18/2021``, "January 18, 2021",
"18 Jan 2021", "December 2020"); years and plain numbers come from
:func:`~schemarag.runtime.search.table_families.question_numbers`. The unordered numbers alone
cannot tell "top 5 events on January 18" from May 18, so full dates need one of those forms.

Example:
    >>> from schemarag.runtime.core.schema import ShardRange
    >>> days = ShardRange(stem="ev_", pattern="YYYYMMDD", first="20210101", last="20210131", count=31)
    >>> shard_hint(days, "events on January 18, 2021")
    "the question's date: ev_20210118"
    >>> shard_hint(days, "events in 2021")
    "the question's date: ev_20210101 .. ev_20210131 (2021)"
    >>> shard_hint(days, "events on 2022-03-01")
    ''
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass

from schemarag.runtime.core.schema import Database, ShardRange
from schemarag.runtime.search.table_families import DIGITS, YEAR, question_numbers

MAX_PIECES = 4  # dates named one by one in a shard note (prompt text, not the ranking)

_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_Y = r"((?:19|20)\d\d)"
_D = r"(0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"
_ISO = re.compile(rf"\b{_Y}([-/]?)(0[1-9]|1[0-2])(?:\2(0[1-9]|[12]\d|3[01]))?\b")  # 2021-01[-18]
_US = re.compile(rf"\b(0?[1-9]|1[0-2])/{_D}/{_Y}\b")  # 01/18/2021
_MDY = re.compile(rf"\b{_MONTH}\s+{_D},?\s+{_Y}\b", re.IGNORECASE)  # January 18, 2021
_DMY = re.compile(rf"\b{_D}\s+(?:of\s+)?{_MONTH},?\s+{_Y}\b", re.IGNORECASE)  # 18 January 2021
_MY = re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_Y}\b", re.IGNORECASE)  # December 2020
_MDDY = re.compile(
    rf"\b{_MONTH}\s+{_D}\s*(?:-|–|to|through)\s*{_D},?\s+{_Y}\b", re.IGNORECASE
)  # Nov 1-30, 2020
_MMY = re.compile(rf"\b{_MONTH}\s*(?:-|–|to|through|thru|until|till)\s*{_MONTH},?\s+{_Y}\b", re.IGNORECASE)
# between two dates: "from A to B", "A - B", "between A and B" make one range
_LINK = re.compile(r"\s*,?\s*(-|–|to|through|thru|until|till|and)\s*", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+$", re.IGNORECASE)
_DATED = {"YYYYMMDD": "date", "YYYY_MM_DD": "date", "YYYYMM": "month", "YYYY": "year"}
_ABBR = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")

Day = tuple[int, int, int]


def _month(word: str) -> int:
    return _ABBR.index(word[:3].lower()) + 1


def _end(y: int, m: int) -> Day:
    return (y, m, calendar.monthrange(y, m)[1])


@dataclass(frozen=True)
class QuestionDates:
    """What a question names: date spans ``(first day, last day, label)`` (a day, a month, a
    range between two of them), the years no span covers, and its numbers."""

    spans: frozenset[tuple[Day, Day, str]]
    years: frozenset[int]
    numbers: frozenset[str]


def _found(question: str) -> list[tuple[int, int, Day, Day]]:
    """``(start, end, first day, last day)`` of every day, month and written range, text order."""
    out: list[tuple[int, int, Day, Day]] = []

    def add(m: re.Match[str], lo: Day, hi: Day) -> None:
        if lo[2] <= _end(*lo[:2])[2] and hi[2] <= _end(*hi[:2])[2] and lo <= hi:  # no February 30
            out.append((m.start(), m.end(), lo, hi))

    for m in _ISO.finditer(question):
        y, mo = int(m[1]), int(m[3])
        if m[4]:
            add(m, (y, mo, int(m[4])), (y, mo, int(m[4])))
        else:
            add(m, (y, mo, 1), _end(y, mo))
    for m in _US.finditer(question):
        add(m, (int(m[3]), int(m[1]), int(m[2])), (int(m[3]), int(m[1]), int(m[2])))
    for m in _MDY.finditer(question):
        add(m, (int(m[3]), _month(m[1]), int(m[2])), (int(m[3]), _month(m[1]), int(m[2])))
    for m in _DMY.finditer(question):
        add(m, (int(m[3]), _month(m[2]), int(m[1])), (int(m[3]), _month(m[2]), int(m[1])))
    for m in _MDDY.finditer(question):
        add(m, (int(m[4]), _month(m[1]), int(m[2])), (int(m[4]), _month(m[1]), int(m[3])))
    for m in _MMY.finditer(question):
        add(m, (int(m[3]), _month(m[1]), 1), _end(int(m[3]), _month(m[2])))
    for m in _MY.finditer(question):
        add(m, (int(m[2]), _month(m[1]), 1), _end(int(m[2]), _month(m[1])))
    return sorted(out)


def question_dates(question: str) -> QuestionDates:
    """The dates, months, ranges and years ``question`` names. Of overlapping readings the
    widest wins ("November 1-30, 2020" is one range, "18 January 2021" one day, not its month);
    two linked by "to", "-" or "between ... and" are one range; a year a span covers is left
    out (``January 18, 2021`` names that day, not the whole of 2021)."""
    found: list[tuple[int, int, Day, Day]] = []
    for item in _found(question):  # overlapping matches: keep the one starting first, widest
        if found and item[0] < found[-1][1]:
            if item[1] - item[0] > found[-1][1] - found[-1][0]:
                found[-1] = item
            continue
        found.append(item)
    spans: list[tuple[Day, Day]] = []
    prev_end, prev_start = -1, -1
    for start, end, lo, hi in found:
        link = _LINK.fullmatch(question[prev_end:start]) if spans else None
        joined = link and (link[1].lower() != "and" or _BETWEEN.search(question[:prev_start]))
        if joined and spans[-1][0] < lo:
            spans[-1] = (spans[-1][0], hi)
        else:
            spans.append((lo, hi))
            prev_start = start
        prev_end = end
    numbers = question_numbers(question)[0]
    # a year's two-digit form (``16`` for 2016) helps a family match ``cn16``; here it would name
    # shard 16 of a numbered family, so only the question's own numbers stay
    literal = set(DIGITS.findall(question))
    literal |= {n.lstrip("0") for n in literal}
    numbers -= {n[2:] for n in numbers if YEAR.match(n)} - literal
    covered = {y for lo, hi in spans for y in range(lo[0], hi[0] + 1)}
    years = {int(n) for n in numbers if YEAR.match(n)} - covered
    return QuestionDates(
        frozenset((lo, hi, _label(lo, hi)) for lo, hi in spans), frozenset(years), frozenset(numbers)
    )


def _iso(day: Day) -> str:
    return f"{day[0]:04d}-{day[1]:02d}-{day[2]:02d}"


def _label(lo: Day, hi: Day) -> str:
    """``2021-01-18``, ``2021-01`` (a whole month) or ``2020-11-01 .. 2020-11-30``."""
    if lo == hi:
        return _iso(lo)
    if lo[:2] == hi[:2] and lo[2] == 1 and hi == _end(*hi[:2]):
        return _iso(lo)[:7]
    return f"{_iso(lo)} .. {_iso(hi)}"


def _suffix(pattern: str, y: int, m: int = 1, d: int = 1) -> str:
    if pattern == "YYYY_MM_DD":
        return f"{y:04d}_{m:02d}_{d:02d}"
    return f"{y:04d}{m:02d}{d:02d}"[: len(pattern)]  # YYYYMMDD, YYYYMM, YYYY


def _pieces(s: ShardRange, named: QuestionDates) -> list[tuple[str, str, str]]:
    """``(first suffix, last suffix, label)`` per thing the question names within the range,
    clipped to it; the label (``2021``, ``2021-01``) says what a sub-range stands for."""
    out: list[tuple[str, str, str]] = []
    if s.pattern not in _DATED:  # N: a number as wide as the family's widest suffix
        for n in named.numbers:
            if len(n) == len(s.last) and s.member(s.stem + n.zfill(len(s.first))):
                out.append((n.zfill(len(s.first)),) * 2 + ("",))
        return out
    spans = [(_suffix(s.pattern, *lo), _suffix(s.pattern, *hi), label) for lo, hi, label in named.spans]
    for a, b in _runs(sorted(named.years)):  # "from 2019 to 2021": one sub-range, not three
        spans.append(
            (_suffix(s.pattern, a, 1, 1), _suffix(s.pattern, b, 12, 31), f"{a}-{b}" if b > a else str(a))
        )
    for lo, hi, label in spans:
        lo, hi = max(lo, s.first), min(hi, s.last)  # same width: text order is date order
        if lo <= hi:
            out.append((lo, hi, label))
    return out


def _runs(years: list[int]) -> list[tuple[int, int]]:
    """Consecutive years as ``(first, last)`` runs: ``[2019, 2020, 2021, 2023]`` -> two runs."""
    runs: list[tuple[int, int]] = []
    for y in years:
        if runs and runs[-1][1] == y - 1:
            runs[-1] = (runs[-1][0], y)
        else:
            runs.append((y, y))
    return runs


def _span_size(s: ShardRange) -> int:
    """Members the range would hold without gaps (``count`` below it: some are missing)."""
    if s.pattern not in ("YYYYMMDD", "YYYY_MM_DD", "YYYYMM"):
        return int(s.last) - int(s.first) + 1
    a, b = s.first.replace("_", ""), s.last.replace("_", "")
    if s.pattern == "YYYYMM":
        return (int(b[:4]) - int(a[:4])) * 12 + int(b[4:6]) - int(a[4:6]) + 1
    import datetime as dt

    try:
        day = dt.date.fromisoformat
        return (day(f"{b[:4]}-{b[4:6]}-{b[6:]}") - day(f"{a[:4]}-{a[4:6]}-{a[6:]}")).days + 1
    except ValueError:  # the importer's day pattern allows 20210230: no gap to tell
        return s.count


def _readable(s: ShardRange) -> bool:
    """A range this module can read: a known pattern over digit suffixes (a hint is a nicety;
    a hand-written or older schema never fails a request)."""
    digits = s.first.replace("_", "").isdigit() and s.last.replace("_", "").isdigit()
    if s.pattern == "N":
        return digits
    return digits and s.pattern in _DATED and len(s.first) == len(s.last) == len(s.pattern)


def shard_hint(shards: ShardRange, question: str | QuestionDates) -> str:
    """The family's members the question points at, as a note for its DDL ("" when none)."""
    if not _readable(shards):
        return ""
    named = question_dates(question) if isinstance(question, str) else question
    pieces = sorted({(lo, hi): label for lo, hi, label in _pieces(shards, named)}.items())
    if not pieces:
        return ""
    several = len(pieces) > 1
    if len(pieces) > MAX_PIECES:  # a long list helps less than the span it covers
        pieces = [((pieces[0][0][0], max(hi for (_, hi), _ in pieces)), f"span of {len(pieces)}")]
    stem = shards.stem
    shown = [
        f"{stem}{lo}" if lo == hi else f"{stem}{lo} .. {stem}{hi}" + (f" ({label})" if label else "")
        for (lo, hi), label in pieces
    ]
    years = YEAR.match(shards.first) and YEAR.match(shards.last)  # trips_2014 .. trips_2020
    noun = _DATED.get(shards.pattern, "year" if years else "number") + ("s" if several else "")
    gaps = " (not every shard in the range exists)" if shards.count < _span_size(shards) else ""
    return f"the question's {noun}: " + ", ".join(shown) + gaps


def shard_hints(db: Database, tables: Iterable[str], question: str) -> dict[str, str]:
    """``{table: hint}`` for the collapsed families among ``tables`` that the question's dates or
    numbers point into; the question is read only when one of them is a family."""
    families = [(name, t.shards) for name in tables if (t := db.table(name)) is not None and t.shards]
    if not families:
        return {}
    named = question_dates(question)
    hints = {name: shard_hint(s, named) for name, s in families}
    return {name: h for name, h in hints.items() if h}
