"""Human-readable locations inside decoded JSON/YAML, for validation errors.

Pydantic reports ``('tables', 3, 'columns', 0, 'name')``; users need to find that spot in their
file, so list items are labelled with their ``name`` when they have one.

>>> data = {"tables": [{"name": "users"}, {"name": "orders", "columns": [{"name": "id"}]}]}
>>> json_path(("tables", 1, "columns", 0, "type"), data)
'$.tables[1](orders).columns[0](id).type'
>>> json_path(("datasources", 0, "kind"), {"datasources": [{"name": "a"}]}, root="", label=" (name {!r})")
"datasources[0] (name 'a').kind"
"""

from __future__ import annotations

from typing import Any


def json_path(loc: tuple[Any, ...], data: Any, root: str = "$", label: str = "({})") -> str:
    """Format ``loc`` against ``data``; ``label`` formats a list item's ``name``."""
    out, node = root, data
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            node = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(node, dict) and isinstance(node.get("name"), str):
                out += label.format(node["name"])
        else:
            out += f".{part}" if out else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out or "top level"
