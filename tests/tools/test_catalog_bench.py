"""``schemarag bench catalog``: a tiny run end to end (the full-size run is marked slow)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from schemarag.tools.benchmarks.warehouse_catalog import CatalogSpec, write_export
from schemarag.tools.importers.catalog_export import import_catalog_export


def test_generated_export_imports_with_families_collapsed(tmp_path):
    spec = CatalogSpec(tables=30, columns=1500, schemas=3, families=2, shards=4, seed=1)
    export = write_export(spec, tmp_path / "export")
    assert export.physical_tables == 30 - 2 + 2 * 4
    report = import_catalog_export(
        export.columns, tmp_path / "data", database="wh", tables=export.tables,
        foreign_keys=export.foreign_keys, dialect="bigquery",
    )  # fmt: skip
    assert report.tables == 30 and report.columns == export.logical_columns >= 1500
    assert report.foreign_keys > 0
    names = json.loads((tmp_path / "data" / "wh.json").read_text())["tables"]
    assert sorted(t["name"] for t in names) == sorted(export.table_names)
    assert sum(1 for n in export.table_names if n.endswith("_events_*")) == 2


def _bench(tmp_path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "schemarag.cli",
        "bench",
        "catalog",
        "--out",
        str(tmp_path / "r.json"),
        *extra,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=3600)


def test_bench_smoke(tmp_path):
    proc = _bench(tmp_path, "--tables", "6", "--columns", "60", "--schemas", "2", "--families", "1",
                  "--shards", "3", "--queries", "5", "--repeats", "1")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((tmp_path / "r.json").read_text())
    assert res["tables"] == 6 and res["physical_tables"] == 8
    assert res["chunks"] > res["tables"] and res["columns_per_s"] > 0 and res["index_mb"] > 0
    assert res["edit_embedded"] >= 1 and res["edit_embedded"] < res["embedded"]
    assert 0 < res["search_p50_ms"] <= res["search_p95_ms"]
    for label in (
        "columns/s",
        "peak RSS",
        "index size",
        "search p50 / p95",
        "edit-one-table",
        "no-op rebuild",
    ):
        assert label in proc.stdout


@pytest.mark.slow
def test_bench_full_size(tmp_path):
    """The issue's catalog: >= 2,000 tables, >= 120,000 columns, several schemas, sharded families."""
    proc = _bench(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads((tmp_path / "r.json").read_text())
    assert res["tables"] >= 2000 and res["columns"] >= 120_000 and res["spec"]["families"] >= 1


def test_bench_sweep_over_documented_share_and_column_tiers(tmp_path):
    """A sweep builds each (share, tier) cold: bm25 embeds no column, and short no more distinct
    texts than full (it drops the table name, so equal columns of two tables share one)."""
    chart = tmp_path / "sweep.png"
    proc = _bench(tmp_path, "--tables", "6", "--columns", "60", "--schemas", "2", "--families", "1",
                  "--shards", "3", "--documented", "0.1,1.0", "--column-vectors", "full,short,bm25",
                  "--chart", str(chart))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = json.loads((tmp_path / "r.json").read_text())["sweep"]
    cell = {(r["documented"], r["column_vectors"]): r for r in rows}
    assert len(cell) == 6 and all(r["columns_per_s"] > 0 and r["columns_per_cpu_s"] > 0 for r in rows)
    for share in (0.1, 1.0):
        assert cell[share, "bm25"]["embedded"] < cell[share, "short"]["embedded"]
        assert cell[share, "short"]["embedded"] <= cell[share, "full"]["embedded"]
    assert chart.stat().st_size > 0 and "col/CPU-s" in proc.stdout


def test_bench_refuses_an_unknown_tier(tmp_path):
    proc = _bench(tmp_path, "--column-vectors", "full,static")
    assert proc.returncode == 2 and "use one or more of full, short, bm25" in proc.stderr
