"""Naming conventions the index relies on: join-like column names and union table prefixes.

The artifact reader derives per-version lookups from these once, when a version is opened,
and table ranking uses them too; they live here, below both, so neither imports the other.

>>> source_of("california_schools__schools"), source_of("orders")
('california_schools', '')
>>> join_like("CustomerID"), join_like("customer_id"), join_like("tid"), join_like("name")
(True, True, False, False)
"""

from __future__ import annotations

import re

UNION_SEPARATOR = "__"
_JOINISH_ANYCASE = re.compile(r"^(?:id|uuid|code)$|_(?:id|code)$", re.IGNORECASE)
_JOINISH_CAMEL = re.compile(r"[a-z](?:Id|ID|Code)$")


def join_like(column: str) -> bool:
    """Names joined on even without a declared FK: ``id``, ``*_id``, ``*Id``, ``uuid``, ``*_code``."""
    return bool(_JOINISH_ANYCASE.search(column) or _JOINISH_CAMEL.search(column))


def source_of(table: str) -> str:
    """The source database of a union table named ``<db>__<table>`` ("" otherwise)."""
    return table.split(UNION_SEPARATOR, 1)[0] if UNION_SEPARATOR in table else ""
