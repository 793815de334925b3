"""Manifest mode: dbt's compiled ``target/manifest.json`` (+ ``catalog.json`` for real types).

``manifest.json`` already has docs blocks resolved and ``ref``s turned into ``depends_on``;
generic tests are separate nodes (``test_metadata.name`` = ``unique``/``not_null``/
``relationships``...) attached to a model and column. ``catalog.json`` (from ``dbt docs
generate``) lists every column the warehouse really has, with its type; when a manifest node
lists no columns, the catalog's are used.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.json_limits import json_depth
from schemarag.tools.importers.dbt.layers import layer_of
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec, is_pii
from schemarag.tools.importers.limits import DEFAULT_LIMITS, ImportLimits

log = logging.getLogger(__name__)

_KINDS = {"model", "seed", "snapshot"}


def _load(path: Path, what: str, limits: ImportLimits = DEFAULT_LIMITS) -> dict[str, Any]:
    """The JSON object in ``path``; its nesting is measured first, without recursion (a manifest
    nested 200,000 deep was a RecursionError traceback: issue 39), against ``limits.depth``."""
    try:
        raw = path.read_bytes()
        depth = json_depth(raw)
        if depth > limits.depth:
            raise limits.exceeded(path, "depth", f"the JSON nesting ({depth:,} levels)")
        data = json.loads(raw)
    except FileNotFoundError:
        raise ImportFormatError(
            f"{path}: {what} not found; run `dbt compile` / `dbt docs generate`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFormatError(f"{path}: not a dbt {what} ({exc})") from None
    if not isinstance(data, dict):
        raise ImportFormatError(f"{path}: not a dbt {what}: the top level must be an object")
    return data


def _columns(raw: dict[str, Any]) -> list[ColumnSpec]:
    out = []
    for name, col in (raw.get("columns") or {}).items():
        if not isinstance(col, dict):
            continue
        tags = {str(t) for t in col.get("tags") or []}
        spec = ColumnSpec(
            name=str(col.get("name") or name),
            description=str(col.get("description") or ""),
            data_type=str(col.get("data_type") or ""),
            tags=tags,
            pii=is_pii(tags, col.get("meta")),
        )
        for con in col.get("constraints") or []:
            kind = str(con.get("type", "")).lower() if isinstance(con, dict) else ""
            spec.primary_key |= kind == "primary_key"
            spec.not_null |= kind in ("not_null", "primary_key")
        out.append(spec)
    return out


_QUOTED_PART = re.compile(r'"((?:[^"]|"")*)"|`([^`]*)`|\[([^\]]*)\]|([^.]+)')


def relation_parts(node: dict[str, Any]) -> list[str]:
    """``[database, schema, alias]`` dbt builds the node as: its ``relation_name`` (quoted as the
    adapter quotes it) split into parts, else database/schema/alias (identifier for sources).

    >>> relation_parts({"relation_name": '"wh"."analytics_marts"."fct_orders"'})
    ['wh', 'analytics_marts', 'fct_orders']
    >>> relation_parts({"relation_name": "`proj`.`ds`.`t`"})
    ['proj', 'ds', 't']
    """
    text = node.get("relation_name")
    if isinstance(text, str) and text.strip():
        parts = []
        for m in _QUOTED_PART.finditer(text.strip()):
            quoted = m.group(1)
            parts.append(
                quoted.replace('""', '"')
                if quoted is not None
                else next(g for g in m.groups()[1:] if g is not None)
            )
        return [p.strip() for p in parts if p.strip()]
    last = node.get("identifier") if node.get("resource_type") == "source" else node.get("alias")
    parts = [node.get("database"), node.get("schema") or node.get("source_name"), last or node.get("name")]
    return [str(p) for p in parts if p]


def _apply_catalog(rel: RelationSpec, entry: dict[str, Any]) -> None:
    cols = sorted((entry.get("columns") or {}).values(), key=lambda c: c.get("index") or 0)
    for col in cols:
        if not isinstance(col, dict) or not col.get("name"):
            continue
        spec = rel.column(str(col["name"]))
        if spec is None:
            spec = ColumnSpec(name=str(col["name"]), description=str(col.get("comment") or ""))
            rel.columns.append(spec)
        spec.data_type = str(col.get("type") or spec.data_type)
    rank = {str(c.get("name")).lower(): i for i, c in enumerate(cols) if isinstance(c, dict)}
    rel.columns.sort(key=lambda c: rank.get(c.name.lower(), len(rank)))  # the warehouse's order
    if not rel.description:
        rel.description = str((entry.get("metadata") or {}).get("comment") or "")


@dataclass
class ManifestRead:
    """What a manifest holds for the import (relations keyed by dbt node name, like project mode)."""

    relations: list[RelationSpec]
    sources: dict[tuple[str, str], str]
    project: str
    adapter: str = ""
    disabled: list[str] = field(default_factory=list)
    exposures: list[dict[str, Any]] = field(default_factory=list)
    semantic_models: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)


def _node_key(node: dict[str, Any]) -> str:
    if node.get("resource_type") == "source":
        return f"{node.get('source_name')}.{node.get('name')}"
    return str(node.get("name"))


def _as_expression(uid: str, nodes: dict[str, Any]) -> str:
    node = nodes.get(uid) or {}
    if node.get("resource_type") == "source":
        return f"source({node.get('source_name')!r}, {node.get('name')!r})"
    return f"ref({node.get('name') or uid.rsplit('.', 1)[-1]!r})"


def read_manifest(
    manifest: Path, catalog: Path | None, warnings: list[str], limits: ImportLimits = DEFAULT_LIMITS
) -> ManifestRead:
    """The compiled project: enabled nodes with dbt's own relation names, materializations and
    configs; exposures, semantic models and metrics for documentation."""
    data = _load(manifest, "manifest.json", limits)
    if "nodes" not in data:
        raise ImportFormatError(f"{manifest}: no 'nodes'; this is not a dbt manifest.json")
    nodes = {**(data.get("nodes") or {}), **(data.get("sources") or {})}
    relations: dict[str, RelationSpec] = {}
    sources: dict[tuple[str, str], str] = {}
    parts: dict[str, list[str]] = {}
    for uid, node in nodes.items():
        kind = node.get("resource_type")
        cfg = node.get("config") if isinstance(node.get("config"), dict) else {}
        if (kind not in _KINDS and kind != "source") or cfg.get("enabled") is False:
            continue
        rel = RelationSpec(
            name=_node_key(node),
            node=_node_key(node),
            kind=str(kind),
            description=str(node.get("description") or ""),
            columns=_columns(node),
            tags={str(t) for t in node.get("tags") or []},
            yml_file=str(node.get("patch_path") or node.get("original_file_path") or manifest),
            package=str(node.get("package_name") or ""),
            fqn=[str(x) for x in node.get("fqn") or []],
            config=cfg,
            materialized=str(cfg.get("materialized") or ("seed" if kind == "seed" else "")).lower(),
            access=str(node.get("access") or cfg.get("access") or ""),
            group=str(node.get("group") or cfg.get("group") or ""),
        )
        if kind == "snapshot":
            rel.materialized = "snapshot"
        if kind == "source":
            sources[(str(node.get("source_name")), str(node.get("name")))] = rel.node
        rel.layer = layer_of(rel.kind, rel.fqn, rel.tags, rel.access, rel.node)
        relations[uid] = rel
        parts[uid] = relation_parts(node)
    # the target database: where most built nodes live. Relations there are named schema.table
    # (as project mode names them); one in another database keeps it, or it would not resolve.
    built = Counter(p[0].lower() for u, p in parts.items() if len(p) == 3 and relations[u].kind != "source")
    target_db = built.most_common(1)[0][0] if built else ""
    for uid, rel in relations.items():
        same = len(parts[uid]) == 3 and parts[uid][0].lower() == target_db
        rel.name = ".".join(parts[uid][1:] if same else parts[uid]) or rel.node
        ups = (nodes[uid].get("depends_on") or {}).get("nodes") or []
        rel.upstream = [relations[u].node for u in ups if u in relations]
    _apply_tests(nodes, relations, warnings)
    if catalog is None:
        warnings.append(
            f"{manifest}: no --catalog: only columns listed in the ymls are known and models without "
            "any are skipped; run `dbt docs generate` and pass --catalog target/catalog.json"
        )
    else:
        cat = _load(catalog, "catalog.json", limits)
        for uid, entry in {**(cat.get("nodes") or {}), **(cat.get("sources") or {})}.items():
            if uid in relations and isinstance(entry, dict):
                _apply_catalog(relations[uid], entry)
            elif isinstance(entry, dict):
                warnings.append(f"{catalog}: {uid} is not in the manifest; ignored")
    meta = data.get("metadata") or {}
    disabled = sorted(
        str((entries[0] if isinstance(entries, list) and entries else {}).get("name") or uid)
        for uid, entries in (data.get("disabled") or {}).items()
    )
    exposures = [
        {
            **e,
            "depends_on": [_as_expression(u, nodes) for u in (e.get("depends_on") or {}).get("nodes") or []],
        }
        for e in (data.get("exposures") or {}).values()
        if isinstance(e, dict)
    ]
    return ManifestRead(
        relations=list(relations.values()),
        sources=sources,
        project=str(meta.get("project_name") or manifest.parent.parent.name),
        adapter=str(meta.get("adapter_type") or ""),
        disabled=disabled,
        exposures=exposures,
        semantic_models=[m for m in (data.get("semantic_models") or {}).values() if isinstance(m, dict)],
        metrics=[m for m in (data.get("metrics") or {}).values() if isinstance(m, dict)],
    )


def _apply_tests(nodes: dict[str, Any], relations: dict[str, RelationSpec], warnings: list[str]) -> None:
    for node in nodes.values():
        meta = node.get("test_metadata")
        if node.get("resource_type") != "test" or not isinstance(meta, dict):
            continue
        attached = node.get("attached_node") or next(
            (u for u in (node.get("depends_on") or {}).get("nodes") or [] if u in relations), None
        )
        kwargs = meta.get("kwargs") or {}
        column = node.get("column_name") or kwargs.get("column_name")
        rel = relations.get(attached or "")
        if rel is None or not column:
            continue
        spec = rel.column(str(column))
        if spec is None:
            spec = ColumnSpec(name=str(column))
            rel.columns.append(spec)
        name = str(meta.get("name") or "")
        if name == "unique":
            spec.unique = True
        elif name == "not_null":
            spec.not_null = True
        elif name in ("relationships", "relationships_where") and kwargs.get("to"):
            spec.references = (str(kwargs["to"]), str(kwargs.get("field") or column))
        elif name == "accepted_values" and isinstance(kwargs.get("values"), list):
            spec.accepted_values = [str(v) for v in kwargs["values"]]
