"""Short spellings of long nested column types (BigQuery ``ARRAY<STRUCT<...>>``, Databricks
``struct<...>``) for prompts and for types past the schema's length bound.

A GA4 ``event_params`` type is several hundred characters, and a real Firebase or GA360 schema has
types of several KiB. Printed verbatim in every focused schema they cost tokens and say less than
the nested fields do, which the export lists as their own columns (``device.os``): so the DDL
shows the outer constructor only, and the fields as their own lines.

Example:
    >>> compact_type("ARRAY<STRUCT<key STRING, value STRUCT<string_value STRING, int_value INT64>>>")
    'ARRAY<STRUCT<...>>'
    >>> compact_type("STRUCT<os STRING>"), compact_type("NUMERIC(12, 2)"), compact_type("STRING")
    ('STRUCT<...>', 'NUMERIC(...)', 'STRING')
    >>> compact_type("ARRAY<STRUCT<field_a STRUCT<x INT64>>>")
    'ARRAY<STRUCT<...>>'
"""

from __future__ import annotations

import re

# the first constructor may be several words (``character varying(``); the nested ones are one
# word (``STRUCT<field_a STRUCT<`` stops before the field name)
_FIRST = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_ ]*?)\s*([<(\[])")
_NESTED = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*([<(\[])")
_CLOSE = {"<": ">", "(": ")", "[": "]"}
NESTED_PREFIXES = ("struct", "array", "map", "record", "object", "row", "variant")


def compact_type(type_text: str) -> str:
    """The type's chain of outer constructors with their contents elided (``ARRAY<STRUCT<...>>``);
    a type without brackets is returned as is (its first 64 characters if longer)."""
    pos, opened, head = 0, [], []
    while True:
        m = (_NESTED if opened else _FIRST).match(type_text, pos)
        if m is None:
            break
        head.append(f"{m.group(1)}{m.group(2)}")
        opened.append(m.group(2))
        pos = m.end()
    if not opened:
        return type_text if len(type_text) <= 64 else type_text[:64].rsplit(" ", 1)[0]
    return "".join(head) + "..." + "".join(_CLOSE[b] for b in reversed(opened))


def is_nested_type(type_text: str) -> bool:
    """True for ``STRUCT<...>``, ``ARRAY<...>``, ``RECORD``, ``MAP<...>``... (any case)."""
    return type_text.strip().lower().startswith(NESTED_PREFIXES)
