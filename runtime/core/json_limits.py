"""JSON decoding with a nesting limit checked before decoding.

``json.loads`` recurses once per nesting level, and so do pydantic and our error formatting, so a
hostile file of 100,000 ``[`` would end in ``RecursionError`` somewhere (or not, depending on the
stack left). :func:`json_depth` measures the nesting without recursion and in linear time
(strings are blanked by one regular-expression pass, then a cumulative sum over the brackets), so
a loader can refuse the file with a message naming it before anything recurses.

Example:
    >>> json_depth(b'{"a": [1, {"b": "[[[not nesting]]]"}]}')
    3
    >>> loads_bounded(b"[" * 100 + b"]" * 100, "deep.json", max_depth=64)
    Traceback (most recent call last):
    ...
    ValueError: deep.json: JSON nested too deeply: 100 levels, more than the limit of 64
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

MAX_JSON_DEPTH = 64  # a schema file needs ~6 levels (tables -> columns -> foreign_key / stats)

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # unrolled: linear, no per-char alternation
_STEP = np.zeros(256, dtype=np.int8)
_STEP[[ord("["), ord("{")]] = 1
_STEP[[ord("]"), ord("}")]] = -1


def json_depth(raw: bytes | str) -> int:
    """The deepest nesting of arrays/objects in ``raw`` (brackets inside strings do not count)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    blanked = _STRING.sub(b'""', data)
    steps = _STEP[np.frombuffer(blanked, dtype=np.uint8)]
    if not steps.size:
        return 0
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0))


def loads_bounded(raw: bytes | str, source: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(raw)`` after checking the nesting; raises ``ValueError`` naming ``source``
    (callers wrap it in their own :class:`~schemarag.runtime.core.errors.SchemaragError`)."""
    depth = json_depth(raw)
    if depth > max_depth:
        raise ValueError(
            f"{source}: JSON nested too deeply: {depth} levels, more than the limit of {max_depth}"
        )
    return json.loads(raw)
