"""Real warehouse exports (a few Spider 2.0-lite databases from ../shared/benchmarks) import the
user's way without a warning: names kept exactly as exported (BigQuery's `` accident_2015`` beside
``accident_2015``), Snowflake's ``_1000_GENOMES``, GA4's nested STRUCT types and date shards."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.formatting import format_full_schema
from schemarag.tools.importers.catalog_export import import_catalog_export

_REPO = Path(__file__).resolve().parents[3]
SPIDER2 = next(
    (
        p / "benchmarks" / "spider2_lite"
        for p in (_REPO.parent / "shared", Path("/work/shared"))
        if p.is_dir()
    ),
    _REPO.parent / "shared" / "benchmarks" / "spider2_lite",
)
CASES = [("bigquery", "nhtsa_traffic_fatalities"), ("bigquery", "ga4"), ("snowflake", "_1000_GENOMES")]


def _relations(columns: Path) -> set[tuple[str, str, str]]:
    with gzip.open(columns, "rt", encoding="utf-8", newline="") as fh:
        return {(r["table_catalog"], r["table_schema"], r["table_name"]) for r in csv.DictReader(fh)}


@pytest.mark.skipif(not SPIDER2.is_dir(), reason="shared/benchmarks/spider2_lite is not here")
@pytest.mark.parametrize(("engine", "db"), CASES)
def test_real_export_imports_without_a_warning(tmp_path: Path, engine: str, db: str) -> None:
    folder = SPIDER2 / engine / db
    report = import_catalog_export(
        folder / "columns.csv.gz", tmp_path, database=db, tables=folder / "tables.csv", dialect=engine
    )
    assert report.warnings == []
    raw = _relations(folder / "columns.csv.gz")
    assert report.raw_tables == len(raw)  # every relation as exported, none merged by accident
    schema = load_schema(tmp_path / f"{db}.json")
    families = [t for t in schema.tables if t.shards is not None]
    assert len(schema.tables) + sum(t.shards.count - 1 for t in families) == len(raw)
    ddl = format_full_schema(schema)
    for table in schema.tables:  # nested parents are compact wherever their fields are listed
        for col in table.columns:
            if "." in col.name and table.column(col.name.rsplit(".", 1)[0]) is not None:
                parent = table.column(col.name.rsplit(".", 1)[0])
                assert parent.type not in ddl or len(parent.type) < 20
