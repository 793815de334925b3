"""Builds as Dagster runs of the ``build_index`` job: what ``schemarag build`` and the tests run.

Each database is its own partition and its own run, so one broken database fails alone while
the others publish. Runs, materializations (chunk counts, content key, timings) and asset-check
results are recorded in a persistent instance (``$DAGSTER_HOME``, else ``.dagster/`` next to the
artifacts: :mod:`schemarag.pipelines.instance`), which ``schemarag ui`` opens.

``jobs=1`` runs each partition in this process with in-memory intermediates (a tenant's values
never touch disk); ``jobs>1`` fans partitions out to worker processes on Dagster's multiprocess
executor (:mod:`schemarag.pipelines.fanout`). What every run shares (the job, its tags, the
:class:`~schemarag.pipelines.runs.BuildReport` read from it) is :mod:`schemarag.pipelines.runs`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import dagster as dg

from schemarag.assets.lib.embed_shards import DEFAULT_SCHEMA_PARTITION_COLUMNS
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.fanout import build_in_parallel
from schemarag.pipelines.instance import dagster_home, open_instance
from schemarag.pipelines.runs import QUIET, BuildReport, add_partitions, index_job, run_tags, summarize
from schemarag.pipelines.schema_fanout import embed_schemas_in_parallel


def default_instance(artifacts: str | Path | None = None, tenant: str | None = None) -> dg.DagsterInstance:
    """The persistent instance builds into ``artifacts`` (for ``tenant``) record their runs in."""
    return open_instance(dagster_home(artifacts, tenant))


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
        embed_schemas_in_parallel(dbs, index_paths, model, inst, jobs, schema_partitions_from, progress)
    if jobs > 1 and len(dbs) > 1:
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
