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
from pathlib import Path
from typing import Any

from schemarag.runtime.errors import ImportFormatError
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec, is_pii

log = logging.getLogger(__name__)

_KINDS = {"model", "seed", "snapshot"}


def _load(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
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


def _relation_name(node: dict[str, Any]) -> str:
    if node.get("resource_type") == "source":
        return f"{node.get('schema') or node.get('source_name')}.{node.get('identifier') or node.get('name')}"
    return str(node.get("alias") or node.get("name"))


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


def read_manifest(
    manifest: Path, catalog: Path | None, warnings: list[str]
) -> tuple[list[RelationSpec], dict[tuple[str, str], str], str]:
    """``(relations, {(source, table): name}, project name)`` from the compiled artifacts."""
    data = _load(manifest, "manifest.json")
    if "nodes" not in data:
        raise ImportFormatError(f"{manifest}: no 'nodes'; this is not a dbt manifest.json")
    nodes = {**(data.get("nodes") or {}), **(data.get("sources") or {})}
    relations: dict[str, RelationSpec] = {}
    sources: dict[tuple[str, str], str] = {}
    for uid, node in nodes.items():
        kind = node.get("resource_type")
        if kind not in _KINDS and kind != "source":
            continue
        rel = RelationSpec(
            name=_relation_name(node),
            kind=str(kind),
            description=str(node.get("description") or ""),
            columns=_columns(node),
            tags={str(t) for t in node.get("tags") or []},
            yml_file=str(node.get("patch_path") or node.get("original_file_path") or manifest),
        )
        if kind == "source":
            sources[(str(node.get("source_name")), str(node.get("name")))] = rel.name
        relations[uid] = rel
    for uid, node in nodes.items():
        if uid in relations:
            ups = (node.get("depends_on") or {}).get("nodes") or []
            relations[uid].upstream = [relations[u].name for u in ups if u in relations]
    _apply_tests(nodes, relations, warnings)
    if catalog is not None:
        cat = _load(catalog, "catalog.json")
        for uid, entry in {**(cat.get("nodes") or {}), **(cat.get("sources") or {})}.items():
            if uid in relations and isinstance(entry, dict):
                _apply_catalog(relations[uid], entry)
            elif isinstance(entry, dict):
                warnings.append(f"{catalog}: {uid} is not in the manifest; ignored")
    project = str((data.get("metadata") or {}).get("project_name") or manifest.parent.parent.name)
    return list(relations.values()), sources, project


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
