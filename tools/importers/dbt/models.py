"""Project mode: render descriptions and model SQL, then merge SQL-derived columns into the ymls.

Models are visited upstream-first (a topological order of their ``ref``s), so a model's
``select *`` expands to the columns already found for what it reads. A model whose Jinja cannot be
rendered (a package macro) or whose SQL does not parse keeps its yml columns and the lineage
read from the Jinja AST, and yields one warning naming the file.
"""

from __future__ import annotations

import logging
from graphlib import CycleError, TopologicalSorter
from typing import Any

from schemarag.tools.importers.dbt.jinja_env import MODEL_SCHEMA, DbtJinja, RenderError
from schemarag.tools.importers.dbt.project import ProjectFiles, _read_text
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec
from schemarag.tools.importers.dbt.sql_columns import SqlColumnsError, output_columns

log = logging.getLogger(__name__)


def _load_macros(files: ProjectFiles, env: DbtJinja, warnings: list[str]) -> None:
    for path in files.walker.files(files.macro_paths, (".sql", ".jinja")):
        text = _read_text(path, warnings)
        if text is None:
            continue
        try:
            env.load_macros(path, text)
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

    rel.description = render(rel.description, rel.name)
    for col in rel.columns:
        col.description = render(col.description, f"{rel.name}.{col.name}")


def _schema_of(relations: dict[str, RelationSpec]) -> dict[str, Any]:
    """sqlglot's nested ``{schema: {table: {column: type}}}`` for relations with known columns."""
    schema: dict[str, dict[str, dict[str, str]]] = {}
    for rel in relations.values():
        if not rel.columns:
            continue
        db, _, table = (rel.name if "." in rel.name else f"{MODEL_SCHEMA}.{rel.name}").rpartition(".")
        if "." in db:  # deeper names cannot share sqlglot's two-level schema; leave them out
            continue
        schema.setdefault(db, {})[table] = {c.name: c.data_type or "UNKNOWN" for c in rel.columns}
    return schema


def _order(sql_models: dict[str, list[str]], warnings: list[str]) -> list[str]:
    graph = {m: [u for u in ups if u in sql_models] for m, ups in sql_models.items()}
    try:
        return list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        warnings.append(f"ref() cycle between models {exc.args[1]}; columns resolved in file order")
        return list(sql_models)


def resolve_models(
    files: ProjectFiles, env: DbtJinja, dialect: str, warnings: list[str]
) -> list[RelationSpec]:
    """Every relation of the project with descriptions rendered and SQL columns merged in."""
    _load_macros(files, env, warnings)
    relations: dict[str, RelationSpec] = {}
    for rel in files.relations:
        relations.setdefault(rel.name.lower(), rel)
        _render_descriptions(rel, env, warnings)
    sql_text: dict[str, str] = {}
    upstream: dict[str, list[str]] = {}
    for model, path in files.sql_files.items():
        text = _read_text(path, warnings)
        if text is None:
            continue
        sql_text[model] = text
        refs, srcs = env.references(text)
        names = [*refs, *(files.sources[s] for s in srcs if s in files.sources)]
        upstream[model] = names
        rel = relations.get(model.lower())
        if rel is None:
            rel = RelationSpec(name=model, kind="model", yml_file=str(path))
            relations[model.lower()] = rel
        rel.sql_path = path
        rel.upstream = names
    for model in _order({m: upstream.get(m, []) for m in sql_text}, warnings):
        rel = relations[model.lower()]
        path = files.sql_files[model]
        try:
            rendered = env.render_sql(sql_text[model], model)
            found = output_columns(rendered, _schema_of(relations), dialect)
        except RenderError as exc:
            warnings.append(f"{path}: Jinja not rendered, columns from the yml only: {exc}")
            continue
        except SqlColumnsError as exc:
            warnings.append(f"{path}: {exc}; columns from the yml only")
            continue
        for name, dtype in found:
            col = rel.column(name)
            if col is None:
                rel.columns.append(ColumnSpec(name=name, data_type=dtype))
            elif not col.data_type and dtype:
                col.data_type = dtype
    return list(relations.values())
