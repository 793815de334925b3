"""A column type from an export, made safe to keep: one odd value never fails a database.

The schema refuses a type that could break out of its DDL line (``;``, comments, control
characters, unbalanced brackets, a ``,`` outside brackets: :func:`check_type_text`) and types
longer than :data:`MAX_TYPE_CHARS`. An importer meets such values in real exports (a Firebase
``ARRAY<STRUCT<...>>`` of 80 KiB, a hand-made view with a strange type), and one of them must not
stop 2,000 other tables from being indexed: the long type keeps its outer constructor, the
dangerous one becomes ``TEXT``, each with one warning naming the table and column.

Example:
    >>> warnings = []
    >>> safe_type("STRUCT<a STRING,\\n  b INT64>", "ds.t.c", warnings)
    'STRUCT<a STRING, b INT64>'
    >>> safe_type("INT); DROP TABLE users; --", "ds.t.c", warnings)
    'TEXT'
    >>> "ds.t.c" in warnings[0]
    True
"""

from __future__ import annotations

from schemarag.runtime.core.schema import MAX_TYPE_CHARS, check_type_text
from schemarag.runtime.core.type_text import compact_type


def safe_type(type_text: str, label: str, warnings: list[str]) -> str:
    """``type_text`` with whitespace folded, shortened past the bound, or ``TEXT`` if dangerous."""
    text = " ".join(type_text.split()) or "TEXT"
    if len(text) > MAX_TYPE_CHARS:
        short = compact_type(text)
        warnings.append(
            f"column {label}: type is {len(text):,} characters, more than the {MAX_TYPE_CHARS:,} kept; "
            f"kept as {short} (its nested fields, when exported as field paths, are columns of their own)"
        )
        text = short
    try:
        return check_type_text(text)
    except ValueError as exc:
        reason = str(exc) if len(str(exc)) <= 300 else str(exc)[:297] + "..."
        warnings.append(f"column {label}: {reason}; imported as TEXT")
        return "TEXT"
