"""Naming conventions the index relies on: join-like column names.

The artifact reader derives per-version lookups from these once, when a version is opened,
and table ranking uses them too; they live here, below both, so neither imports the other.
(Union membership is data, ``Table.database``, never a naming convention.)

>>> join_like("CustomerID"), join_like("customer_id"), join_like("tid"), join_like("name")
(True, True, False, False)
"""

from __future__ import annotations

import re

_JOINISH_ANYCASE = re.compile(r"^(?:id|uuid|code)$|_(?:id|code)$", re.IGNORECASE)
_JOINISH_CAMEL = re.compile(r"[a-z](?:Id|ID|Code)$")


def join_like(column: str) -> bool:
    """Names joined on even without a declared FK: ``id``, ``*_id``, ``*Id``, ``uuid``, ``*_code``."""
    return bool(_JOINISH_ANYCASE.search(column) or _JOINISH_CAMEL.search(column))
