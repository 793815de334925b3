"""``schemarag build --jobs N``: partitions fanned out to processes on Dagster's multiprocess executor.

Dagster's unit of partition parallelism is the run (a backfill is one run per partition), so
``N`` worker processes each orchestrate ``build_index`` runs for one database at a time; each
run uses the multiprocess executor, so every step runs in its own child process and hands its
output to the next through a filesystem IO manager. That is the same contract the Kubernetes
and Celery executors need (steps in separate pods/workers, intermediates through an IO
manager), so a build that works here works there (docs/scale-out.md).

Intermediates go to a per-run temporary folder under the system temp dir, deleted when the run
ends: two tenants' ``shop`` never share a pickle, and nothing lands in the working tree. Run
config (not code) carries the paths, so the runs in the UI show exactly how they were launched.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import dagster as dg

from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.runs import QUIET, BuildReport, add_partitions, index_job, run_tags, summarize
from schemarag.runtime.core.errors import ConfigError

DEFINITIONS_MODULE = "schemarag.pipelines.definitions"
T = TypeVar("T")
R = TypeVar("R")


def reconstruct_index_job() -> dg.JobDefinition:
    """``build_index`` with resources configured from run config (what ``reconstructable`` loads)."""
    return index_job(
        {
            "index_paths": IndexPaths(),
            "embedding_model": EmbeddingModel(),
            "io_manager": dg.FilesystemIOManager(),
        }
    )


def run_config(paths: dict[str, Any], model: dict[str, Any], base_dir: str) -> dict[str, Any]:
    """The run config of one partition's run: resources, IO manager folder, multiprocess executor."""
    return {
        **QUIET,
        "resources": {
            "index_paths": {"config": paths},
            "embedding_model": {"config": model},
            "io_manager": {"config": {"base_dir": base_dir}},
        },
        "execution": {
            "config": {
                "multiprocess": {
                    # the steps of one database form a chain; databases are the parallel axis
                    "max_concurrent": 1,
                    # steps fork from a server that has already imported the definitions
                    "start_method": {"forkserver": {"preload_modules": [DEFINITIONS_MODULE]}},
                }
            }
        },
    }


@contextmanager
def partition_run(
    job: Callable[[], dg.JobDefinition],
    instance_ref: Any,
    paths: dict[str, Any],
    model: dict[str, Any],
    tags: dict[str, str],
) -> Iterator[dg.ExecuteJobResult]:
    """One run of the job ``job`` (a module-level factory, so ``reconstructable`` can load it
    in step processes) in this worker process, on the multiprocess executor, with its
    intermediates in a temporary folder that lives as long as the caller reads the result."""
    with (
        dg.DagsterInstance.from_ref(instance_ref) as instance,
        tempfile.TemporaryDirectory(prefix="schemarag-run-") as tmp,
    ):
        yield dg.execute_job(
            dg.reconstructable(job), instance=instance, run_config=run_config(paths, model, tmp), tags=tags
        )


def run_partition(instance_ref: Any, db: str, paths: dict[str, Any], model: dict[str, Any]) -> BuildReport:
    """One ``build_index`` run for ``db`` in this (worker) process; its summary.

    Resources travel as their config dicts (resource objects do not pickle).
    """
    index_paths = IndexPaths(**paths)
    tags = {**run_tags(db, index_paths), "dagster/partition": db}
    with partition_run(reconstruct_index_job, instance_ref, paths, model, tags) as result:
        return summarize(db, result, index_paths)


def require_persistent(instance: dg.DagsterInstance) -> None:
    """Runs in other processes record into the instance: an in-memory one cannot be shared."""
    if instance.is_ephemeral:
        raise ConfigError(
            "--jobs > 1 runs partitions in separate processes, which need a persistent Dagster "
            "instance: unset the ephemeral instance or set DAGSTER_HOME"
        )


def in_workers(
    run: Callable[[Any, T, dict[str, Any], dict[str, Any]], R],
    instance: dg.DagsterInstance,
    items: list[T],
    paths: dict[str, Any],
    model: dict[str, Any],
    workers: int,
) -> list[R]:
    """``run(instance_ref, item, paths, model)`` for every item on ``workers`` spawned worker
    processes (a fresh interpreter each: no forked ONNX/BLAS thread state from this process);
    results in ``items`` order."""
    ref = instance.get_ref()
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = [pool.submit(run, ref, item, paths, model) for item in items]
        return [f.result() for f in futures]


def build_in_parallel(
    dbs: list[str],
    index_paths: IndexPaths,
    embedding_model: EmbeddingModel,
    instance: dg.DagsterInstance,
    jobs: int,
    progress: Callable[[str], None] | None = None,
) -> list[BuildReport]:
    """Up to ``jobs`` partitions at once, each a run in a worker process; reports in ``dbs`` order."""
    require_persistent(instance)
    add_partitions(instance, dbs)
    workers = min(jobs, len(dbs))
    if progress:
        progress(f"{len(dbs)} partition(s) on {workers} worker process(es), multiprocess executor")
    paths = index_paths.model_dump(exclude_none=True)
    model = embedding_model.model_dump(exclude_none=True)
    return in_workers(run_partition, instance, dbs, paths, model, workers)
