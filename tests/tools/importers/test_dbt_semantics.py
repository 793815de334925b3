"""dbt semantics over tests/fixtures/dbt_warehouse: what is built, where, and in which layer.

The fixture is laid out like the public Spider2-dbt projects: folder configs with and without
``+``, an installed package whose configs the root overrides, an ephemeral intermediate folder,
``config()`` in keyword and dict form, yml ``config:`` blocks, aliases, custom schemas, a
disabled folder and a var-disabled model, exposures, a semantic model and metric, a snapshot and
a seed, and a profiles.yml giving the target (duckdb, schema ``analytics``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.dbt import import_dbt

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dbt_warehouse"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("dbt_warehouse")
    report = import_dbt(FIXTURE, out)
    return report, load_schema(out / "jaffle_warehouse.json"), out / "jaffle_warehouse" / "docs"


def _doc(docs: Path, table: str) -> str:
    from schemarag.assets.lib.docs_writer import doc_file_name

    return (docs / doc_file_name(table)).read_text()


def test_relation_names_follow_dbt_default_generate_schema_name(imported):
    _, db, _ = imported
    names = {t.name for t in db.tables}
    assert {
        "analytics_staging.stg_orders",  # folder +schema: staging on target schema analytics
        "analytics_marts.customers",  # dict-form config() alias
        "analytics_marts.orders",  # yml config: alias
        "analytics_catalog.dim_products",  # yml config: schema beats the folder's +schema
        "analytics_finance.fct_revenue_daily",  # nested folder: the most specific +schema wins
        "analytics_reports.rpt_customer_lifetime_value",
        "analytics.int_customer_orders",  # no custom schema: the target schema
        "raw.orders",  # source schema from a var() in Jinja
        "raw.product_catalog_v2",  # source identifier
        "payments_db.stripe.charges",  # a source in another database keeps it
        "snapshots.customers_snapshot",  # legacy target_schema, used as is
        "analytics_reference.country_codes",  # seed with +schema
        "analytics_stg_shop.stg_shop__refunds",  # package model: the root's +schema beats the package's
        "shop_ext.refund_events",  # package source: identifier from a root var scoped to the package
    } <= names
    assert not any(n.startswith("jaffle.") for n in names)  # the target database is left out


def test_ephemeral_and_disabled_models_are_not_tables(imported):
    report, db, docs = imported
    names = {t.name.rsplit(".", 1)[-1] for t in db.tables}
    assert "int_order_payments" not in names  # ephemeral by folder config without '+'
    assert {"old_orders", "dim_promotions"}.isdisjoint(names)  # +enabled: false / enabled=var(...)
    assert report.ephemeral == ["int_order_payments"]
    assert report.disabled == ["dim_promotions", "old_orders"]
    # the ephemeral model stays as documentation of the model that inlines it ...
    orders = _doc(docs, "analytics_marts.orders")
    assert (
        "- **Inlined ephemeral model:** `int_order_payments` (not a table): Payment amounts per order"
        in orders
    )
    # ... and lineage goes through it to the relations that exist
    assert "`analytics_staging.stg_payments`" in orders.split("**Built from:**")[1].splitlines()[0]
    assert "int_order_payments" not in _doc(docs, "analytics_staging.stg_payments")


def test_materialization_precedence(imported):
    _, _, docs = imported
    # config() in SQL beats the folder (ephemeral -> view) and the folder beats the project level
    assert "model (view), layer intermediate" in _doc(docs, "analytics.int_customer_orders")
    assert "model (incremental), layer marts" in _doc(docs, "analytics_marts.orders")
    assert "model (view), layer marts" in _doc(docs, "analytics_finance.fct_revenue_daily")  # yml config
    assert "model (table), layer marts" in _doc(docs, "analytics_marts.customers")  # dict-form config()
    assert "model (view), layer staging" in _doc(docs, "analytics_stg_shop.stg_shop__refunds_tmp")
    assert "model (table), layer staging" in _doc(docs, "analytics_stg_shop.stg_shop__refunds")


def test_layers(imported):
    report, db, _ = imported
    layer = {t.name: t.layer for t in db.tables}
    assert layer["analytics_marts.orders"] == "marts"
    assert layer["analytics_reports.rpt_customer_lifetime_value"] == "reports"
    assert layer["analytics_staging.stg_orders"] == "staging"
    assert layer["analytics.int_customer_orders"] == "intermediate"
    assert layer["raw.orders"] == "source"
    assert layer["analytics_reference.country_codes"] == "seed"
    assert layer["snapshots.customers_snapshot"] == "snapshot"
    assert sum(report.layers.values()) == len(db.tables)


def test_columns_come_through_packages_vars_and_ephemeral_models(imported):
    _, db, _ = imported
    orders = db.table("analytics_marts.orders")
    # columns of the ephemeral model flow into the model that inlines it
    assert {"credit_card_amount", "gift_card_amount", "amount"} <= {c.name for c in orders.columns}
    # a package macro called bare, and a var() whose value is "{{ source(...) }}"
    refunds = db.table("analytics_stg_shop.stg_shop__refunds")
    assert [c.name for c in refunds.columns] == ["refund_id", "order_id", "refunded_on", "amount"]
    assert refunds.column("refunded_on").type == "DATE"
    assert (
        db.table("shop_ext.refund_events").description == "Each record is one refund issued against an order."
    )
    snap = db.table("snapshots.customers_snapshot")
    assert [c.name for c in snap.columns][-4:] == [
        "dbt_scd_id",
        "dbt_updated_at",
        "dbt_valid_from",
        "dbt_valid_to",
    ]
    seed = db.table("analytics_reference.country_codes")
    assert [c.name for c in seed.columns] == ["country_code", "country_name", "region"]
    assert seed.column("country_code").type == "varchar(2)"  # +column_types


def test_foreign_keys_use_relation_names(imported):
    _, db, _ = imported
    assert (
        "analytics_marts.orders",
        "customer_id",
        "analytics_marts.customers",
        "customer_id",
    ) in db.foreign_keys()


def test_exposures_semantic_models_and_metrics_document_their_tables(imported):
    _, _, docs = imported
    orders = _doc(docs, "analytics_marts.orders")
    assert (
        "## Exposures\n- **Revenue dashboard** (dashboard, maturity high, owner Finance analytics)" in orders
    )
    assert "## Semantic model\n`orders`: Orders as a semantic model" in orders
    assert "- **Measures:** `order_total` (Sum of the order amounts.)" in orders
    assert "## Metrics\n- **Gross merchandise value** (`gross_merchandise_value`, simple)" in orders
    assert "Revenue dashboard" in _doc(docs, "analytics_finance.fct_revenue_daily")
    assert "Revenue dashboard" not in _doc(docs, "analytics_marts.customers")


def test_schema_modes_and_target_schema(tmp_path):
    custom = import_dbt(FIXTURE, tmp_path / "c", schema_mode="custom", target_schema="dbt_ana")
    db = load_schema(tmp_path / "c" / "jaffle_warehouse.json")
    names = {t.name for t in db.tables}
    assert {"marts.orders", "finance.fct_revenue_daily", "dbt_ana.int_customer_orders", "raw.orders"} <= names
    assert custom.warnings == []
    import_dbt(FIXTURE, tmp_path / "p", schema_mode="prefixed", target_schema="dbt_ana")
    names = {t.name for t in load_schema(tmp_path / "p" / "jaffle_warehouse.json").tables}
    assert {"dbt_ana_marts.orders", "dbt_ana.int_customer_orders"} <= names
    with pytest.raises(ImportFormatError, match="--schema-mode 'odd'"):
        import_dbt(FIXTURE, tmp_path / "x", schema_mode="odd")


def test_the_projects_own_generate_schema_name_is_used(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    (project / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) -%}\n"
        "  {%- if custom_schema_name is none -%}{{ target.schema }}"
        "{%- else -%}{{ custom_schema_name | trim }}{%- endif -%}\n"
        "{%- endmacro %}\n"
    )
    report = import_dbt(project, tmp_path / "out")
    names = {t.name for t in load_schema(tmp_path / "out" / "jaffle_warehouse.json").tables}
    assert {
        "marts.orders",
        "staging.stg_orders",
        "analytics.int_customer_orders",
        "stg_shop.stg_shop__refunds",
    } <= names
    assert report.warnings == []


def test_a_generate_schema_name_that_cannot_run_falls_back_with_one_warning(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    (project / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) -%}"
        "{{ adapter.quote(custom_schema_name) }}{%- endmacro %}\n"
    )
    report = import_dbt(project, tmp_path / "out")
    names = {t.name for t in load_schema(tmp_path / "out" / "jaffle_warehouse.json").tables}
    assert "analytics_marts.orders" in names
    assert len([w for w in report.warnings if "generate_schema_name" in w]) == 1


def test_without_a_profile_names_stay_bare_and_custom_schemas_are_used_as_is(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    (project / "profiles.yml").unlink()
    report = import_dbt(project, tmp_path / "out")
    names = {t.name for t in load_schema(tmp_path / "out" / "jaffle_warehouse.json").tables}
    assert {"int_customer_orders", "marts.orders", "raw.orders"} <= names
    assert len([w for w in report.warnings if "--target-schema" in w]) == 1


def test_missing_packages_are_one_warning(tmp_path):
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    shutil.rmtree(project / "dbt_packages")
    report = import_dbt(project, tmp_path / "out")
    assert len([w for w in report.warnings if "run `dbt deps`" in w]) == 1
    assert report.tables > 0


def test_a_package_linked_in_from_outside_is_refused(tmp_path):
    project, outside = tmp_path / "p", tmp_path / "elsewhere"
    shutil.copytree(FIXTURE, project, symlinks=True)
    shutil.move(project / "dbt_packages" / "shop_source", outside)
    (project / "dbt_packages" / "shop_source").symlink_to(outside, target_is_directory=True)
    report = import_dbt(project, tmp_path / "out")
    names = {t.name for t in load_schema(tmp_path / "out" / "jaffle_warehouse.json").tables}
    assert not any("refund" in n for n in names)
    assert len([w for w in report.warnings if "shop_source" in w and "outside" in w]) == 1


def test_dbt_precedence_details_found_against_dbt_ls(tmp_path):
    """Cases where `dbt ls` on the Spider2-dbt projects disagreed with an earlier version."""
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    config = (project / "dbt_project.yml").read_text()
    # the root's dbt_project.yml beats a package model's own config() (salesforce001)
    config = config.replace(
        "  shop_source:\n    +schema: stg_shop\n",
        "  shop_source:\n    +schema: stg_shop\n    +materialized: view\n",
    )
    # vars scoped by the root project's own name apply to the root's nodes (workday001)
    config = config.replace("vars:\n", "vars:\n  jaffle_warehouse:\n    raw_schema: landing\n")
    (project / "dbt_project.yml").write_text(config)
    pkg_model = project / "dbt_packages" / "shop_source" / "models" / "stg_shop__refunds.sql"
    pkg_model.write_text("{{ config(materialized='incremental') }}\n" + pkg_model.read_text())
    # a root macro called through the root project's name inside config() (jira001)
    (project / "macros" / "engine.sql").write_text(
        "{% macro is_spark() %}{{ return(false) }}{% endmacro %}\n"
    )
    spine = project / "models" / "marts" / "core" / "dim_products.sql"
    spine.write_text(
        "{{ config(materialized='table' if jaffle_warehouse.is_spark() else 'incremental') }}\n"
        + spine.read_text()
    )
    # a dbt-duckdb source read from files is not a relation (nba001)
    sources = project / "models" / "staging" / "_sources.yml"
    sources.write_text(
        sources.read_text().replace(
            "  - name: stripe\n",
            "  - name: stripe\n    meta:\n      external_location: \"read_csv('s3://x/{name}.csv')\"\n",
        )
    )
    report = import_dbt(project, tmp_path / "out")
    assert report.nodes["stg_shop__refunds"]["materialized"] == "view"
    assert report.nodes["dim_products"]["materialized"] == "incremental"
    assert report.nodes["shop.orders"]["relation"] == "landing.orders"
    names = {t.name for t in load_schema(tmp_path / "out" / "jaffle_warehouse.json").tables}
    assert "payments_db.stripe.charges" not in names
    assert len([w for w in report.warnings if "'stripe.charges' is a file" in w]) == 1


def test_ymls_are_read_as_dbt_reads_them(tmp_path):
    """A tab before a description (a Fivetran package ships one) is fine for dbt's libyaml loader."""
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    yml = project / "models" / "reports" / "_reports.yml"
    yml.write_text(yml.read_text().replace("description: Lifetime", "description: \tLifetime"))
    report = import_dbt(project, tmp_path / "out")
    assert not any("_reports.yml" in w for w in report.warnings), report.warnings
    table = load_schema(tmp_path / "out" / "jaffle_warehouse.json").table(
        "analytics_reports.rpt_customer_lifetime_value"
    )
    assert table.description.startswith("Lifetime value per customer")
