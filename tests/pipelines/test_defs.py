"""The one Definitions object loads, and holds the graph the UI and the daemon will see."""

from __future__ import annotations

import dagster as dg

from schemarag.assets.published_index import CHECKS
from schemarag.pipelines.definitions import FANOUT_ASSETS, INDEX_ASSETS, defs

ASSET_KEYS = {
    "source_snapshot",
    "doc_chunks",
    "query_history",
    "bm25_statistics",
    "chunk_embeddings",
    "published_index",
}


def test_definitions_load() -> None:
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys >= ASSET_KEYS
    assert {k.to_user_string() for a in [*INDEX_ASSETS, *FANOUT_ASSETS] for k in a.keys} == keys


def test_graph_is_a_partitioned_chain_with_checks() -> None:
    graph = defs.resolve_asset_graph()
    key = dg.AssetKey
    assert graph.get(key("doc_chunks")).parent_keys == {key("source_snapshot")}
    assert graph.get(key("query_history")).parent_keys == {key("source_snapshot")}
    assert graph.get(key("published_index")).parent_keys == {
        key("source_snapshot"),
        key("doc_chunks"),
        key("query_history"),
        key("bm25_statistics"),
        key("chunk_embeddings"),
    }
    for k in graph.get_all_asset_keys() - {key("schema_embeddings")}:
        node = graph.get(k)
        assert node.partitions_def == dg.DynamicPartitionsDefinition(name="databases")
        assert node.group_name == "index"
    checks = {c.name for c in graph.asset_check_keys}
    assert checks == {name for name, _ in CHECKS}


def test_job_schedule_sensor_and_resources() -> None:
    job = defs.resolve_job_def("build_index")
    assert job.partitions_def == dg.DynamicPartitionsDefinition(name="databases")
    selected = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    assert selected >= ASSET_KEYS
    assert {c.name for c in job.asset_layer.asset_graph.asset_check_keys} == {n for n, _ in CHECKS}
    schedule = defs.resolve_schedule_def("daily_index_build")
    assert schedule.job_name == "build_index" and schedule.cron_schedule == "0 3 * * *"
    sensor = defs.resolve_sensor_def("docs_changed_sensor")
    assert sensor.job_name == "build_index"
    assert {"index_paths", "embedding_model"} <= set(defs.resources or {})


def test_schema_fanout_asset_and_job() -> None:
    """The embedding fan-out: its own group, partitions and job, so ``build_index`` is unchanged."""
    node = defs.resolve_asset_graph().get(dg.AssetKey("schema_embeddings"))
    assert node.partitions_def == dg.DynamicPartitionsDefinition(name="database_schemas")
    assert node.group_name == "schema_fanout" and not node.parent_keys
    job = defs.resolve_job_def("embed_schema")
    assert job.partitions_def == dg.DynamicPartitionsDefinition(name="database_schemas")
    assert {k.to_user_string() for k in job.asset_layer.selected_asset_keys} == {"schema_embeddings"}
    index = defs.resolve_job_def("build_index")
    assert "schema_embeddings" not in {k.to_user_string() for k in index.asset_layer.selected_asset_keys}
