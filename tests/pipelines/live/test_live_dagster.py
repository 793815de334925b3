# ruff: noqa: F811  (fixtures are imported from live_shop; see its docstring)
"""The live_schema_snapshot asset and the datasource_snapshot_sensor, with a real Dagster instance."""

from __future__ import annotations

import socket
from pathlib import Path

import dagster as dg
import pytest
import yaml
from live_shop import ADD_COLUMN_SQL, LiveDB, make_sqlite, sqlite_shop  # noqa: F401

from schemarag.assets.lib.datasources import docs_init, get_datasource
from schemarag.assets.live_schema import live_schema_snapshot
from schemarag.assets.resources import IndexPaths
from schemarag.assets.source_snapshot import source_snapshot
from schemarag.pipelines.automation import datasource_snapshot_sensor
from schemarag.pipelines.build import build_databases
from schemarag.pipelines.definitions import INDEX_ASSETS, defs


def materialize_live(paths: IndexPaths, instance: dg.DagsterInstance, db: str = "shop") -> dict:
    instance.add_dynamic_partitions("databases", [db])
    result = dg.materialize(
        [live_schema_snapshot], partition_key=db, instance=instance, resources={"index_paths": paths}
    )
    assert result.success
    [mat] = result.asset_materializations_for_node("live_schema_snapshot")
    return {k: v.value for k, v in mat.metadata.items()}


def test_definitions_wire_the_snapshot_upstream_of_the_index():
    assert INDEX_ASSETS[0] is live_schema_snapshot
    graph = defs.resolve_asset_graph()
    assert dg.AssetKey("live_schema_snapshot") in graph.get(dg.AssetKey("source_snapshot")).parent_keys
    assert defs.resolve_sensor_def("datasource_snapshot_sensor") is datasource_snapshot_sensor
    job = defs.resolve_job_def("build_index")
    assert "live_schema_snapshot" in {n.name for n in job.graph.nodes}
    assert source_snapshot in INDEX_ASSETS


def test_asset_snapshots_a_configured_datasource_and_records_the_fingerprint(sqlite_shop: LiveDB, tmp_path):
    data = tmp_path / "schemas"
    paths = IndexPaths(
        data=str(data), artifacts=str(tmp_path / "a"), datasources=str(sqlite_shop.write_datasources())
    )
    instance = dg.DagsterInstance.ephemeral()
    first = materialize_live(paths, instance)
    assert first["live"] is True and first["changed"] is True and first["tenant"] == "acme"
    assert (data / "shop.json").is_file() and first["version"].endswith(first["fingerprint"][:8])
    again = materialize_live(paths, instance)
    assert again["changed"] is False and again["version"] == first["version"]
    sqlite_shop.run(ADD_COLUMN_SQL)
    third = materialize_live(paths, instance)
    assert third["changed"] is True and third["fingerprint"] != first["fingerprint"]
    record = instance.get_latest_data_version_record(
        dg.AssetKey("live_schema_snapshot"), partition_key="shop"
    )
    assert record is not None
    assert record.asset_materialization.tags["dagster/data_version"] == third["fingerprint"]


def test_asset_is_a_noop_for_static_schemas_and_other_tenants(sqlite_shop: LiveDB, tmp_path):
    ds = str(sqlite_shop.write_datasources())
    data = tmp_path / "schemas"
    instance = dg.DagsterInstance.ephemeral()
    static = materialize_live(IndexPaths(data=str(data), datasources=ds), instance, db="ecommerce")
    assert static == {"source": "static schema file", "live": False}
    other = materialize_live(IndexPaths(data=str(data), datasources=ds, tenant="globex"), instance)
    assert other["live"] is False and not (data / "shop.json").exists()
    none = materialize_live(IndexPaths(data=str(data), datasources=str(tmp_path / "absent.yaml")), instance)
    assert none["live"] is False


def refused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def three_datasources(tmp_path: Path) -> tuple[Path, Path, LiveDB]:
    """``shop`` (already snapshotted), ``fresh`` (never snapshotted), ``down`` (refuses connections)."""
    shop = make_sqlite(_mk(tmp_path / "shop"))
    fresh = make_sqlite(_mk(tmp_path / "fresh"))
    entries = [
        {"name": "shop", "kind": "sqlite", "tenant": "acme", "connection": shop.connection},
        {"name": "fresh", "kind": "sqlite", "tenant": "globex", "connection": fresh.connection},
        {
            "name": "down",
            "kind": "postgres",
            "tenant": "acme",
            "connection": f"postgresql://127.0.0.1:{refused_port()}/x",
        },
    ]
    ds = tmp_path / "datasources.yaml"
    ds.write_text(yaml.safe_dump({"datasources": entries}), encoding="utf-8")
    data = tmp_path / "schemas"
    docs_init(get_datasource("shop", ds), data)
    return ds, data, shop


def _mk(path: Path) -> Path:
    path.mkdir()
    return path


def test_sensor_requests_runs_only_for_changed_datasources(three_datasources, tmp_path):
    ds, data, shop = three_datasources
    instance = dg.DagsterInstance.ephemeral()
    paths = IndexPaths(data=str(data), artifacts=str(tmp_path / "artifacts"), datasources=str(ds))
    ctx = dg.build_sensor_context(instance=instance, resources={"index_paths": paths})
    result = datasource_snapshot_sensor(ctx)
    # 'down' refuses connections: logged and skipped; 'shop' is unchanged; only 'fresh' is new.
    assert [r.partition_key for r in result.run_requests] == ["fresh"]
    [add] = result.dynamic_partitions_requests
    assert list(add.partition_keys) == ["fresh"]
    assert result.run_requests[0].run_key.startswith("live-fresh-")

    shop.run(ADD_COLUMN_SQL)
    instance.add_dynamic_partitions("databases", ["fresh", "shop"])
    result = datasource_snapshot_sensor(
        dg.build_sensor_context(instance=instance, resources={"index_paths": paths})
    )
    assert sorted(r.partition_key for r in result.run_requests) == ["fresh", "shop"]
    assert not result.dynamic_partitions_requests

    # The requested run rebuilds the changed datasource; after it, the sensor is quiet for it.
    [report] = build_databases(["shop"], data, tmp_path / "artifacts", datasources=ds, instance=instance)
    assert report.ok and report.built and report.tenant == "acme"
    result = datasource_snapshot_sensor(
        dg.build_sensor_context(instance=instance, resources={"index_paths": paths})
    )
    assert [r.partition_key for r in result.run_requests] == ["fresh"]


def test_sensor_skips_without_a_datasources_file(tmp_path):
    paths = IndexPaths(data=str(tmp_path), datasources=str(tmp_path / "none.yaml"))
    ctx = dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral(), resources={"index_paths": paths})
    result = datasource_snapshot_sensor(ctx)
    assert isinstance(result, dg.SkipReason) and "no datasources file" in result.skip_message
