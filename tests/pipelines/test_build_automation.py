"""Sensor, schedule and asset checks, run against a real (temporary) Dagster instance."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from schemarag.assets.published_index import CHECKS
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.automation import daily_index_build, docs_changed_sensor

SAMPLES = ["b2b_saas", "ecommerce"]


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as inst:
        yield inst


def _tick(instance: dg.DagsterInstance, data: Path, artifacts: Path, cursor: str | None) -> dg.SensorResult:
    ctx = dg.build_sensor_context(
        instance=instance,
        cursor=cursor,
        resources={
            "index_paths": IndexPaths(data=str(data), artifacts=str(artifacts)),
            "embedding_model": EmbeddingModel(),
        },
    )
    result = docs_changed_sensor(ctx)
    assert isinstance(result, dg.SensorResult)
    # what the sensor daemon does with the result: register new partitions
    for req in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    return result


def test_sensor_requests_only_changed_databases(
    instance, data_copy: Path, tmp_path: Path, append_note
) -> None:
    artifacts = tmp_path / "artifacts"
    first = _tick(instance, data_copy, artifacts, None)
    assert sorted(r.partition_key for r in first.run_requests) == SAMPLES
    (add,) = first.dynamic_partitions_requests
    assert add.partitions_def_name == "databases" and sorted(add.partition_keys) == SAMPLES
    assert sorted(instance.get_dynamic_partitions("databases")) == SAMPLES
    assert sorted(json.loads(first.cursor)) == SAMPLES

    second = _tick(instance, data_copy, artifacts, first.cursor)
    assert second.run_requests == [] and not second.dynamic_partitions_requests
    assert second.cursor == first.cursor

    append_note(data_copy, "ecommerce", "products", "- Discontinued products keep their rows.")
    third = _tick(instance, data_copy, artifacts, second.cursor)
    assert [r.partition_key for r in third.run_requests] == ["ecommerce"]
    assert third.run_requests[0].run_key.startswith("ecommerce-")
    assert json.loads(third.cursor)["b2b_saas"] == json.loads(first.cursor)["b2b_saas"]
    assert not third.dynamic_partitions_requests


def test_sensor_skips_a_broken_database_and_keeps_going(instance, data_copy: Path, tmp_path: Path) -> None:
    (data_copy / "b2b_saas.json").write_text("{ not json")
    result = _tick(instance, data_copy, tmp_path / "artifacts", None)
    assert [r.partition_key for r in result.run_requests] == ["ecommerce"]
    assert sorted(json.loads(result.cursor)) == ["ecommerce"]


def test_schedule_yields_one_run_request_per_partition(instance) -> None:
    instance.add_dynamic_partitions("databases", SAMPLES)
    when = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)
    ctx = dg.build_schedule_context(instance=instance, scheduled_execution_time=when)
    requests = list(daily_index_build(ctx))
    assert sorted(r.partition_key for r in requests) == SAMPLES
    assert sorted(r.run_key for r in requests) == ["20260301-b2b_saas", "20260301-ecommerce"]


def test_asset_checks_are_recorded_as_check_results_of_the_run(instance, data_copy: Path, build) -> None:
    from schemarag.pipelines.build import build_databases

    (report,) = build_databases(["ecommerce"], data_copy, build.artifacts, instance=instance)
    assert report.ok and not report.checks_failed
    (run,) = instance.get_runs(limit=1)
    assert run.tags.get("dagster/partition") == "ecommerce"
    records = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    evaluations = {r.dagster_event.event_specific_data.check_name: r.dagster_event for r in records}
    assert set(evaluations) == {name for name, _ in CHECKS}
    for event in evaluations.values():
        data = event.event_specific_data
        assert data.passed and data.asset_key == dg.AssetKey("published_index")
        assert data.metadata["detail"].value


def test_asset_check_catches_a_chunk_whose_table_is_gone(built_artifacts: Path, tmp_path: Path) -> None:
    """The checks read the published files: an artifact whose table list lost a table (checksums
    re-signed, so only the invariant can catch it) fails exactly one check."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from schemarag.assets.lib.artifact_store import read_current
    from schemarag.assets.published_index import check_published
    from schemarag.runtime.artifact.format import MANIFEST, sha256_file

    root = built_artifacts / "ecommerce"
    art_dir = tmp_path / "ecommerce"
    shutil.copytree(root / read_current(root), art_dir)
    tables_file = art_dir / "tables.parquet"
    table = pq.read_table(tables_file)
    pq.write_table(table.filter(pc.not_equal(table["name"], "products")), tables_file)
    manifest = json.loads((art_dir / MANIFEST).read_text())
    size = tables_file.stat().st_size
    manifest["files"]["tables.parquet"] = {"sha256": sha256_file(tables_file), "bytes": size}
    manifest["counts"]["tables"] -= 1  # consistent counts: only the dangling chunks remain
    (art_dir / MANIFEST).write_text(json.dumps(manifest))

    results, _ = check_published(art_dir)
    failed = {name: detail for name, (passed, detail) in results.items() if not passed}
    assert failed == {"chunk_tables_exist": "unknown tables: ['products']"}
