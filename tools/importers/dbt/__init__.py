"""``schemarag import dbt``: a dbt project (or its compiled manifest) -> schema JSON + docs.

From the project as it sits in git, no dbt run and no warehouse: dbt_project.yml folder configs,
property ymls and ``{{ config() }}`` decide what is built and where (materialization, enabled,
``schema``/``database``/``alias``: :mod:`.naming`); ymls give descriptions, tests and tags; each
model's SQL is rendered with stub Jinja and read by sqlglot for output columns and lineage;
installed packages are read like the root project. Ephemeral models are not tables (they are
documented in the models that inline them); disabled models are left out. Each table is named as
the warehouse runs it (``analytics_marts.fct_orders``) and carries its layer (:mod:`.layers`).
With ``--manifest`` (and optionally ``--catalog`` for real column types) dbt's compiled
artifacts are read instead, and their ``relation_name`` wins.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.names import check_name
from schemarag.tools.importers.dbt.assemble import NOT_TABLES, lineage_sections, to_database
from schemarag.tools.importers.dbt.exposures import extra_sections
from schemarag.tools.importers.dbt.jinja_env import MODEL_SCHEMA, SOURCE_SCHEMA, DbtJinja, RenderError
from schemarag.tools.importers.dbt.models import resolve_models
from schemarag.tools.importers.dbt.naming import SCHEMA_MODES, Naming, target_from_profile
from schemarag.tools.importers.dbt.project import read_project
from schemarag.tools.importers.limits import DEFAULT_LIMITS, ImportLimits, use_limits
from schemarag.tools.importers.writer import ImportReport, write_database

log = logging.getLogger(__name__)

__all__ = ["DbtImportReport", "import_dbt"]

# dbt adapter type -> the dialect schemarag validates and formats SQL in
_ADAPTER_DIALECTS = {
    "duckdb": "duckdb", "postgres": "postgres", "redshift": "postgres", "snowflake": "snowflake",
    "bigquery": "bigquery", "sqlite": "sqlite", "mysql": "mysql", "sqlserver": "tsql",
    "databricks": "databricks", "spark": "spark", "trino": "trino",
}  # fmt: skip


@dataclass
class DbtImportReport(ImportReport):
    """The import's counts plus what dbt itself would report about the project's nodes."""

    models: int = 0
    ephemeral: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    sources: int = 0
    layers: dict[str, int] = field(default_factory=dict)
    # every enabled node: {"relation", "materialized", "kind", "layer"} (also ephemeral ones and
    # nodes left out for lack of columns), what `dbt ls` would say about it
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for the CLI: models built, ephemeral/disabled left out, tables per layer."""
        layers = ", ".join(f"{n} {layer}" for layer, n in sorted(self.layers.items(), key=lambda x: -x[1]))
        return (
            f"dbt: {self.models} models and {self.sources} source tables as tables; left out "
            f"{len(self.ephemeral)} ephemeral, {len(self.disabled)} disabled; layers: {layers or 'none'}"
        )


def _resolver(env: DbtJinja):
    """``ref('x')`` / ``source('a', 'b')`` / bare ``x`` (a test's ``to:``) -> node name."""

    def resolve(expression: str) -> str | None:
        text = expression if "(" in expression else f"ref({expression!r})"
        try:
            name = env.render("{{ " + text + " }}").strip()
        except RenderError:
            return None
        if name.startswith(SOURCE_SCHEMA + "."):
            return env.tokens.get(name.removeprefix(SOURCE_SCHEMA + "."))
        return name.removeprefix(MODEL_SCHEMA + ".")

    return resolve


def import_dbt(
    project: Path,
    out: Path,
    *,
    limits: ImportLimits = DEFAULT_LIMITS,
    **options: Any,
) -> DbtImportReport:
    """:func:`_import_dbt` under ``limits`` (:mod:`~schemarag.tools.importers.limits`): the YAML
    readers and the Jinja sandbox deep inside read them from the import's context."""
    with use_limits(limits):
        return _import_dbt(project, out, limits=limits, **options)


def _import_dbt(
    project: Path,
    out: Path,
    *,
    name: str | None = None,
    dialect: str | None = None,
    manifest: Path | None = None,
    catalog: Path | None = None,
    target_schema: str | None = None,
    target_database: str | None = None,
    schema_mode: str | None = None,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> DbtImportReport:
    """Import one dbt project as one datasource (named after the project unless ``name``).

    ``schema_mode``: ``prefixed`` (dbt's default ``<target>_<custom>``), ``custom`` (custom schema
    as is) or ``project`` (run the project's own generate_schema_name; the default).
    ``target_schema``/``target_database`` stand for the dbt target (default: profiles.yml in the
    project, when there is one). ``dialect`` defaults to the profile's adapter, else postgres.
    """
    if schema_mode is not None and schema_mode not in SCHEMA_MODES:
        raise ImportFormatError(f"--schema-mode {schema_mode!r}: use one of {', '.join(SCHEMA_MODES)}")
    report = DbtImportReport()
    if manifest is not None:
        from schemarag.tools.importers.dbt.manifest import read_manifest

        read = read_manifest(manifest, catalog, report.warnings, limits)
        relations, project_name = read.relations, read.project
        dialect = dialect or _ADAPTER_DIALECTS.get(read.adapter, "postgres")
        env = DbtJinja({}, read.sources, {}, dialect)
        report.disabled = read.disabled
        exposures, semantic, metrics = read.exposures, read.semantic_models, read.metrics
    else:
        files = read_project(project, report.warnings)
        target = target_from_profile(files.profile, dialect or "postgres", target_schema, target_database)
        dialect = dialect or _ADAPTER_DIALECTS.get(target.type, "postgres")
        env = DbtJinja(files.variables, files.sources, files.docs, dialect, target)
        naming = Naming(target, schema_mode or "project", env)  # type: ignore[arg-type]
        resolved = resolve_models(files, env, dialect, report.warnings, naming)
        relations, project_name = resolved.relations, files.name
        report.disabled = resolved.disabled
        exposures, semantic, metrics = files.exposures, files.semantic_models, files.metrics
    report.ephemeral = sorted(r.node for r in relations if r.materialized == "ephemeral")
    report.nodes = {
        r.node: {"relation": r.name, "materialized": r.materialized, "kind": r.kind, "layer": r.layer}
        for r in relations
    }
    db_name = check_name(name or project_name, "database")
    resolve = _resolver(env)
    built = [r for r in relations if r.materialized not in NOT_TABLES]
    report.models = sum(1 for r in built if r.kind == "model")
    report.sources = sum(1 for r in built if r.kind == "source")
    db = to_database(
        db_name,
        relations,
        resolve,
        report.warnings,
        dialect=dialect,
        description=f"Warehouse tables of the dbt project `{project_name}` ({report.models} models, "
        f"{report.sources} source tables).",
    )
    for table in db.tables:
        report.layers[table.layer or "model"] = report.layers.get(table.layer or "model", 0) + 1
    sections = lineage_sections(relations)
    by_node = {r.node.lower(): r for r in relations}
    for table_name, text in extra_sections(exposures, semantic, metrics, by_node, resolve).items():
        sections[table_name] = sections.get(table_name, "") + text
    report.files += write_database(db, out, sections)
    report.add(db)
    for warning in report.warnings:
        log.debug("%s", warning)  # the CLI prints them summarized (warning_summary)
    return report
