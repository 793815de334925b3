"""Builds as Dagster runs of the ``build_index`` job: what ``schemarag build`` and the tests run.

Each database is its own partition and its own run, so one broken database fails alone while
the others publish. Runs, materializations (chunk counts, content key, timings) and asset-check
results are recorded in a persistent instance (``$DAGSTER_HOME``, else ``.dagster/`` next to the
artifacts: :mod:`schemarag.pipelines.instance`), which ``schemarag ui`` opens.

``jobs=1`` runs each partition in this process with in-memory intermediates (a tenant's values
never touch disk); ``jobs>1`` fans partitions out to worker processes on Dagster's multiprocess
executor (:mod:`schemarag.pipelines.fanout`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from schemarag.assets.lib.embed_shards import DEFAULT_SCHEMA_PARTITION_COLUMNS
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.definitions import INDEX_ASSETS
from schemarag.pipelines.instance import dagster_home, open_instance
from schemarag.pipelines.jobs import build_index_job

# Dagster's console logger prints errors only: an asset's warnings are printed once by the
# schemarag logger and kept in the run's event log (assets/run_log.py), not printed twice.
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


@dataclass
class BuildReport:
    database: str
    ok: bool
    key: str = ""
    built: bool = False
    chunks: int = 0
    tables: int = 0
    embedded: int = 0
    cache_hits: int = 0
    error: str = ""
    embedded_chunk_ids: list[str] = field(default_factory=list)
    checks_failed: list[str] = field(default_factory=list)
    tenant: str = ""  # where it was published ("" = no tenant)
    schema_version: str = ""  # set for live datasources (from the snapshot)


def default_instance(artifacts: str | Path | None = None, tenant: str | None = None) -> dg.DagsterInstance:
    """The persistent instance builds into ``artifacts`` (for ``tenant``) record their runs in."""
    return open_instance(dagster_home(artifacts, tenant))


def index_job(resources: Mapping[str, Any]) -> dg.JobDefinition:
    """``build_index`` bound to ``resources``: runs carry that name, not ``__ephemeral_asset_job__``."""
    defs = dg.Definitions(assets=INDEX_ASSETS, jobs=[build_index_job], resources=dict(resources))
    return defs.resolve_job_def(build_index_job.name)


def run_tags(db: str, index_paths: IndexPaths) -> dict[str, str]:
    """Tags that make a run findable in the UI: the database, and the tenant when there is one."""
    tags = {"schemarag/database": db}
    if index_paths.tenant:
        tags["schemarag/tenant"] = index_paths.tenant
    return tags


def add_partitions(instance: dg.DagsterInstance, dbs: list[str]) -> None:
    known = set(instance.get_dynamic_partitions(databases_partitions.name))
    new = [db for db in dbs if db not in known]
    if new:
        instance.add_dynamic_partitions(databases_partitions.name, new)


def _metadata(result: dg.ExecuteInProcessResult | dg.JobExecutionResult, asset: str) -> dict:
    for ev in result.get_asset_materialization_events():
        mat = ev.event_specific_data.materialization
        if mat.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in mat.metadata.items()}
    return {}


def _error(result: dg.ExecuteInProcessResult | dg.JobExecutionResult) -> str:
    for ev in result.all_events:
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error:
            err = ev.step_failure_data.error
            while err.cause is not None and "SchemaragError" not in str(err.cls_name):
                if err.cls_name and err.cls_name.endswith("Error") and err.cause is None:
                    break
                err = err.cause
            return f"{ev.step_key}: {err.message.strip()}"
    return "build failed"


def materialize_database(
    db: str, index_paths: IndexPaths, embedding_model: EmbeddingModel, instance: dg.DagsterInstance
) -> BuildReport:
    """Run ``build_index`` for one partition in this process and summarise it."""
    add_partitions(instance, [db])
    # In memory: the whole graph runs in this process, and two runs of one partition name
    # (two tenants' "shop") must never read each other's pickled intermediate values.
    job = index_job(
        {"index_paths": index_paths, "embedding_model": embedding_model, "io_manager": dg.mem_io_manager}
    )
    result = job.execute_in_process(
        partition_key=db,
        instance=instance,
        raise_on_error=False,
        run_config=QUIET,
        tags=run_tags(db, index_paths),
    )
    return summarize(db, result, index_paths)


def summarize(
    db: str, result: dg.ExecuteInProcessResult | dg.JobExecutionResult, index_paths: IndexPaths
) -> BuildReport:
    """A run's outcome as a :class:`BuildReport` (picklable: worker processes return it)."""
    if not result.success:
        return BuildReport(database=db, ok=False, error=_error(result), tenant=index_paths.tenant or "")
    pub = _metadata(result, "published_index")
    emb = _metadata(result, "chunk_embeddings")
    live = _metadata(result, "live_schema_snapshot")
    src = _metadata(result, "source_snapshot")
    failed = [e.check_name for e in result.get_asset_check_evaluations() if not e.passed]
    return BuildReport(
        database=db,
        ok=not failed,
        key=pub.get("key", ""),
        built=bool(pub.get("built")),
        chunks=int(pub.get("chunks", 0)),
        tables=int(pub.get("tables", 0)),
        embedded=int(emb.get("embedded", 0)),
        cache_hits=int(emb.get("cache_hits", 0)),
        embedded_chunk_ids=list(emb.get("embedded_chunk_ids") or []),
        checks_failed=failed,
        error=f"asset checks failed: {failed}" if failed else "",
        tenant=str(src.get("tenant") or ""),
        schema_version=str(live.get("version") or ""),
    )


def build_databases(
    dbs: list[str],
    data: Path,
    artifacts: str | Path,
    progress: Callable[[str], None] | None = None,
    embedding_model: EmbeddingModel | None = None,
    instance: dg.DagsterInstance | None = None,
    tenant: str | None = None,
    datasources: Path | None = None,
    jobs: int = 1,
    schema_partitions_from: int = DEFAULT_SCHEMA_PARTITION_COLUMNS,
) -> list[BuildReport]:
    """Build each database as one ``build_index`` run of its partition; reports in ``dbs`` order.

    ``artifacts`` is a folder or an object-store URI (``s3://bucket/prefix``). ``tenant``
    publishes under ``<artifacts>/_tenants/<tenant>/`` and limits live snapshots to that
    tenant's datasources; ``datasources`` is the datasources file (default: the usual one).
    ``instance`` defaults to the persistent one (:func:`default_instance`); ``jobs > 1`` runs
    up to that many partitions at once on the multiprocess executor and needs a persistent one.
    With ``jobs > 1`` the embedding of each database with two or more schemas and at least
    ``schema_partitions_from`` columns (0: none) first fans out by schema
    (:mod:`schemarag.pipelines.schema_fanout`); its own run then finds the vectors cached.
    """
    index_paths = IndexPaths(
        data=str(data),
        artifacts=str(artifacts),
        tenant=tenant,
        datasources=str(datasources) if datasources else None,
    )
    model = embedding_model or EmbeddingModel()
    inst = instance or default_instance(str(artifacts), tenant)
    if jobs > 1:
        from schemarag.pipelines.schema_fanout import embed_schemas_in_parallel

        embed_schemas_in_parallel(dbs, index_paths, model, inst, jobs, schema_partitions_from, progress)
    if jobs > 1 and len(dbs) > 1:
        from schemarag.pipelines.fanout import build_in_parallel

        return build_in_parallel(dbs, index_paths, model, inst, jobs, progress)
    reports = []
    for i, db in enumerate(dbs, 1):
        if progress:
            progress(
                f"[{i}/{len(dbs)}] {db}: materializing live_schema_snapshot -> source_snapshot "
                "-> doc_chunks -> bm25_statistics -> chunk_embeddings -> published_index"
            )
        reports.append(materialize_database(db, index_paths, model, inst))
    return reports
