"""The build on Celery workers: the same assets and jobs, another executor and IO manager.

``schemarag.pipelines.definitions`` runs steps in local processes; this code location runs the
same ``build_index`` and ``embed_schema`` jobs with every step a Celery task on whichever worker
takes it (:mod:`schemarag.pipelines.celery_executor`), so intermediates go through S3
(``dagster_aws``'s ``s3_pickle_io_manager``, one prefix per run) instead of a local folder. Run
config carries everything a worker needs besides its own environment (AWS credentials,
``$SCHEMARAG_S3_ENDPOINT``, ``$SCHEMARAG_CACHE_DIR``): paths, the model, broker, bucket
(:func:`run_config`), so the runs in the UI show how they were launched.

``schemarag build --executor celery`` launches these runs (:mod:`schemarag.pipelines.celery_build`);
a Dagster deployment loads ``schemarag.pipelines.celery_definitions`` as its code location.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
from dagster_aws.s3 import S3Resource, s3_pickle_io_manager

from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.celery_executor import celery_executor
from schemarag.pipelines.definitions import FANOUT_ASSETS, INDEX_ASSETS
from schemarag.pipelines.jobs import build_jobs
from schemarag.pipelines.runs import QUIET

MODULE = __name__
DEFAULT_QUEUE = "dagster"  # dagster_celery's queue; workers listen on it unless told otherwise

build_index_job, embed_schema_job = build_jobs(celery_executor, ", every step a Celery task")

defs = dg.Definitions(
    assets=[*INDEX_ASSETS, *FANOUT_ASSETS],
    jobs=[build_index_job, embed_schema_job],
    resources={
        "index_paths": IndexPaths(),
        "embedding_model": EmbeddingModel(),
        "s3": S3Resource(),  # the boto3 client the IO manager uses; endpoint and region from run config
        "io_manager": s3_pickle_io_manager,
    },
)


def index_job() -> dg.JobDefinition:
    """``build_index`` on Celery (module-level, so ``dg.reconstructable`` can load it anywhere)."""
    return defs.resolve_job_def(build_index_job.name)


def schema_job() -> dg.JobDefinition:
    """``embed_schema`` on Celery."""
    return defs.resolve_job_def(embed_schema_job.name)


def celery_settings(queue: str = DEFAULT_QUEUE) -> dict[str, Any]:
    """Celery settings the executor and every worker must share (``config_source``)."""
    return {
        "task_default_queue": queue,
        "task_track_started": True,  # the lost-worker watch needs to know where a task runs
        "broker_connection_retry_on_startup": True,
    }


def run_config(
    *,
    paths: dict[str, Any],
    model: dict[str, Any],
    broker: str,
    backend: str,
    io_bucket: str,
    io_prefix: str,
    queue: str = DEFAULT_QUEUE,
    s3_endpoint: str | None = None,
    s3_region: str | None = None,
    lost_worker_seconds: int | None = None,
) -> dict[str, Any]:
    """The run config of one run on Celery: resources, the S3 IO manager's place, the executor."""
    execution: dict[str, Any] = {
        "broker": broker,
        "backend": backend,
        "config_source": celery_settings(queue),
    }
    if lost_worker_seconds is not None:
        execution["lost_worker_seconds"] = lost_worker_seconds
    s3 = {k: v for k, v in {"endpoint_url": s3_endpoint, "region_name": s3_region}.items() if v}
    return {
        **QUIET,
        "resources": {
            "index_paths": {"config": paths},
            "embedding_model": {"config": model},
            "s3": {"config": s3},
            "io_manager": {"config": {"s3_bucket": io_bucket, "s3_prefix": io_prefix}},
        },
        "execution": {"config": execution},
    }
