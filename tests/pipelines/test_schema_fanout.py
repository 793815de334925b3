"""Embedding fanned out by schema (``schema_embeddings`` partitions) builds the same artifact.

A generated three-schema warehouse catalog is built twice with a real persistent Dagster
instance: once as one ``build_index`` run (``jobs=1``), once with ``jobs=2`` and the fan-out
threshold lowered to 1 column, so each schema is embedded in its own ``embed_schema`` run on the
multiprocess executor before the database's run. The two artifacts must be the same (key, every
file but LanceDB's UUID-named files and the manifest's timestamp, and the Lance table's rows),
the schema partitions must be recorded in the instance, and the fan-in must embed nothing.
A third build publishes to a ``file://`` object store from one local cache and finishes from
another, as two machines would: the fan-in finds the vectors in the partitions' shards.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import dagster as dg
import pytest

from schemarag.assets.lib.cache_shards import SHARDS
from schemarag.pipelines.build import BuildReport, build_databases
from schemarag.pipelines.instance import open_instance
from schemarag.pipelines.schema_fanout import embed_schemas_in_parallel
from schemarag.tools.benchmarks.warehouse_catalog import CatalogSpec, write_export
from schemarag.tools.importers.catalog_export import import_catalog_export

pytestmark = pytest.mark.slow  # three builds and six embed_schema runs: minutes on 2 shared cores

DB = "wh"
SCHEMAS = ["finance", "marketing", "sales"]  # the first three of warehouse_catalog.SCHEMAS


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12-table, 400-column catalog in three schemas, imported as database ``wh``."""
    work = tmp_path_factory.mktemp("catalog")
    export = write_export(
        CatalogSpec(tables=12, columns=400, schemas=3, families=1, shards=3), work / "export"
    )
    import_catalog_export(
        export.columns, work / "data", database=DB, tables=export.tables, foreign_keys=export.foreign_keys
    )
    return work / "data"


@pytest.fixture(scope="module")
def builds(catalog: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The single-partition build and the schema fan-out build, each in its own artifacts folder."""
    work = tmp_path_factory.mktemp("builds")
    single_instance = open_instance(work / "home-single")
    (single,) = build_databases([DB], catalog, work / "single", instance=single_instance)
    instance = open_instance(work / "home")
    (fanned,) = build_databases(
        [DB], catalog, work / "fanned", instance=instance, jobs=2, schema_partitions_from=1
    )
    return {"single": single, "fanned": fanned, "work": work, "instance": instance}


def _files(version: Path) -> dict[str, str]:
    """SHA-256 of every file but LanceDB's own (named by UUIDs and write order) and the manifest."""
    return {
        p.relative_to(version).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(version.rglob("*"))
        if p.is_file() and "lance" not in p.relative_to(version).parts and p.name != "manifest.json"
    }


def _manifest(version: Path) -> dict:
    """The manifest without its build time and without the Lance files' entries (see :func:`_files`)."""
    manifest = json.loads((version / "manifest.json").read_text())
    manifest.pop("built_at")
    manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("lance/")}
    return manifest


def _lance_rows(version: Path) -> list[dict]:
    import lancedb

    return lancedb.connect(str(version / "lance")).open_table("chunks").to_arrow().to_pylist()


def test_fanned_out_build_equals_single_partition_build(builds: dict) -> None:
    single, fanned = builds["single"], builds["fanned"]
    assert single.ok and fanned.ok, (single.error, fanned.error)
    assert fanned.key == single.key
    a = builds["work"] / "single" / DB / single.key
    b = builds["work"] / "fanned" / DB / fanned.key
    assert _files(b) == _files(a)
    assert "embeddings.npy" in _files(a) and "chunks.parquet" in _files(a)
    assert _manifest(b) == _manifest(a)
    assert _lance_rows(b) == _lance_rows(a)


def test_schema_partitions_are_recorded_and_did_the_embedding(builds: dict) -> None:
    instance: dg.DagsterInstance = builds["instance"]
    keys = [f"{DB}/{s}" for s in SCHEMAS]
    assert sorted(instance.get_dynamic_partitions("database_schemas")) == keys
    embedded = {}
    for key in keys:
        wanted = dg.AssetRecordsFilter(asset_key=dg.AssetKey("schema_embeddings"), asset_partitions=[key])
        records = instance.fetch_materializations(wanted, limit=1).records
        assert records, key
        meta = records[0].asset_materialization.metadata  # type: ignore[union-attr]
        assert meta["key"].value == builds["single"].key
        embedded[key] = meta["embedded"].value
    assert all(n > 0 for n in embedded.values()), embedded
    # each distinct text belongs to exactly one schema: together they embed what one build embeds
    assert sum(embedded.values()) == builds["single"].embedded
    runs = instance.get_run_records(dg.RunsFilter(job_name="embed_schema"))
    assert sorted(r.dagster_run.tags["dagster/partition"] for r in runs) == keys


def test_fan_in_embeds_nothing(builds: dict) -> None:
    fanned: BuildReport = builds["fanned"]
    assert fanned.embedded == 0 and fanned.embedded_chunk_ids == []
    assert fanned.cache_hits == fanned.chunks > 0


def test_fan_in_on_another_machine_reads_the_partitions_shards(
    catalog: Path, builds: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Partitions and fan-in with different local caches, sharing only a ``file://`` store."""
    from schemarag.assets.resources import EmbeddingModel, IndexPaths

    bucket = f"file://{tmp_path / 'bucket'}"
    instance = open_instance(tmp_path / "home")
    monkeypatch.setenv("SCHEMARAG_CACHE_DIR", str(tmp_path / "machine-a"))  # spawned workers inherit it
    paths = IndexPaths(data=str(catalog), artifacts=bucket)
    reports = embed_schemas_in_parallel([DB], paths, EmbeddingModel(), instance, jobs=2, min_columns=1)
    assert [r.ok for r in reports] == [True] * 3, [r.error for r in reports]
    shards = sorted(p.name for p in (tmp_path / "bucket").glob(f"{SHARDS}/*/_/{DB}/*"))
    assert shards == [f"{s}.npz" for s in SCHEMAS]

    monkeypatch.setenv("SCHEMARAG_CACHE_DIR", str(tmp_path / "machine-b"))  # an empty local cache
    (report,) = build_databases([DB], catalog, bucket, instance=instance)
    assert report.ok, report.error
    assert report.key == builds["single"].key
    assert report.embedded == 0 and report.cache_hits == report.chunks
    assert (tmp_path / "bucket" / DB / "CURRENT").read_text().strip() == report.key
    local = next((tmp_path / "machine-b").rglob(f"{DB}/{report.key}/embeddings.npy"))
    single = builds["work"] / "single" / DB / report.key / "embeddings.npy"
    assert local.read_bytes() == single.read_bytes()
