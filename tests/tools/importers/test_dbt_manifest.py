"""Manifest mode on what dbt itself wrote for tests/fixtures/dbt_warehouse, and project mode
checked against it: the same relation names, materializations and columns dbt reports.

tests/fixtures/dbt_warehouse_target holds the manifest.json (trimmed to the keys the importer
reads) and catalog.json dbt-core 1.9 + dbt-duckdb wrote after building the fixture (see its README).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.dbt import import_dbt
from schemarag.tools.importers.dbt.manifest import relation_parts

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PROJECT = FIXTURES / "dbt_warehouse"
TARGET = FIXTURES / "dbt_warehouse_target"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    out = tmp_path_factory.mktemp("manifest")
    from_manifest = import_dbt(
        PROJECT, out / "m", manifest=TARGET / "manifest.json", catalog=TARGET / "catalog.json"
    )
    from_project = import_dbt(PROJECT, out / "p")
    return (
        (from_manifest, load_schema(out / "m" / "jaffle_warehouse.json")),
        (from_project, load_schema(out / "p" / "jaffle_warehouse.json")),
    )


def _dbt_relations() -> dict[str, dict]:
    """dbt's own view: node name -> {relation, materialized, resource_type}."""
    manifest = json.loads((TARGET / "manifest.json").read_text())
    out = {}
    for node in [*manifest["nodes"].values(), *manifest["sources"].values()]:
        if node["resource_type"] == "test":
            continue
        parts = relation_parts(node) if node.get("relation_name") else []
        key = f"{node['source_name']}.{node['name']}" if node["resource_type"] == "source" else node["name"]
        out[key] = {
            "relation": ".".join(parts[1:] if parts and parts[0] == "jaffle" else parts),
            "materialized": node.get("config", {}).get("materialized"),
        }
    return out


def test_project_mode_names_every_relation_as_dbt_does(both):
    (_, _), (report, db) = both
    ours = {t.name for t in db.tables}
    dbt = _dbt_relations()
    expected = {v["relation"] for v in dbt.values() if v["relation"]}
    assert ours == expected
    assert report.ephemeral == sorted(k for k, v in dbt.items() if v["materialized"] == "ephemeral")


def test_manifest_mode_takes_relation_name_and_skips_ephemeral_and_disabled(both):
    (report, db), _ = both
    names = {t.name for t in db.tables}
    assert "analytics_marts.orders" in names and "payments_db.stripe.charges" in names
    assert "jaffle.raw.orders" not in names and "raw.orders" in names  # the target database is left out
    assert not any("int_order_payments" in n for n in names)
    assert report.ephemeral == ["int_order_payments"]
    assert report.disabled == ["dim_promotions", "old_orders"]
    assert db.table("analytics_marts.orders").layer == "marts"
    assert db.table("raw.orders").layer == "source"
    # stg_charges was never built (its source database was not attached): no catalog columns
    assert any("'stg_charges' has no known columns" in w for w in report.warnings)


def test_manifest_mode_documents_exposures_and_metrics(tmp_path):
    import_dbt(PROJECT, tmp_path, manifest=TARGET / "manifest.json", catalog=TARGET / "catalog.json")
    text = "\n".join(
        p.read_text() for p in sorted((tmp_path / "jaffle_warehouse" / "docs").glob("*orders*.md"))
    )
    assert "## Exposures\n- **Revenue dashboard** (dashboard" in text
    assert "- **Gross merchandise value** (`gross_merchandise_value`, simple)" in text


def test_sql_derived_columns_match_the_warehouse(both):
    """Every column project mode derives from the SQL exists in the built warehouse (catalog)."""
    (_, warehouse), (_, project) = both
    checked = 0
    for table in project.tables:
        built = warehouse.table(table.name)
        if built is None:  # stg_charges: not built
            continue
        assert {c.name.lower() for c in table.columns} == {c.name.lower() for c in built.columns}, table.name
        checked += 1
    assert checked >= 20


def test_manifest_without_catalog_says_how_to_get_columns(tmp_path):
    report = import_dbt(PROJECT, tmp_path, manifest=TARGET / "manifest.json")
    assert any("pass --catalog target/catalog.json" in w for w in report.warnings)


def test_dbts_own_name_becomes_the_label_where_the_warehouse_name_says_other_words(both):
    for _, db in both:  # manifest mode and project mode agree
        labels = {t.name: t.label for t in db.tables if t.label}
        # the source table `products` is read from its identifier product_catalog_v2
        assert labels.get("raw.product_catalog_v2") == "products"
        # an alias that only drops decoration (fct_orders -> orders) or repeats the name gets none
        assert db.table("analytics_marts.orders").label is None
        assert db.table("analytics_marts.customers").label is None
