"""Project mode: configs, enabled/ephemeral, SQL columns, relation names and layers per node.

Nodes are configured as dbt does (:mod:`.configs`: project folder trees, yml ``config:``, then the
model's ``{{ config(...) }}``), disabled ones dropped, and visited upstream-first (a topological
order of their ``ref``s), so a model's ``select *`` expands to the columns already found for what
it reads, ephemeral models included (they are inlined into the models that use them). A model
whose Jinja cannot be rendered (an adapter call) or whose SQL does not parse keeps its yml columns
and the lineage read from the Jinja AST, and yields one warning naming the file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from typing import Any

from schemarag.tools.importers.dbt.configs import config_snippets, folder_config, merge, truthy
from schemarag.tools.importers.dbt.jinja_env import MODEL_SCHEMA, SOURCE_SCHEMA, DbtJinja, RenderError
from schemarag.tools.importers.dbt.layers import layer_of
from schemarag.tools.importers.dbt.naming import Naming
from schemarag.tools.importers.dbt.project import DbtProject, ProjectFiles, _read_text, seed_header
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec
from schemarag.tools.importers.dbt.sql_columns import SqlColumnsError, output_columns

log = logging.getLogger(__name__)

# The columns dbt adds to every snapshot table.
SNAPSHOT_COLUMNS = (
    ("dbt_scd_id", "TEXT", "Unique key of this version of the row (dbt snapshot)."),
    ("dbt_updated_at", "TIMESTAMP", "When the source row was updated, as dbt saw it (dbt snapshot)."),
    ("dbt_valid_from", "TIMESTAMP", "When this version of the row became current (dbt snapshot)."),
    (
        "dbt_valid_to",
        "TIMESTAMP",
        "When this version stopped being current; null while current (dbt snapshot).",
    ),
)
# dbt-duckdb sources with ``external_location``: source() renders to a file read, not a relation
FILE_SOURCE = "external_file"
_RESOURCE_KEY = {"model": "models", "seed": "seeds", "snapshot": "snapshots", "source": "sources"}


@dataclass
class Resolved:
    """The project's nodes after configuration: what is built, and what was left out."""

    relations: list[RelationSpec]
    disabled: list[str] = field(default_factory=list)
    ephemeral: list[str] = field(default_factory=list)


def _load_macros(files: ProjectFiles, env: DbtJinja, warnings: list[str]) -> None:
    for project in files.projects:  # the root first: its macros win over packages' of one name
        env.add_package(project.name, project.variables if not project.is_root else {})
        for path in files.walker.files(project.paths["macro-paths"], (".sql", ".jinja")):
            text = _read_text(path, warnings)
            if text is None:
                continue
            try:
                env.load_macros(path, text, project.name, root=project.is_root)
            except RenderError as exc:
                warnings.append(f"{path}: macros skipped: {exc}")


def _render_descriptions(rel: RelationSpec, env: DbtJinja, warnings: list[str]) -> None:
    def render(text: str, what: str) -> str:
        if "{{" not in text and "{%" not in text:
            return text
        try:
            return env.render(text)
        except RenderError as exc:
            warnings.append(f"{rel.yml_file}: {what}: description kept unrendered: {exc}")
            return text

    rel.description = render(rel.description, rel.node)
    for col in rel.columns:
        col.description = render(col.description, f"{rel.node}.{col.name}")


def _sql_key(rel: RelationSpec, env: DbtJinja) -> tuple[str, str]:
    if rel.kind == "source":
        return SOURCE_SCHEMA, env.sql_name(rel.node).split(".", 1)[1]
    return MODEL_SCHEMA, rel.node


def _schema_of(relations: dict[str, RelationSpec], env: DbtJinja) -> dict[str, Any]:
    """sqlglot's nested ``{schema: {table: {column: type}}}`` for relations with known columns."""
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for rel in relations.values():
        if rel.columns:
            db, table = _sql_key(rel, env)
            schema.setdefault(db, {})[table] = {c.name: c.data_type or "UNKNOWN" for c in rel.columns}
    return schema


def _order(sql_models: dict[str, list[str]], warnings: list[str]) -> list[str]:
    graph = {m: [u for u in ups if u in sql_models] for m, ups in sql_models.items()}
    try:
        return list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        warnings.append(f"ref() cycle between models {exc.args[1]}; columns resolved in file order")
        return list(sql_models)


def _collect(files: ProjectFiles, warnings: list[str]) -> dict[str, RelationSpec]:
    """Nodes by dbt name: yml entries, then the SQL files, snapshots and seeds they describe."""
    relations: dict[str, RelationSpec] = {}
    for rel in files.relations:
        key = rel.node.lower()
        if key in relations:
            first = relations[key]
            if first.kind == rel.kind and not (first.description or first.columns):
                relations[key] = rel  # an empty stub (a package's) gives way to the documented one
            else:
                warnings.append(f"{rel.yml_file}: {rel.kind} {rel.node!r} defined twice; first kept")
            continue
        relations[key] = rel
    for model, path in files.sql_files.items():
        package, fqn = files.sql_fqn[model]
        rel = relations.get(model.lower())
        if rel is None or rel.kind != "model":
            rel = relations[model.lower()] = RelationSpec(name=model, kind="model", yml_file=str(path))
        rel.sql_path, rel.package, rel.fqn = path, package, fqn
    for name, (package, fqn, path, _body) in files.snapshots.items():
        rel = relations.get(name.lower())
        if rel is None or rel.kind not in ("snapshot", "model"):
            rel = relations[name.lower()] = RelationSpec(name=name, kind="snapshot", yml_file=str(path))
        rel.kind, rel.sql_path, rel.package, rel.fqn = "snapshot", path, package, fqn
    for name, (package, fqn, path) in files.seeds.items():
        rel = relations.get(name.lower())
        if rel is None:
            rel = relations[name.lower()] = RelationSpec(name=name, kind="seed", yml_file=str(path))
        rel.kind, rel.package, rel.fqn = "seed", package, fqn
        if not rel.columns:
            rel.columns = [ColumnSpec(name=c) for c in seed_header(path, warnings)]
    for key, rel in list(relations.items()):
        if rel.kind in ("model", "snapshot", "seed") and rel.sql_path is None and rel.node not in files.seeds:
            # dbt builds a node from its .sql/.csv; a yml entry alone is a patch for nothing
            what = ".csv" if rel.kind == "seed" else ".sql"
            warnings.append(
                f"{rel.yml_file}: {rel.kind} {rel.node!r} is documented but has no {what} file; dbt does "
                "not build it, so it is left out"
            )
            del relations[key]
            continue
        rel.package = rel.package or files.name
        if not rel.fqn:
            tail = rel.node.split(".") if rel.kind == "source" else [rel.node]
            rel.fqn = [rel.package, *tail]
    return relations


def _configure(
    rel: RelationSpec,
    projects: dict[str, DbtProject],
    root: DbtProject,
    env: DbtJinja,
    warnings: list[str],
    snapshot_body: str | None = None,
) -> None:
    """Merge the folder, yml and SQL configs of one node and render the Jinja in them.

    Precedence as dbt computes it: the node's own project's dbt_project.yml, then the yml
    ``config:``, then ``config()`` in the SQL; for a package's node the root project's
    dbt_project.yml comes last and wins over all of them (how a project configures packages)."""
    key = _RESOURCE_KEY[rel.kind]
    own = projects.get(rel.package)
    is_package = own is not None and own is not root
    cfg = merge(folder_config([(own if is_package else root).config.get(key)], rel.fqn), rel.config)
    env.use_package(rel.package)
    if rel.sql_path is not None and rel.kind in ("model", "snapshot"):
        text = (_read_text(rel.sql_path, warnings) or "") if rel.kind == "model" else snapshot_body or ""
        sql_cfg, errors = env.model_config(config_snippets(text))
        for error in errors:
            warnings.append(f"{rel.sql_path}: config() not fully rendered, constant arguments kept: {error}")
        cfg = merge(cfg, sql_cfg)
    if is_package:  # dbt applies the root project's dbt_project.yml last to a package's nodes
        cfg = merge(cfg, folder_config([root.config.get(key)], rel.fqn))
    for name in ("enabled", "materialized", "schema", "database", "alias", "identifier", "target_schema"):
        if name in cfg:
            try:
                cfg[name] = env.render_value(cfg[name])
            except RenderError as exc:
                warnings.append(f"{rel.yml_file}: {rel.node}: config {name} kept unrendered: {exc}")
    rel.config = cfg
    rel.tags |= {str(t) for t in cfg.get("tags") or [] if isinstance(t, str | int)}
    rel.materialized = str(cfg.get("materialized") or ("seed" if rel.kind == "seed" else "")).lower()
    if rel.kind == "snapshot":
        rel.materialized = "snapshot"
    rel.access = str(cfg.get("access") or "")
    rel.group = str(cfg.get("group") or "")


def _columns_from_sql(
    relations: dict[str, RelationSpec], files: ProjectFiles, env: DbtJinja, dialect: str, warnings: list[str]
) -> None:
    sql_text: dict[str, str] = {}
    upstream: dict[str, list[str]] = {}
    for key, rel in relations.items():
        if rel.sql_path is None or rel.kind not in ("model", "snapshot"):
            continue
        text = _read_text(rel.sql_path, warnings) if rel.kind == "model" else files.snapshots[rel.node][3]
        if text is None:
            continue
        sql_text[key] = text
        refs, srcs = env.references(text)
        rel.upstream = [*refs, *(files.sources[s] for s in srcs if s in files.sources)]
        upstream[key] = [r.lower() for r in refs]
    for key in _order({m: upstream.get(m, []) for m in sql_text}, warnings):
        rel = relations[key]
        env.use_package(rel.package)
        try:
            rendered = env.render_sql(sql_text[key], rel.node)
            found = output_columns(rendered, _schema_of(relations, env), dialect)
        except RenderError as exc:
            warnings.append(f"{rel.sql_path}: Jinja not rendered, columns from the yml only: {exc}")
            found = []
        except SqlColumnsError as exc:
            warnings.append(f"{rel.sql_path}: {exc}; columns from the yml only")
            found = []
        finally:
            # what the render called before it ended (refs hidden in var() values too)
            rel.upstream = list(dict.fromkeys([*rel.upstream, *env.calls.refs, *env.calls.sources]))
        if rel.kind == "snapshot":
            found = [*found, *((n, t) for n, t, _ in SNAPSHOT_COLUMNS)]
        for name, dtype in found:
            col = rel.column(name)
            if col is None:
                desc = (
                    next((d for n, _, d in SNAPSHOT_COLUMNS if n == name), "")
                    if rel.kind == "snapshot"
                    else ""
                )
                rel.columns.append(ColumnSpec(name=name, data_type=dtype, description=desc))
            elif not col.data_type and dtype:
                col.data_type = dtype


def _external_location(cfg: dict[str, Any]) -> bool:
    meta = cfg.get("meta") if isinstance(cfg.get("meta"), dict) else {}
    return bool(cfg.get("external_location") or meta.get("external_location"))


def _seed_types(rel: RelationSpec) -> None:
    types = rel.config.get("column_types")
    if rel.kind != "seed" or not isinstance(types, dict):
        return
    for name, dtype in types.items():
        col = rel.column(str(name))
        if col is None:
            rel.columns.append(ColumnSpec(name=str(name), data_type=str(dtype)))
        elif not col.data_type:
            col.data_type = str(dtype)


def resolve_models(
    files: ProjectFiles, env: DbtJinja, dialect: str, warnings: list[str], naming: Naming | None = None
) -> Resolved:
    """Every enabled node of the project, configured, named, layered, with SQL columns merged in.

    Ephemeral models stay in the list (``materialized == "ephemeral"``): the assembly keeps them
    out of the tables but uses them for lineage and documentation.
    """
    _load_macros(files, env, warnings)
    relations = _collect(files, warnings)
    projects = {p.name: p for p in files.projects}
    root = files.projects[0]
    for rel in relations.values():
        body = (
            files.snapshots[rel.node][3] if rel.kind == "snapshot" and rel.node in files.snapshots else None
        )
        _configure(rel, projects, root, env, warnings, body)
    disabled = sorted(r.node for r in relations.values() if not truthy(r.config.get("enabled"), True))
    relations = {k: r for k, r in relations.items() if truthy(r.config.get("enabled"), True)}
    for rel in relations.values():
        env.use_package(rel.package)
        _render_descriptions(rel, env, warnings)
        _seed_types(rel)
    _columns_from_sql(relations, files, env, dialect, warnings)
    naming = naming or Naming(env.target, "project", env)
    for rel in relations.values():
        rel.name = naming.relation(rel, warnings)
        rel.layer = layer_of(rel.kind, rel.fqn, rel.tags, rel.access, rel.node)
    for rel in relations.values():
        if rel.kind == "source" and _external_location(rel.config):
            rel.materialized = FILE_SOURCE  # dbt-duckdb: source() renders to a file path, not a table
    ephemeral = sorted(r.node for r in relations.values() if r.materialized == "ephemeral")
    return Resolved(list(relations.values()), disabled, ephemeral)
