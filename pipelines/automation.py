"""When builds happen: a daily schedule for every database, and a sensor for changed ones.

The sensor computes each database's artifact key (a hash of its schema, docs and build
parameters: cheap, no model loading) and requests a run only for databases whose key differs
from the last one it saw; new ``<db>.json`` files become new partitions.
"""

import json

import dagster as dg

from assets.partitions import databases_partitions
from assets.resources import EmbeddingModel, IndexPaths
from assets.source_snapshot import read_sources
from pipelines.jobs import build_index_job
from runtime.errors import SchemaragError
from runtime.paths import list_databases


@dg.schedule(cron_schedule="0 3 * * *", job=build_index_job, default_status=dg.DefaultScheduleStatus.STOPPED)
def daily_index_build(context: dg.ScheduleEvaluationContext):
    """Rebuild every known database daily (a no-op where nothing changed)."""
    for db in context.instance.get_dynamic_partitions(databases_partitions.name):
        yield dg.RunRequest(run_key=f"{context.scheduled_execution_time:%Y%m%d}-{db}", partition_key=db)


def changed_databases(
    index_paths: IndexPaths, embedding_model: EmbeddingModel, seen: dict[str, str]
) -> tuple[dict[str, str], list[str], list[str]]:
    """``(new keys, changed dbs, errors)`` comparing current input keys with ``seen``."""
    model = embedding_model.embedder().identity
    keys: dict[str, str] = {}
    changed, errors = [], []
    for db in list_databases(index_paths.data_path()):
        try:
            snap = read_sources(index_paths.data_path(), db, model, index_paths.artifacts_path())
        except SchemaragError as exc:
            errors.append(str(exc))
            continue
        keys[db] = snap.key
        if seen.get(db) != snap.key:
            changed.append(db)
    return keys, changed, errors


@dg.sensor(job=build_index_job, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.STOPPED)
def docs_changed_sensor(
    context: dg.SensorEvaluationContext, index_paths: IndexPaths, embedding_model: EmbeddingModel
) -> dg.SensorResult:
    """Request a build for each database whose docs or schema changed since the last tick."""
    seen = json.loads(context.cursor) if context.cursor else {}
    keys, changed, errors = changed_databases(index_paths, embedding_model, seen)
    for err in errors:
        context.log.warning(err)
    known = set(context.instance.get_dynamic_partitions(databases_partitions.name))
    new = sorted(set(keys) - known)
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"{db}-{keys[db]}", partition_key=db) for db in changed],
        dynamic_partitions_requests=[databases_partitions.build_add_request(new)] if new else [],
        cursor=json.dumps(keys, sort_keys=True),
    )
