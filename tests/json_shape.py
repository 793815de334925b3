"""One output convention: every key of every JSON document a command, route or tool returns is
snake_case. Shared by the per-command key-set tests (CLI ``--json``, HTTP, MCP)."""

from __future__ import annotations

import re
from typing import Any

SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
# Values keyed by data, not by field names: table/stage names chosen by the user or the build.
DATA_MAPS = frozenset({"timings_ms", "startup_ms", "scores", "columns_by_table"})


def field_names(doc: Any, data_maps: frozenset[str] = DATA_MAPS) -> set[str]:
    """Every field name in ``doc`` as a dotted path (``a.b``, ``a[].c``), skipping the
    contents of data-keyed maps."""
    out: set[str] = set()

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here = f"{path}.{key}" if path else key
                out.add(here)
                if key not in data_maps:
                    walk(value, here)
        elif isinstance(node, list):
            for item in node:
                walk(item, f"{path}[]")

    walk(doc, "")
    return out


def not_snake_case(doc: Any) -> list[str]:
    """Field paths whose last name is not snake_case (empty when the document follows the rule)."""
    return sorted(p for p in field_names(doc) if not SNAKE.match(p.rsplit(".", 1)[-1].removesuffix("[]")))


def top(doc: dict[str, Any]) -> set[str]:
    return set(doc)
