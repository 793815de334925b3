"""``schemarag import dbt``: a dbt project (or its compiled manifest) -> schema JSON + docs.

From the project as it sits in git, no dbt run and no warehouse: property ymls give
descriptions, tests and tags; each model's SQL is rendered with stub Jinja and read by sqlglot
for output columns (when the yml lists none or only some) and lineage. With ``--manifest``
(and optionally ``--catalog`` for real column types) dbt's compiled artifacts are read instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

from schemarag.runtime.names import check_name
from schemarag.tools.importers.dbt.assemble import lineage_sections, to_database
from schemarag.tools.importers.dbt.jinja_env import MODEL_SCHEMA, DbtJinja, RenderError
from schemarag.tools.importers.dbt.models import resolve_models
from schemarag.tools.importers.dbt.project import read_project
from schemarag.tools.importers.writer import ImportReport, write_database

log = logging.getLogger(__name__)

__all__ = ["import_dbt"]


def _resolver(env: DbtJinja):
    def resolve(expression: str) -> str | None:
        text = expression if "(" in expression else f"ref({expression!r})"
        try:
            name = env.render("{{ " + text + " }}").strip()
        except RenderError:
            return None
        return name.removeprefix(MODEL_SCHEMA + ".")

    return resolve


def import_dbt(
    project: Path,
    out: Path,
    *,
    name: str | None = None,
    dialect: str = "postgres",
    manifest: Path | None = None,
    catalog: Path | None = None,
) -> ImportReport:
    """Import one dbt project as one datasource (named after the project unless ``name``)."""
    report = ImportReport()
    if manifest is not None:
        from schemarag.tools.importers.dbt.manifest import read_manifest

        relations, sources, project_name = read_manifest(manifest, catalog, report.warnings)
        env = DbtJinja({}, sources, {}, dialect)
    else:
        files = read_project(project, report.warnings)
        env = DbtJinja(files.variables, files.sources, files.docs, dialect)
        relations = resolve_models(files, env, dialect, report.warnings)
        project_name = files.name
    db_name = check_name(name or project_name, "database")
    models = sum(1 for r in relations if r.kind == "model")
    sources_n = sum(1 for r in relations if r.kind == "source")
    db = to_database(
        db_name,
        relations,
        _resolver(env),
        report.warnings,
        dialect=dialect,
        description=f"Warehouse tables of the dbt project `{project_name}` ({models} models, "
        f"{sources_n} source tables).",
    )
    report.files += write_database(db, out, lineage_sections(relations))
    report.add(db)
    for warning in report.warnings:
        log.warning("%s", warning)
    return report
