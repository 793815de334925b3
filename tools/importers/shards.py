"""Collapse date- or number-sharded table families into one logical table.

Warehouses shard big tables by day (BigQuery's ``events_20240101``, ``events_20240102``, ...) or
by number (``part_001``...). Indexing 400 copies of the same columns would flood retrieval with
near-identical chunks and still not tell the SQL writer how to query the family, so
``events_20240101`` .. ``events_20241231`` become one table ``events_*`` whose doc states the
shard pattern and range. A family needs at least ``min_shards`` members with the same column
names, so ``address_1``/``address_2`` that differ stay separate.

Example:
    >>> names = [f"events_2024010{d}" for d in range(1, 4)] + ["users"]
    >>> fams = find_families({n: ("a", "b") for n in names})
    >>> [(f.name, f.pattern, f.first, f.last, len(f.members)) for f in fams]
    [('events_*', 'events_YYYYMMDD', '20240101', '20240103', 3)]
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from dataclasses import dataclass

# (suffix regex, pattern label); tried in order, the first match wins
_SUFFIXES = (
    (
        re.compile(
            r"^(?P<stem>.*?[_$-]?)(?P<suffix>(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01]))$"
        ),
        "YYYYMMDD",
    ),
    (
        re.compile(
            r"^(?P<stem>.*?[_$-]?)(?P<suffix>(?:19|20)\d{2}_(?:0[1-9]|1[0-2])_(?:0[1-9]|[12]\d|3[01]))$"
        ),
        "YYYY_MM_DD",
    ),
    (re.compile(r"^(?P<stem>.*?[_$-]?)(?P<suffix>(?:19|20)\d{2}(?:0[1-9]|1[0-2]))$"), "YYYYMM"),
    # a year glued to a word (``gsod1929`` .. ``gsod2023``): with a separator (``trips_2014``) a
    # year is a plain number suffix (N) and keeps its stricter same-columns rule
    (re.compile(r"^(?P<stem>.*?[A-Za-z])(?P<suffix>(?:19|20)\d{2})$"), "YYYY"),
    (re.compile(r"^(?P<stem>.*?[_$-])(?P<suffix>\d+)$"), "N"),
)


@dataclass
class ShardFamily:
    """One logical table standing for ``members`` (sorted by suffix)."""

    name: str  # the wildcard name, e.g. "analytics.events_*"
    stem: str
    pattern: str
    members: list[str]
    first: str
    last: str

    @property
    def unit(self) -> str:
        """What one shard holds: a year, a date or a number."""
        if self.pattern.endswith("YYYY"):
            return "year"
        return "date" if "YYYY" in self.pattern else "number"

    def describe(self, dialect: str = "") -> str:
        text = (
            f"Sharded table family: {len(self.members)} tables `{self.members[0]}` .. `{self.members[-1]}` "
            f"with the same columns, one per {self.unit} "
            f"(pattern `{self.pattern}`, range {self.first} .. {self.last})."
        )
        if dialect == "bigquery":
            text += (
                f" Query them together as `{self.name}` and filter with "
                f"`_TABLE_SUFFIX BETWEEN '{self.first}' AND '{self.last}'`."
            )
        else:
            text += (
                f" Query one shard by its name, e.g. `{self.members[-1]}`, or UNION ALL the shards needed."
            )
        return text


def split_shard(name: str) -> tuple[str, str, str] | None:
    """``(stem, suffix, pattern)`` when ``name`` ends in a shard suffix, else None."""
    qual, _, base = name.rpartition(".")
    for regex, pattern in _SUFFIXES:
        m = regex.match(base)
        if m and m.group("stem").strip("_$-"):
            stem = f"{qual}.{m.group('stem')}" if qual else m.group("stem")
            return stem, m.group("suffix"), pattern
    return None


def find_families(signatures: dict[str, Hashable], min_shards: int = 3) -> list[ShardFamily]:
    """Families among table names; ``signatures`` maps a name to its column-name signature."""
    groups: dict[tuple[str, str, Hashable], list[tuple[str, str]]] = {}
    for name, sig in signatures.items():
        found = split_shard(name)
        if found:
            stem, suffix, pattern = found
            # dated shards gain columns over time and still are one table; numbered ones must match
            key_sig = None if "YYYY" in pattern else sig
            groups.setdefault((stem, pattern, key_sig), []).append((suffix, name))
    families: list[ShardFamily] = []
    taken: set[str] = set()
    taken_names = {n.lower() for n in signatures}
    for (stem, pattern, _sig), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        if len(members) < min_shards or any(n in taken for _, n in members):
            continue
        members.sort(key=lambda m: (len(m[0]), m[0]))
        name = f"{stem}*"
        if name.lower() in taken_names:
            continue
        taken.update(n for _, n in members)
        taken_names.add(name.lower())
        families.append(
            ShardFamily(
                name,
                stem,
                f"{stem.rpartition('.')[2]}{pattern}",
                [n for _, n in members],
                members[0][0],
                members[-1][0],
            )
        )
    return families
