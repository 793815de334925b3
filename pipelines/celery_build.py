"""``schemarag build --executor celery``: every step of every run a task on a Celery worker.

The runs are the usual ones (``embed_schema`` per ``<db>/<schema>`` of a big database first,
then ``build_index`` per database) from the Celery code location
(:mod:`schemarag.pipelines.celery_definitions`). When a ``dagster-daemon`` serves the instance's
run queue, the runs are created against that code location and queued; the daemon launches them
(``max_concurrent_runs`` at once). Otherwise each run is orchestrated from a spawned process here,
up to ``jobs`` at once. An orchestrator only submits steps to the broker and waits: the steps run
on whichever ``schemarag worker`` takes them, and values cross between them through S3 under
``<intermediates>/<launch id>/`` (deleted when the run ends). The artifacts location should be an
object store (``s3://...``): each worker builds in its own local copy and publishes there.

Settings the workers must share with the runs (broker, queue) come from the same environment
variables ``schemarag worker`` reads (:mod:`schemarag.pipelines.celery_app`).
"""

from __future__ import annotations

import multiprocessing
import os
import time
import uuid
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import dagster as dg

from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines import celery_definitions
from schemarag.pipelines.celery_app import backend_url, broker_url, queue_name
from schemarag.pipelines.fanout import require_persistent
from schemarag.pipelines.runs import BuildReport, add_partitions, run_error, run_metadata, run_tags, summarize
from schemarag.pipelines.schema_fanout import SchemaReport, schema_partition_keys
from schemarag.runtime.artifact.remote import is_remote
from schemarag.runtime.core.errors import ConfigError

LAUNCH_TAG = "schemarag/launch"  # finds a run started by a spawned orchestrator
HEARTBEAT_SECONDS = 30.0
DAEMON_FRESH_SECONDS = 60.0  # a daemon heartbeats every few seconds


@dataclass
class CelerySettings:
    """Where steps are sent and where they leave their outputs (see the module doc)."""

    intermediates: str  # s3://bucket/prefix
    broker: str = field(default_factory=broker_url)
    backend: str = field(default_factory=backend_url)
    queue: str = field(default_factory=queue_name)
    lost_worker_seconds: int | None = None

    @classmethod
    def from_env(cls, intermediates: str | None, broker: str | None = None) -> CelerySettings:
        where = intermediates or os.environ.get("SCHEMARAG_INTERMEDIATES")
        if not where:
            raise ConfigError(
                "--executor celery needs --intermediates s3://bucket/prefix (or $SCHEMARAG_INTERMEDIATES): "
                "where steps on different workers hand values to each other"
            )
        parts = urlsplit(where)
        if parts.scheme != "s3" or not parts.netloc:
            raise ConfigError(f"--intermediates {where!r}: expected s3://bucket[/prefix]")
        lost = os.environ.get("SCHEMARAG_CELERY_LOST_WORKER_SECONDS") or None
        if lost is not None and not (lost.isdigit() and int(lost) > 0):
            raise ConfigError(f"SCHEMARAG_CELERY_LOST_WORKER_SECONDS={lost!r}: expected whole seconds > 0")
        settings = cls(intermediates=where, lost_worker_seconds=int(lost) if lost else None)
        if broker:
            settings.broker = broker
            settings.backend = os.environ.get("SCHEMARAG_CELERY_BACKEND") or broker
        return settings

    def bucket_and_prefix(self) -> tuple[str, str]:
        parts = urlsplit(self.intermediates)
        return parts.netloc, parts.path.strip("/")


@dataclass
class CeleryRun:
    """One finished run: its summary and which worker ran each step."""

    partition: str
    run_id: str
    ok: bool
    error: str = ""
    steps: dict[str, str] = field(default_factory=dict)  # step key -> worker hostname
    report: BuildReport | SchemaReport | None = None


def step_workers(instance: dg.DagsterInstance, run_id: str) -> dict[str, str]:
    """``{step key: Celery worker}`` from the run's "Executing steps ... in celery worker" events."""
    out: dict[str, str] = {}
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = entry.dagster_event
        meta = (getattr(event.event_specific_data, "metadata", None) if event else None) or {}
        if "Celery worker" in meta and event and event.step_key:
            out[event.step_key] = str(meta["Celery worker"].value)
    return out


def celery_run_error(result: dg.JobExecutionResult) -> str:
    """One line: the failed step's error, else the run's (a lost worker fails the run, not a step)."""
    first = run_error(result)
    if first != "build failed":
        return first
    for event in result.all_events:
        if event.event_type == dg.DagsterEventType.RUN_FAILURE:
            err = getattr(event.event_specific_data, "error", None)
            text = (err.message if err else event.message) or "run failed"
            lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
            detail = next((ln for ln in lines if ln.startswith("[")), lines[-1] if lines else "run failed")
            return detail.replace("celery.exceptions.WorkerLostError: ", "")
    return first


def _s3_options() -> tuple[str | None, str | None]:
    """The S3 endpoint and region the IO manager's client uses, as ``pyarrow.fs`` reads them."""
    env = os.environ
    names = ("SCHEMARAG_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
    endpoint = next((env[n] for n in names if env.get(n)), None)
    return endpoint, env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")


def _delete_prefix(bucket: str, prefix: str) -> None:
    """Drop one run's intermediates (best effort: the bucket's lifecycle rules catch the rest)."""
    import pyarrow as pa

    from schemarag.runtime.artifact.remote import filesystem

    try:
        fs, _ = filesystem(f"s3://{bucket}")
        fs.delete_dir(f"{bucket}/{prefix}")
    except (OSError, pa.ArrowException):
        pass


@dataclass
class RunSpec:
    """One run to launch: its job, partition, run config, tags and intermediates prefix."""

    kind: str  # "index" (build_index) or "schema" (embed_schema)
    partition: str
    config: dict[str, Any]
    tags: dict[str, str]
    bucket: str
    prefix: str

    @property
    def job_name(self) -> str:
        return celery_definitions.build_index_job.name if self.kind == "index" else "embed_schema"


def run_spec(
    kind: str, partition: str, paths: dict[str, Any], model: dict[str, Any], settings: CelerySettings
) -> RunSpec:
    launch = uuid.uuid4().hex[:12]
    bucket, base = settings.bucket_and_prefix()
    prefix = f"{base}/{launch}".strip("/")
    endpoint, region = _s3_options()
    config = celery_definitions.run_config(
        paths=paths,
        model=model,
        broker=settings.broker,
        backend=settings.backend,
        io_bucket=bucket,
        io_prefix=prefix,
        queue=settings.queue,
        s3_endpoint=endpoint,
        s3_region=region,
        lost_worker_seconds=settings.lost_worker_seconds,
    )
    db = partition.split("/", 1)[0]
    tags = {**run_tags(db, IndexPaths(**paths)), "dagster/partition": partition, LAUNCH_TAG: launch}
    if kind == "schema":
        tags["schemarag/schema"] = partition.split("/", 1)[1]
    return RunSpec(kind, partition, config, tags, bucket, prefix)


def summarize_run(spec: RunSpec, result: Any, steps: dict[str, str], paths: dict[str, Any]) -> CeleryRun:
    """A finished run (a ``JobExecutionResult`` or a :class:`StoredRun`) as a :class:`CeleryRun`."""
    if spec.kind == "index":
        report: BuildReport | SchemaReport = summarize(spec.partition, result, IndexPaths(**paths))
        if not result.success:
            report.error = celery_run_error(result)
        return CeleryRun(spec.partition, result.run_id, report.ok, report.error, steps, report)
    meta = run_metadata(result, "schema_embeddings") if result.success else {}
    error = "" if result.success else celery_run_error(result)
    report = SchemaReport(
        partition=spec.partition,
        ok=result.success,
        embedded=int(meta.get("embedded", 0)),
        cache_hits=int(meta.get("cache_hits", 0)),
        error=error,
    )
    return CeleryRun(spec.partition, result.run_id, result.success, error, steps, report)


def run_on_celery(spec: RunSpec, instance_ref: Any, paths: dict[str, Any]) -> CeleryRun:
    """One run orchestrated in this (spawned) process: ``execute_job``, steps on the workers."""
    job = celery_definitions.index_job if spec.kind == "index" else celery_definitions.schema_job
    with dg.DagsterInstance.from_ref(instance_ref) as instance:
        try:
            result = dg.execute_job(
                dg.reconstructable(job), instance=instance, run_config=spec.config, tags=spec.tags
            )
        finally:
            _delete_prefix(spec.bucket, spec.prefix)
        return summarize_run(spec, result, step_workers(instance, result.run_id), paths)


class StoredRun:
    """A finished run read back from the instance, with what :func:`summarize` reads of a result."""

    def __init__(self, instance: dg.DagsterInstance, run_id: str) -> None:
        run = instance.get_run_by_id(run_id)
        self.run_id = run_id
        self.success = run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        self.all_events = [e.dagster_event for e in instance.all_logs(run_id) if e.dagster_event is not None]

    def get_asset_materialization_events(self) -> list:
        return [e for e in self.all_events if e.event_type == dg.DagsterEventType.ASSET_MATERIALIZATION]

    def get_asset_check_evaluations(self) -> list:
        kind = dg.DagsterEventType.ASSET_CHECK_EVALUATION
        return [e.event_specific_data for e in self.all_events if e.event_type == kind]


def queued(instance: dg.DagsterInstance) -> bool:
    """True when runs should go through the instance's run queue: it has a ``QueuedRunCoordinator``
    (Dagster's default) and a ``dagster-daemon`` for it heartbeats; else they run from here."""
    from dagster._core.run_coordinator import QueuedRunCoordinator

    if not isinstance(instance.run_coordinator, QueuedRunCoordinator):
        return False
    beat = instance.get_daemon_heartbeats().get("QUEUED_RUN_COORDINATOR")
    return beat is not None and time.time() - beat.timestamp < DAEMON_FRESH_SECONDS


def submit_queued(
    specs: list[RunSpec],
    instance: dg.DagsterInstance,
    paths: dict[str, Any],
    progress: Callable[[str], None] | None,
    started: float,
) -> list[CeleryRun]:
    """Create every run against the Celery code location and put it in the instance's run queue;
    the daemon launches them (``max_concurrent_runs`` at once). Waits for all; results in order.

    Runs are created as ``dagster job launch`` creates them (``dagster._cli.job._create_run``:
    private, stable under the exact dagster pin), so the daemon finds their code location."""
    from dagster import __version__
    from dagster._cli.job import _create_run
    from dagster._cli.workspace.cli_target import (
        WorkspaceOpts,
        get_code_location_from_workspace,
        get_remote_job_from_remote_repo,
        get_remote_repository_from_code_location,
        get_workspace_from_cli_opts,
    )

    opts = WorkspaceOpts(module_name=(celery_definitions.MODULE,))
    run_ids: dict[str, RunSpec] = {}
    with get_workspace_from_cli_opts(instance, version=__version__, workspace_opts=opts) as workspace:
        location = get_code_location_from_workspace(workspace, None)
        repo = get_remote_repository_from_code_location(location, None)
        for spec in specs:
            remote_job = get_remote_job_from_remote_repo(repo, spec.job_name)
            run = _create_run(
                instance=instance,
                code_location=location,
                remote_repo=repo,
                remote_job=remote_job,
                run_config=spec.config,
                tags=spec.tags,
                op_selection=None,
                run_id=None,
            )
            instance.submit_run(run.run_id, workspace)
            run_ids[run.run_id] = spec
    if progress:
        progress(f"{len(specs)} run(s) queued for the dagster-daemon")
    done: dict[str, CeleryRun] = {}
    last_beat = time.perf_counter()
    while len(done) < len(run_ids):
        for run_id, spec in run_ids.items():
            run = instance.get_run_by_id(run_id)
            if run_id in done or run is None or not run.is_finished:
                continue
            _delete_prefix(spec.bucket, spec.prefix)
            done[run_id] = summarize_run(
                spec, StoredRun(instance, run_id), step_workers(instance, run_id), paths
            )
            _report(progress, len(done), len(run_ids), done[run_id], started)
        if len(done) < len(run_ids):
            if progress and time.perf_counter() - last_beat > HEARTBEAT_SECONDS:
                last_beat = time.perf_counter()
                progress(
                    _running(instance, started, [s.partition for r, s in run_ids.items() if r not in done])
                )
            time.sleep(1)
    return [done[r] for r in run_ids]


def _report(progress: Callable[[str], None] | None, i: int, n: int, run: CeleryRun, started: float) -> None:
    if progress:
        where = ", ".join(sorted(set(run.steps.values()))) or "no worker"
        state = "ok" if run.ok else f"FAILED: {run.error}"
        progress(
            f"[{i}/{n}] {run.partition}: {state} "
            f"({len(run.steps)} steps on {where}, {time.perf_counter() - started:.0f} s)"
        )


def _running(instance: dg.DagsterInstance, started: float, partitions: list[str]) -> str:
    parts = []
    for partition in partitions:
        runs = instance.get_runs(
            dg.RunsFilter(tags={"dagster/partition": partition}, statuses=[dg.DagsterRunStatus.STARTED]),
            limit=1,
        )
        steps = step_workers(instance, runs[0].run_id) if runs else {}
        last = f" ({list(steps)[-1]} on {list(steps.values())[-1]})" if steps else " (queued)"
        parts.append(f"{partition}{last}")
    return f"... {time.perf_counter() - started:.0f} s, running: {', '.join(parts)}"


def run_all(
    kind: str,
    partitions: list[str],
    instance: dg.DagsterInstance,
    paths: dict[str, Any],
    model: dict[str, Any],
    settings: CelerySettings,
    jobs: int,
    progress: Callable[[str], None] | None = None,
) -> list[CeleryRun]:
    """Every partition's run; results in ``partitions`` order. Through the instance's run queue
    when it has one (the daemon launches them), else up to ``jobs`` orchestrators at once here."""
    specs = [run_spec(kind, p, paths, model, settings) for p in partitions]
    started = time.perf_counter()
    if queued(instance):
        return submit_queued(specs, instance, paths, progress, started)
    if progress:
        progress(
            f"no dagster-daemon for this instance: {len(specs)} run(s) orchestrated here, {jobs} at once"
        )
    ref = instance.get_ref()
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(specs))), mp_context=ctx) as pool:
        futures = {pool.submit(run_on_celery, spec, ref, paths): spec.partition for spec in specs}
        pending = dict(futures)
        while pending:
            finished, _ = wait(pending, timeout=HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED)
            if not finished and progress:
                progress(_running(instance, started, list(pending.values())))
            for fut in finished:
                pending.pop(fut)
                _report(progress, len(futures) - len(pending), len(futures), fut.result(), started)
        return [fut.result() for fut in futures]


def build_with_celery(
    dbs: list[str],
    index_paths: IndexPaths,
    embedding_model: EmbeddingModel,
    instance: dg.DagsterInstance,
    settings: CelerySettings,
    jobs: int = 2,
    schema_partitions_from: int = 0,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[BuildReport], list[CeleryRun]]:
    """The build of ``dbs`` on Celery workers: reports in ``dbs`` order, and every run."""
    require_persistent(instance)
    if not is_remote(index_paths.artifacts) and progress:
        progress(
            f"note: artifacts {index_paths.artifacts or 'artifacts'} is a local folder: workers on "
            "other machines need it on a shared volume (or use s3://...)"
        )
    embedder = embedding_model.embedder()
    tier = embedding_model.column_tier()
    # Pin what workers would otherwise read from their own environment: one model, one tier.
    model = {**embedding_model.model_dump(exclude_none=True), "model_name": embedder.spec.name}
    model["column_vectors"] = tier
    paths = index_paths.model_dump(exclude_none=True)
    runs: list[CeleryRun] = []
    keys = schema_partition_keys(dbs, index_paths, embedder.identity, schema_partitions_from, tier)
    if keys:
        known = set(instance.get_dynamic_partitions("database_schemas"))
        if new := [k for k in keys if k not in known]:
            instance.add_dynamic_partitions("database_schemas", new)
        if progress:
            progress(f"{len(keys)} embed_schema run(s) on Celery: {', '.join(keys)}")
        runs += run_all("schema", keys, instance, paths, model, settings, jobs, progress)
    add_partitions(instance, dbs)
    if progress:
        progress(f"{len(dbs)} build_index run(s) on Celery (queue {settings.queue})")
    built = run_all("index", dbs, instance, paths, model, settings, jobs, progress)
    runs += built
    return [r.report for r in built if isinstance(r.report, BuildReport)], runs
