"""Read a dbt project as it sits in git: ``dbt_project.yml``, installed packages, property ymls,
docs blocks, model/snapshot SQL and seed headers.

Property files may be named anything (``schema.yml``, ``_models.yml``, one per model or one per
folder); dbt reads every ``.yml``/``.yaml`` under the model, seed and snapshot paths, and so do we.
Installed packages (``dbt_packages/``, or ``packages-install-path``) are projects too: their
models are built into the warehouse like the root's (Fivetran's ``stg_shopify__order``), so they
are read the same way, each with its own dbt_project.yml. A file that cannot be read or parsed
becomes one warning naming it; the rest still import. Every path goes through one
:class:`~.walk.ProjectWalker`, so nothing outside the folder the user named is read.

Example:
    >>> tests = ["unique", {"relationships": {"to": "ref('users')", "field": "id"}}]
    >>> [(name, args.get("field")) for name, args in iter_tests(tests)]
    [('unique', None), ('relationships', 'id')]
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.dbt.jinja_env import docs_blocks
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec, is_pii
from schemarag.tools.importers.dbt.walk import ProjectWalker
from schemarag.tools.importers.limits import ImportLimitError, ImportLimits, active_limits

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 5_000_000
# libyaml's safe loader, as dbt uses: it accepts what dbt accepts (a tab after a value, which the
# pure-Python loader rejects: social_media001's Fivetran linkedin_pages_source)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# dbt < 1.0 spelled model-paths and seed-paths differently; old projects still use them.
_PATH_KEYS = {
    "model-paths": ("source-paths", ["models"]),
    "seed-paths": ("data-paths", ["seeds"]),
    "snapshot-paths": ("", ["snapshots"]),
    "macro-paths": ("", ["macros"]),
    "docs-paths": ("", []),
}
_SNAPSHOT = re.compile(r"{%-?\s*snapshot\s+(\w+)\s*-?%}(.*?){%-?\s*endsnapshot\s*-?%}", re.DOTALL)


@dataclass
class DbtProject:
    """One dbt project folder: the root project or an installed package."""

    name: str
    root: Path
    config: dict[str, Any]
    paths: dict[str, list[Path]]  # model-paths, seed-paths, ... resolved inside the import root
    variables: dict[str, Any]
    is_root: bool = False


@dataclass
class ProjectFiles:
    """Everything read from disk, before any Jinja runs."""

    root: Path
    name: str
    variables: dict[str, Any]
    walker: ProjectWalker
    projects: list[DbtProject] = field(default_factory=list)  # the root first, then packages
    relations: list[RelationSpec] = field(default_factory=list)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)  # (source, table) -> node key
    docs: dict[str, str] = field(default_factory=dict)
    sql_files: dict[str, Path] = field(default_factory=dict)  # model name -> .sql
    sql_fqn: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # model -> (package, fqn)
    snapshots: dict[str, tuple[str, list[str], Path, str]] = field(default_factory=dict)
    seeds: dict[str, tuple[str, list[str], Path]] = field(default_factory=dict)  # name -> (pkg, fqn, csv)
    exposures: list[dict[str, Any]] = field(default_factory=list)
    semantic_models: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    profile: dict[str, Any] = field(default_factory=dict)  # the profiles.yml output dbt would use
    warnings: list[str] = field(default_factory=list)

    @property
    def macro_paths(self) -> list[Path]:
        return [p for proj in self.projects if proj.is_root for p in proj.paths["macro-paths"]]


def _read_text(path: Path, warnings: list[str]) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            warnings.append(f"{path}: skipped: larger than {MAX_FILE_BYTES} bytes")
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: skipped: cannot read ({exc})")
        return None


def expanded_nodes(data: Any, source: object, limits: ImportLimits | None = None) -> int:
    """How many nodes ``data`` has once every alias is expanded, counted without expanding.

    A safe loader builds an alias as a second reference to the same object, so loading a 1 KB
    alias bomb is cheap; what explodes is whoever walks or prints it (``{{ var('i') }}``
    rendered 10^9 nodes: issue 39). Sizes are memoised per object, so this is linear in the
    objects loaded, iterative (no recursion on deep nesting), and stops at ``limits.yaml_nodes``
    or ``limits.depth``; a structure that contains itself expands forever and is refused too."""
    if not isinstance(data, (list, dict)):  # a scalar, or None for an empty file (tpch001's packages.yml)
        return 1
    limits = limits or active_limits()
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool, int]] = [(data, False, 0)]
    while stack:
        obj, done, depth = stack.pop()
        children = [*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj
        if done:
            total = 1 + sum(sizes.get(id(c), 1) for c in children)
            if total > limits.yaml_nodes:
                raise limits.exceeded(source, "yaml_nodes", "the YAML once its aliases are expanded")
            sizes[id(obj)] = total
            on_path.discard(id(obj))
            continue
        if id(obj) in sizes:
            continue
        if depth > limits.depth:
            raise limits.exceeded(source, "depth", "the YAML nesting")
        on_path.add(id(obj))
        stack.append((obj, True, depth))
        for child in children:
            if isinstance(child, (list, dict)) and id(child) not in sizes:
                if id(child) in on_path:
                    raise ImportLimitError(
                        f"{source}: a YAML alias refers to itself (expands forever); remove it"
                    )
                stack.append((child, False, depth + 1))
    return sizes.get(id(data), 1)


def _load_yaml(path: Path, warnings: list[str]) -> Any:
    text = _read_text(path, warnings)
    if text is None:
        return None
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)  # a safe loader, as dbt reads ymls
        expanded_nodes(data, path)  # an alias bomb: one line, before anything walks it
        return data
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


def _relation(raw: dict[str, Any], kind: str, node: str, path: Path, package: str) -> RelationSpec:
    columns: list[ColumnSpec] = []
    for raw_col in raw.get("columns") or []:
        if isinstance(raw_col, dict) and raw_col.get("name"):
            columns.append(_column(raw_col))
    cfg = dict(raw["config"]) if isinstance(raw.get("config"), dict) else {}
    for key in ("access", "group", "docs"):  # model properties that are also configs
        if key in raw and key not in cfg:
            cfg[key] = raw[key]
    tags = [t for t in [*(raw.get("tags") or []), *(cfg.get("tags") or [])] if isinstance(t, str)]
    if tags:
        cfg["tags"] = tags
    rel = RelationSpec(
        name=node,
        node=node,
        kind=kind,
        description=str(raw.get("description") or ""),
        columns=columns,
        tags=set(tags),
        package=package,
        config=cfg,
    )
    rel.yml_file = str(path)
    for con in raw.get("constraints") or []:
        if isinstance(con, dict) and str(con.get("type", "")).lower() == "primary_key":
            rel.primary_key = [str(c) for c in con.get("columns") or []]
    return rel


def _read_sources(files: ProjectFiles, path: Path, data: dict[str, Any], package: str) -> None:
    for i, src in enumerate(data.get("sources") or []):
        if not isinstance(src, dict) or not isinstance(src.get("name"), str):
            files.warnings.append(f"{path}: sources[{i}] has no name; entry skipped")
            continue
        src_cfg = src.get("config") if isinstance(src.get("config"), dict) else {}
        for j, raw in enumerate(src.get("tables") or []):
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                files.warnings.append(f"{path}: sources[{i}].tables[{j}] has no name; entry skipped")
                continue
            node = f"{src['name']}.{raw['name']}"
            rel = _relation(raw, "source", node, path, package)
            # where the table lives; Jinja in these ({{ var('shopify_schema') }}) renders later
            meta = (
                {**(src.get("meta") or {}), **(raw.get("meta") or {})}
                if isinstance(src.get("meta") or {}, dict)
                else {}
            )
            rel.config = {
                **{k: v for k, v in src_cfg.items() if k != "tags"},
                **({"meta": meta} if meta else {}),
                **rel.config,
                "schema": src.get("schema") or src["name"],
                "database": src.get("database") or src.get("catalog") or "",
                "identifier": raw.get("identifier") or raw["name"],
                "source_name": src["name"],
            }
            rel.tags |= {str(t) for t in [*(src.get("tags") or []), *(src_cfg.get("tags") or [])]}
            if not rel.description and src.get("description"):
                rel.description = f"Table of the {src['name']} source: {src['description']}"
            files.sources.setdefault((src["name"], raw["name"]), node)
            files.relations.append(rel)


def _read_properties(files: ProjectFiles, path: Path, package: str) -> None:
    data = _load_yaml(path, files.warnings)
    if data is None:
        return
    if not isinstance(data, dict):
        files.warnings.append(f"{path}: skipped: top level is not a mapping (models:/sources:)")
        return
    for kind in ("models", "seeds", "snapshots"):
        for i, raw in enumerate(data.get(kind) or []):
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                files.warnings.append(f"{path}: {kind}[{i}] has no name; entry skipped")
                continue
            files.relations.append(_relation(raw, kind.rstrip("s"), str(raw["name"]), path, package))
    _read_sources(files, path, data, package)
    for key, bucket in (
        ("exposures", files.exposures),
        ("semantic_models", files.semantic_models),
        ("metrics", files.metrics),
    ):
        for raw in data.get(key) or []:
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                bucket.append({**raw, "_file": str(path), "_package": package})


def _project(walker: ProjectWalker, folder: Path, is_root: bool) -> DbtProject | None:
    """One project folder's dbt_project.yml and its paths (None: not readable, warned)."""
    warnings = walker.warnings
    config_path = folder / "dbt_project.yml"
    if walker.check(config_path) is None:
        if is_root:
            raise ImportFormatError(
                f"{warnings[-1]}; pass the folder that really holds the project as --project"
            )
        return None
    config = _load_yaml(config_path, warnings)
    if not isinstance(config, dict):
        if is_root:
            why = warnings[-1] if warnings else "top level is not a mapping"
            raise ImportFormatError(f"{config_path}: cannot read the project file: {why}")
        warnings.append(f"{config_path}: package skipped: not a dbt project file")
        return None
    paths: dict[str, list[Path]] = {}
    for key, (old_key, default) in _PATH_KEYS.items():
        value = config.get(key) or (config.get(old_key) if old_key else None) or default
        entries = value if isinstance(value, list) else [value]
        found = [walker.check(folder / str(p), f"{key} entry {str(p)!r}") for p in entries]
        paths[key] = [p for p in found if p is not None]
    variables = config.get("vars") if isinstance(config.get("vars"), dict) else {}
    return DbtProject(
        name=str(config.get("name") or folder.name),
        root=folder,
        config=config,
        paths=paths,
        variables=dict(variables),
        is_root=is_root,
    )


def _packages(walker: ProjectWalker, root: DbtProject) -> list[DbtProject]:
    """Installed packages (``dbt deps`` output), each refused if it resolves outside the root."""
    install = str(root.config.get("packages-install-path") or "dbt_packages")
    candidates = [install] if install != "dbt_packages" else ["dbt_packages", "dbt_modules"]
    out: list[DbtProject] = []
    for entry in candidates:
        folder = walker.check(root.root / entry, f"packages-install-path {entry!r}")
        if folder is None or not folder.is_dir():
            continue
        for pkg in sorted(p for p in (root.root / entry).iterdir() if p.is_dir() or p.is_symlink()):
            if walker.check(pkg, "installed package") is None or not (pkg / "dbt_project.yml").is_file():
                continue
            project = _project(walker, pkg, is_root=False)
            if project is not None:
                out.append(project)
    if not out and (root.root / "packages.yml").is_file() and walker.check(root.root / "packages.yml"):
        listed = _load_yaml(root.root / "packages.yml", walker.warnings)
        if isinstance(listed, dict) and listed.get("packages"):
            walker.warnings.append(
                f"{root.root / 'packages.yml'}: lists {len(listed['packages'])} package(s) but none is "
                f"installed under {install}/; run `dbt deps` first (their models are left out)"
            )
    return out


def _profile(walker: ProjectWalker, root: DbtProject) -> dict[str, Any]:
    """The output of ``profiles.yml`` (kept in the project, as many repos do) dbt would use."""
    path = root.root / "profiles.yml"
    if not path.is_file() or walker.check(path) is None:
        return {}
    data = _load_yaml(path, walker.warnings)
    profile = data.get(str(root.config.get("profile") or "")) if isinstance(data, dict) else None
    if not isinstance(profile, dict) or not isinstance(profile.get("outputs"), dict):
        return {}
    outputs = profile["outputs"]
    target = str(profile.get("target") or next(iter(outputs), ""))
    chosen = outputs.get(target)
    return {"target": target, **chosen} if isinstance(chosen, dict) else {}


def _fqn(project: DbtProject, folder: Path, path: Path) -> list[str]:
    parts = list(path.relative_to(folder).parts) if path.is_relative_to(folder) else [path.name]
    return [project.name, *parts[:-1], path.stem]


def _read_code(files: ProjectFiles, project: DbtProject) -> None:
    walker = files.walker
    for folder in project.paths["model-paths"]:
        for path in walker.files([folder], (".sql",)):
            if path.stem in files.sql_files:
                files.warnings.append(f"{path}: model name {path.stem!r} is used twice; this file skipped")
                continue
            files.sql_files[path.stem] = path
            files.sql_fqn[path.stem] = (project.name, _fqn(project, folder, path))
    for folder in project.paths["snapshot-paths"]:
        for path in walker.files([folder], (".sql",)):
            text = _read_text(path, files.warnings) or ""
            for match in _SNAPSHOT.finditer(text):
                fqn = [*_fqn(project, folder, path)[:-1], match.group(1)]
                files.snapshots.setdefault(match.group(1), (project.name, fqn, path, match.group(2)))
    for folder in project.paths["seed-paths"]:
        for path in walker.files([folder], (".csv",)):
            files.seeds.setdefault(path.stem, (project.name, _fqn(project, folder, path), path))


def seed_header(path: Path, warnings: list[str]) -> list[str]:
    """The column names of a seed CSV (its first line)."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            first = fh.readline(1_000_000)
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: seed header not read ({exc})")
        return []
    row = next(csv.reader(io.StringIO(first)), [])
    return [c.strip() for c in row if c.strip()]


def read_project(root: Path, warnings: list[str] | None = None) -> ProjectFiles:
    """Read ``dbt_project.yml``, installed packages and every property yml, docs block, model
    ``.sql``, snapshot and seed under them.

    Every path comes through one :class:`ProjectWalker`: a folder or file that resolves outside
    ``root`` (symlink, ``..`` in ``model-paths``, a package linked in from elsewhere) is refused
    with one warning naming it. Warnings go to ``warnings`` when given (also later ones, from
    macros read while rendering).
    """
    warnings = [] if warnings is None else warnings
    walker = ProjectWalker(root, warnings)
    if not (root / "dbt_project.yml").is_file():
        raise ImportFormatError(f"{root}: no dbt_project.yml; pass the dbt project folder as --project")
    main = _project(walker, root, is_root=True)
    assert main is not None  # the root raises instead
    files = ProjectFiles(
        root=root, name=main.name, variables=main.variables, walker=walker, warnings=warnings
    )
    files.projects = [main, *_packages(walker, main)]
    files.profile = _profile(walker, main)
    for project in files.projects:
        p = project.paths
        for path in walker.files(
            [*p["model-paths"], *p["seed-paths"], *p["snapshot-paths"]], (".yml", ".yaml")
        ):
            _read_properties(files, path, project.name)
        for path in walker.files([*p["docs-paths"], *p["model-paths"]], (".md",)):
            text = _read_text(path, files.warnings)
            if text is not None:
                for name, body in docs_blocks(text).items():
                    files.docs.setdefault(name, body)  # the root project's block wins
        _read_code(files, project)
    return files
