"""In-process builds with Dagster's ``materialize``: what ``schemarag build`` and the tests run.

Each database is its own partition and its own run, so one broken database fails alone while
the others publish. Runs go to the instance at ``$DAGSTER_HOME`` when set (so they show in the
UI), else to an ephemeral one.
"""

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.definitions import INDEX_ASSETS

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


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


def default_instance() -> dg.DagsterInstance:
    return dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral()


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    for ev in result.get_asset_materialization_events():
        mat = ev.event_specific_data.materialization
        if mat.asset_key.to_user_string() == asset:
            return {k: v.value for k, v in mat.metadata.items()}
    return {}


def _error(result: dg.ExecuteInProcessResult) -> str:
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
    """Materialize the whole asset graph for one partition and summarise it."""
    if db not in instance.get_dynamic_partitions(databases_partitions.name):
        instance.add_dynamic_partitions(databases_partitions.name, [db])
    result = dg.materialize(
        INDEX_ASSETS,
        partition_key=db,
        instance=instance,
        raise_on_error=False,
        run_config=QUIET,
        # In memory: the whole graph runs in this process, and two runs of one partition name
        # (two tenants' "shop") must never read each other's pickled intermediate values.
        resources={
            "index_paths": index_paths,
            "embedding_model": embedding_model,
            "io_manager": dg.mem_io_manager,
        },
        tags={"schemarag/tenant": index_paths.tenant} if index_paths.tenant else None,
    )
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
    artifacts: Path,
    progress: Callable[[str], None] | None = None,
    embedding_model: EmbeddingModel | None = None,
    instance: dg.DagsterInstance | None = None,
    tenant: str | None = None,
    datasources: Path | None = None,
) -> list[BuildReport]:
    """Build each database in turn (one Dagster run per partition).

    ``tenant`` publishes under ``<artifacts>/_tenants/<tenant>/`` and limits live snapshots to
    that tenant's datasources; ``datasources`` is the datasources file (default: the usual one).
    """
    index_paths = IndexPaths(
        data=str(data),
        artifacts=str(artifacts),
        tenant=tenant,
        datasources=str(datasources) if datasources else None,
    )
    model = embedding_model or EmbeddingModel()
    inst = instance or default_instance()
    reports = []
    for i, db in enumerate(dbs, 1):
        if progress:
            progress(
                f"[{i}/{len(dbs)}] {db}: materializing live_schema_snapshot -> source_snapshot "
                "-> doc_chunks -> bm25_statistics -> chunk_embeddings -> published_index"
            )
        reports.append(materialize_database(db, index_paths, model, inst))
    return reports
