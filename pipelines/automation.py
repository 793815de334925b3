"""When builds happen: a daily schedule for every database, and sensors for changed ones.

``docs_changed_sensor`` computes each database's artifact key (a hash of its schema, docs and
build parameters: cheap, no model loading) and requests a run only for databases whose key
differs from the last one it saw; new ``<db>.json`` files become new partitions.

``datasource_snapshot_sensor`` re-snapshots every configured live datasource and requests a
run only for those whose structural fingerprint differs from the snapshot on disk; the run's
``live_schema_snapshot`` step then writes the new JSON and docs. One unreachable datasource
is logged and skipped, never blocking the others.
"""

import json

import dagster as dg

from schemarag.assets.lib.datasources.config import DatasourceEntry, load_datasources
from schemarag.assets.lib.datasources.docs_init import snapshot_changed
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.assets.source_snapshot import read_sources
from schemarag.pipelines.jobs import build_index_job
from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.core.paths import list_databases


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
            snap = read_sources(
                index_paths.data_path(),
                db,
                model,
                index_paths.artifacts_path(),
                column_vectors=embedding_model.column_tier(),
            )
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


def changed_datasources(
    entries: list[DatasourceEntry], index_paths: IndexPaths
) -> tuple[dict[str, str], list[str]]:
    """``({name: new fingerprint} for changed datasources, errors naming the datasource)``."""
    changed: dict[str, str] = {}
    errors: list[str] = []
    for entry in entries:
        try:
            is_changed, snap = snapshot_changed(entry, index_paths.data_path())
        except SchemaragError as exc:  # DatasourceError, or ConfigError for an unset env:VAR
            errors.append(f"datasource {entry.name!r} (tenant {entry.tenant}) skipped: {exc}")
            continue
        if is_changed:
            changed[entry.name] = snap.fingerprint
    return changed, errors


@dg.sensor(job=build_index_job, minimum_interval_seconds=300, default_status=dg.DefaultSensorStatus.STOPPED)
def datasource_snapshot_sensor(context: dg.SensorEvaluationContext, index_paths: IndexPaths):
    """Rebuild each configured live datasource whose schema fingerprint changed."""
    path = index_paths.datasources_path()
    if not path.is_file():
        return dg.SkipReason(f"{path}: no datasources file; nothing to snapshot")
    try:
        entries = load_datasources(path)
    except SchemaragError as exc:
        return dg.SkipReason(str(exc))
    changed, errors = changed_datasources(entries, index_paths)
    for err in errors:
        context.log.warning(err)
    if not changed:
        return dg.SkipReason(f"{len(entries)} datasource(s) checked, none changed ({len(errors)} failed)")
    known = set(context.instance.get_dynamic_partitions(databases_partitions.name))
    new = sorted(set(changed) - known)
    return dg.SensorResult(
        # the run key dedupes: a change already requested is not requested again on the next tick
        run_requests=[
            dg.RunRequest(run_key=f"live-{name}-{fp[:16]}", partition_key=name, tags={"schemarag/live": name})
            for name, fp in sorted(changed.items())
        ],
        dynamic_partitions_requests=[databases_partitions.build_add_request(new)] if new else [],
    )
