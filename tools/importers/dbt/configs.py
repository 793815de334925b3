"""dbt's node configs: project folder trees, yml ``config:`` blocks and ``{{ config(...) }}``.

dbt decides a model's materialization, schema, database, alias, tags, access and whether it is
enabled from three places, most specific last (it wins):

1. ``dbt_project.yml`` under ``models:`` (``seeds:``, ``snapshots:``, ``sources:``): a tree keyed
   by project/package name, then folder names, then (optionally) the file name. A key with ``+``
   is always a config; a key without ``+`` is a config when its value is not a mapping (``materialized:
   table``) or it is a mapping-valued config dbt knows (``meta``, ``docs``...). The package's own
   dbt_project.yml applies first, the root project's tree over it.
2. The property yml's ``config:`` block for the model.
3. ``{{ config(...) }}`` in the model's SQL, keyword form or one dict.

``tags`` add up along the way (dbt concatenates them) and ``meta`` merges; every other key is
replaced by the more specific value.

Example:
    >>> tree = {"+materialized": "view", "shop": {"marts": {"+materialized": "table",
    ...         "+schema": "marts", "legacy": {"enabled": False}}, "staging": {"tags": ["stg"]}}}
    >>> folder_config([tree], ["shop", "marts", "orders"])
    {'materialized': 'table', 'schema': 'marts'}
    >>> folder_config([tree], ["shop", "marts", "legacy", "old_orders"])["enabled"]
    False
    >>> merge({"tags": ["a"], "materialized": "view"}, {"tags": "b", "materialized": "table"})
    {'tags': ['a', 'b'], 'materialized': 'table'}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

# Configs whose value is a mapping: without "+" they would otherwise read as a folder name.
_MAPPING_CONFIGS = frozenset(
    {
        "meta",
        "docs",
        "persist_docs",
        "grants",
        "quoting",
        "contract",
        "column_types",
        "labels",
        "hours_to_expiration",
    }
)
_ADDITIVE_LISTS = frozenset({"tags", "pre-hook", "post-hook", "pre_hook", "post_hook"})
# `{{ config(...) }}`: up to the `)` that closes the expression (nested parentheses allowed)
CONFIG_CALL = re.compile(r"{{-?\s*config\s*\((.*?)\)\s*-?}}", re.DOTALL)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base`` the way dbt layers configs (tags add up, meta merges)."""
    out = dict(base)
    for key, value in override.items():
        key = key.replace("-", "_") if key not in _ADDITIVE_LISTS else key
        if key in _ADDITIVE_LISTS:
            out[key] = list(dict.fromkeys([*_as_list(out.get(key)), *_as_list(value)]))
        elif key == "meta" and isinstance(value, dict) and isinstance(out.get("meta"), dict):
            out["meta"] = {**out["meta"], **value}
        else:
            out[key] = value
    return out


def _split(level: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(configs, subfolders)`` of one level of a dbt_project.yml resource tree."""
    configs: dict[str, Any] = {}
    children: dict[str, Any] = {}
    for key, value in level.items():
        key = str(key)
        if key.startswith("+"):
            configs[key[1:]] = value
        elif isinstance(value, dict) and key not in _MAPPING_CONFIGS:
            children[key] = value
        else:
            configs[key] = value
    return configs, children


def folder_config(trees: Iterable[dict[str, Any] | None], fqn: list[str]) -> dict[str, Any]:
    """The config dbt_project.yml trees give the node at ``fqn`` (package, folders..., name).

    Each tree is walked from its top (configs for every node) down the ``fqn`` as far as it
    has keys; later trees win over earlier ones at every level (root project over package).
    """
    out: dict[str, Any] = {}
    for tree in trees:
        if not isinstance(tree, dict):
            continue
        level: dict[str, Any] | None = tree
        for depth in range(len(fqn) + 1):
            if level is None:
                break
            configs, children = _split(level)
            out = merge(out, configs)
            nxt = children.get(fqn[depth]) if depth < len(fqn) else None
            level = nxt if isinstance(nxt, dict) else None
    return out


def config_snippets(sql: str) -> list[str]:
    """Each ``{{ config(...) }}`` of a model as its own template (rendered apart from the SQL,
    so a package macro later in the model cannot hide the model's materialization)."""
    return [m.group(0) for m in CONFIG_CALL.finditer(sql)]


def truthy(value: Any, default: bool = True) -> bool:
    """A config flag as dbt reads it (``enabled: "{{ var(...) }}"`` renders to text)."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() not in ("false", "0", "no", "off", "none", "")
