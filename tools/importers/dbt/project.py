"""Read a dbt project as it sits in git: ``dbt_project.yml``, property ymls and docs blocks.

Property files may be named anything (``schema.yml``, ``_models.yml``, one per model or one per
folder); dbt reads every ``.yml``/``.yaml`` under the model, seed and snapshot paths, and so do we.
A file that cannot be read or parsed becomes one warning naming it; the rest still import.

Example:
    >>> tests = ["unique", {"relationships": {"to": "ref('users')", "field": "id"}}]
    >>> [(name, args.get("field")) for name, args in iter_tests(tests)]
    [('unique', None), ('relationships', 'id')]
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schemarag.runtime.errors import ImportFormatError
from schemarag.tools.importers.dbt.jinja_env import docs_blocks
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec, is_pii
from schemarag.tools.importers.dbt.walk import ProjectWalker

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 5_000_000


@dataclass
class ProjectFiles:
    """Everything read from disk, before any Jinja runs."""

    root: Path
    name: str
    variables: dict[str, Any]
    model_paths: list[Path]
    macro_paths: list[Path]
    walker: ProjectWalker
    relations: list[RelationSpec] = field(default_factory=list)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)  # (source, table) -> SQL name
    docs: dict[str, str] = field(default_factory=dict)
    sql_files: dict[str, Path] = field(default_factory=dict)  # model name -> .sql
    warnings: list[str] = field(default_factory=list)


def _read_text(path: Path, warnings: list[str]) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            warnings.append(f"{path}: skipped: larger than {MAX_FILE_BYTES} bytes")
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: skipped: cannot read ({exc})")
        return None


def _load_yaml(path: Path, warnings: list[str]) -> Any:
    text = _read_text(path, warnings)
    if text is None:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        warnings.append(f"{path}: skipped: invalid YAML{where}: {getattr(exc, 'problem', exc)}")
        return None


def iter_tests(tests: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(test name, arguments)`` for each entry of ``tests:``/``data_tests:``.

    Entries are a bare name or ``{name: {args}}``; dbt 1.10 nests the arguments under
    ``arguments:``, older projects put them directly under the test name.
    """
    for item in tests if isinstance(tests, list) else []:
        if isinstance(item, str):
            yield item, {}
        elif isinstance(item, dict) and len(item) >= 1:
            name, args = next(iter(item.items()))
            args = args if isinstance(args, dict) else {}
            nested = args.get("arguments")
            yield str(name), {**args, **nested} if isinstance(nested, dict) else args


def _column(raw: dict[str, Any]) -> ColumnSpec:
    tags = {str(t) for t in raw.get("tags") or [] if isinstance(t, str | int)}
    col = ColumnSpec(
        name=str(raw["name"]),
        description=str(raw.get("description") or ""),
        data_type=str(raw.get("data_type") or ""),
        tags=tags,
        pii=is_pii(tags, raw.get("meta")),
    )
    for name, args in iter_tests([*(raw.get("tests") or []), *(raw.get("data_tests") or [])]):
        short = name.rsplit(".", 1)[-1]
        if short == "unique":
            col.unique = True
        elif short == "not_null":
            col.not_null = True
        elif short in ("relationships", "relationships_where") and args.get("to"):
            col.references = (str(args["to"]), str(args.get("field") or col.name))
        elif short == "accepted_values" and isinstance(args.get("values"), list):
            col.accepted_values = [str(v) for v in args["values"]]
    for con in raw.get("constraints") or []:
        if not isinstance(con, dict):
            continue
        kind = str(con.get("type", "")).lower()
        col.primary_key |= kind == "primary_key"
        col.not_null |= kind in ("not_null", "primary_key")
        col.unique |= kind == "unique"
        if kind == "foreign_key" and con.get("to"):
            to_cols = con.get("to_columns") or [col.name]
            col.references = (str(con["to"]), str(to_cols[0]))
    return col


def _relation(raw: dict[str, Any], kind: str, name: str, path: Path) -> RelationSpec:
    columns: list[ColumnSpec] = []
    for raw_col in raw.get("columns") or []:
        if isinstance(raw_col, dict) and raw_col.get("name"):
            columns.append(_column(raw_col))
    cfg = raw.get("config") if isinstance(raw.get("config"), dict) else {}
    tags = {str(t) for t in [*(raw.get("tags") or []), *(cfg.get("tags") or [])] if isinstance(t, str)}
    rel = RelationSpec(
        name=name, kind=kind, description=str(raw.get("description") or ""), columns=columns, tags=tags
    )
    rel.yml_file = str(path)
    for con in raw.get("constraints") or []:
        if isinstance(con, dict) and str(con.get("type", "")).lower() == "primary_key":
            rel.primary_key = [str(c) for c in con.get("columns") or []]
    return rel


def _read_properties(project: ProjectFiles, path: Path) -> None:
    data = _load_yaml(path, project.warnings)
    if data is None:
        return
    if not isinstance(data, dict):
        project.warnings.append(f"{path}: skipped: top level is not a mapping (models:/sources:)")
        return
    for kind in ("models", "seeds", "snapshots"):
        for i, raw in enumerate(data.get(kind) or []):
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                project.warnings.append(f"{path}: {kind}[{i}] has no name; entry skipped")
                continue
            alias = (raw.get("config") or {}).get("alias") if isinstance(raw.get("config"), dict) else None
            project.relations.append(_relation(raw, kind.rstrip("s"), str(alias or raw["name"]), path))
    for i, src in enumerate(data.get("sources") or []):
        if not isinstance(src, dict) or not isinstance(src.get("name"), str):
            project.warnings.append(f"{path}: sources[{i}] has no name; entry skipped")
            continue
        schema = str(src.get("schema") or src["name"])
        for j, raw in enumerate(src.get("tables") or []):
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                project.warnings.append(f"{path}: sources[{i}].tables[{j}] has no name; entry skipped")
                continue
            name = f"{schema}.{raw.get('identifier') or raw['name']}"
            project.sources[(src["name"], raw["name"])] = name
            rel = _relation(raw, "source", name, path)
            if not rel.description and src.get("description"):
                rel.description = f"Table of the {src['name']} source: {src['description']}"
            project.relations.append(rel)


def read_project(root: Path, warnings: list[str] | None = None) -> ProjectFiles:
    """Read ``dbt_project.yml`` and every property yml, docs block and model ``.sql`` under it.

    Every path comes through one :class:`ProjectWalker`: a folder or file that resolves outside
    ``root`` (symlink, ``..`` in ``model-paths``) is refused with one warning naming it. Warnings
    go to ``warnings`` (also later ones, from macros read while rendering) when given.
    """
    warnings = [] if warnings is None else warnings
    walker = ProjectWalker(root, warnings)
    config_path = root / "dbt_project.yml"
    if not config_path.is_file():
        raise ImportFormatError(f"{root}: no dbt_project.yml; pass the dbt project folder as --project")
    if walker.check(config_path) is None:
        raise ImportFormatError(f"{warnings[-1]}; pass the folder that really holds the project as --project")
    config = _load_yaml(config_path, warnings)
    if not isinstance(config, dict):
        why = warnings[0] if warnings else "top level is not a mapping"
        raise ImportFormatError(f"{config_path}: cannot read the project file: {why}")

    def paths(key: str, default: list[str]) -> list[Path]:
        value = config.get(key) or default
        entries = value if isinstance(value, list) else [value]
        found = [walker.folder(str(p), key) for p in entries]
        return [p for p in found if p is not None]

    model_paths = paths("model-paths", ["models"]) + paths("seed-paths", ["seeds"])
    model_paths += paths("snapshot-paths", ["snapshots"])
    project = ProjectFiles(
        root=root,
        name=str(config.get("name") or root.name),
        variables=dict(config.get("vars") or {}) if isinstance(config.get("vars"), dict) else {},
        model_paths=model_paths,
        macro_paths=paths("macro-paths", ["macros"]),
        walker=walker,
        warnings=warnings,
    )
    for path in walker.files(model_paths, (".yml", ".yaml")):
        _read_properties(project, path)
    for path in walker.files([*paths("docs-paths", []), *model_paths], (".md",)):
        text = _read_text(path, project.warnings)
        if text is not None:
            project.docs.update(docs_blocks(text))
    for path in walker.files(paths("model-paths", ["models"]), (".sql",)):
        if path.stem in project.sql_files:
            project.warnings.append(f"{path}: model name {path.stem!r} is used twice; this file skipped")
            continue
        project.sql_files[path.stem] = path
    return project
