"""One partition's ``build_index`` run, as every way of launching it sees it: the job bound to its
resources, the tags and dynamic partitions that make it findable, and its outcome read back as a
:class:`BuildReport`.

Its own module so the in-process build (:mod:`schemarag.pipelines.build`) and the worker-process
fan-outs (:mod:`schemarag.pipelines.fanout`, :mod:`schemarag.pipelines.schema_fanout`) share it
without importing each other: ``build`` calls the fan-outs, and nothing calls ``build`` back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import IndexPaths
from schemarag.pipelines.definitions import INDEX_ASSETS
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


def run_metadata(result: dg.ExecuteInProcessResult | dg.JobExecutionResult, asset: str) -> dict:
    """The metadata of ``asset``'s materialization in a run (empty if it was not materialized)."""
    for ev in result.get_asset_materialization_events():
        mat = ev.event_specific_data.materialization
        if mat.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in mat.metadata.items()}
    return {}


def run_error(result: dg.ExecuteInProcessResult | dg.JobExecutionResult) -> str:
    """The first failed step and its error, one line (the SchemaragError, not Dagster's wrapper)."""
    for ev in result.all_events:
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error:
            err = ev.step_failure_data.error
            while err.cause is not None and "SchemaragError" not in str(err.cls_name):
                if err.cls_name and err.cls_name.endswith("Error") and err.cause is None:
                    break
                err = err.cause
            return f"{ev.step_key}: {err.message.strip()}"
    return "build failed"


def summarize(
    db: str, result: dg.ExecuteInProcessResult | dg.JobExecutionResult, index_paths: IndexPaths
) -> BuildReport:
    """A run's outcome as a :class:`BuildReport` (picklable: worker processes return it)."""
    if not result.success:
        return BuildReport(database=db, ok=False, error=run_error(result), tenant=index_paths.tenant or "")
    pub = run_metadata(result, "published_index")
    emb = run_metadata(result, "chunk_embeddings")
    live = run_metadata(result, "live_schema_snapshot")
    src = run_metadata(result, "source_snapshot")
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
