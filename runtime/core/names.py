"""Validation of names that become path components (databases, tenants, datasources).

Artifacts live at ``<artifacts>/<tenant>/<db>/<key>``; a name such as ``../x`` or ``a/b`` would
let one caller read another tenant's index, so every name is checked before it touches a path.
"""

from __future__ import annotations

import re

from schemarag.runtime.core.errors import InvalidNameError

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
# Folders the artifact store keeps beside the databases (``<artifacts>/_tenants``, ``_cache``).
# Warehouses accept names starting with ``_`` (Snowflake ``_1000_GENOMES``), so only these are refused.
RESERVED_NAMES = frozenset({"_tenants", "_cache"})


def is_reserved(folder_name: str) -> bool:
    """True for a folder beside the databases that is not one: the reserved names and hidden files."""
    return folder_name.lower() in RESERVED_NAMES or folder_name.startswith(".")


def check_name(value: str, what: str = "name") -> str:
    """Return ``value`` if it is a safe single path component, else raise.

    >>> check_name("ecommerce", "database")
    'ecommerce'
    >>> check_name("_1000_GENOMES", "database")
    '_1000_GENOMES'
    >>> check_name("../etc", "database")
    Traceback (most recent call last):
    ...
    schemarag.runtime.core.errors.InvalidNameError: invalid database '../etc': ...
    """
    if not isinstance(value, str) or not value:
        raise InvalidNameError(f"invalid {what} {value!r}: it must be a non-empty string")
    if "\x00" in value or "/" in value or "\\" in value or ".." in value:
        raise InvalidNameError(
            f"invalid {what} {value!r}: '/', '\\\\', '..' and NUL are not allowed; "
            "use letters, digits, '_', '-' and '.'"
        )
    if not _SAFE_NAME.match(value):
        raise InvalidNameError(
            f"invalid {what} {value!r}: use 1-128 letters, digits, '_', '-' or '.', "
            "starting with a letter, digit or '_'"
        )
    if value.lower() in RESERVED_NAMES:
        raise InvalidNameError(
            f"invalid {what} {value!r}: {', '.join(sorted(RESERVED_NAMES))} are reserved for the "
            "artifact store; choose another name"
        )
    return value
