"""Warehouse relation names end to end: an export spanning two BigQuery projects imports with
3-part names, builds, and the focused schema (what /v1/schema and MCP get_schema return) shows them
as the warehouse spells them; a statement written with those names validates, the shard family's
``_TABLE_SUFFIX`` filter included."""

from __future__ import annotations

import csv
import re

import dagster as dg
import pytest

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.app.serve.keys import ANONYMOUS
from schemarag.app.serve.service import SchemaService
from schemarag.pipelines.build import build_databases
from schemarag.tools.importers.catalog_export import import_catalog_export

HEADER = [
    "table_catalog",
    "table_schema",
    "table_name",
    "column_name",
    "ordinal_position",
    "data_type",
    "description",
]
ROWS = [
    *[
        ["bigquery-public-data", "ga4_obfuscated_sample_ecommerce", f"events_2021010{d}", col, pos, typ, desc]
        for d in (1, 2, 3)
        for pos, (col, typ, desc) in enumerate(
            [
                ("event_date", "STRING", "Date of the event, YYYYMMDD"),
                ("event_name", "STRING", "Name of the event such as purchase or page_view"),
                ("user_pseudo_id", "STRING", "Pseudonymous id of the user"),
            ],
            1,
        )
    ],
    ["my-company", "crm", "customers", "user_pseudo_id", 1, "STRING", "Pseudonymous id of the web user"],
    ["my-company", "crm", "customers", "lifetime_value", 2, "NUMERIC", "Revenue from the customer, USD"],
    ["my-company", "crm", "customers", "segment", 3, "STRING", "Marketing segment of the customer"],
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> SchemaService:
    root = tmp_path_factory.mktemp("names")
    with (root / "columns.csv").open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        writer.writerows(ROWS)
    import_catalog_export(root / "columns.csv", root / "data", database="marketing", dialect="bigquery")
    (built,) = build_databases(
        ["marketing"], root / "data", root / "artifacts", instance=dg.DagsterInstance.ephemeral()
    )
    assert built.ok, built
    return SchemaService(root / "artifacts")


def test_focused_schema_names_relations_as_the_warehouse_does(served: SchemaService) -> None:
    wanted = ["bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_*", "my-company.crm.customers"]
    out = served.schema(ANONYMOUS, "marketing", None, wanted, token_budget=None)  # /v1/schema with tables
    text = out["schema"]
    assert "CREATE TABLE `bigquery-public-data`.ga4_obfuscated_sample_ecommerce.`events_*` (" in text
    assert "CREATE TABLE `my-company`.crm.customers (" in text
    assert set(out["metadata"]["tables_shown"]) == {
        "bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_*",
        "my-company.crm.customers",
    }
    asked = served.schema(ANONYMOUS, "marketing", "page_view events on 2021-01-02", None, token_budget=None)
    assert (
        "CREATE TABLE `bigquery-public-data`.ga4_obfuscated_sample_ecommerce.`events_*` (" in asked["schema"]
    )
    # how to query the family is on the statement's first line, whether or not its doc was retrieved
    assert (
        "`events_*` ( -- 3 shards bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_20210101 .. "
        "bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_20210103: "
        "filter with _TABLE_SUFFIX BETWEEN '20210101' AND '20210103'"
    ) in asked["schema"]


def test_statement_written_with_the_shown_names_validates(served: SchemaService) -> None:
    names = ["bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_*", "my-company.crm.customers"]
    text = served.schema(ANONYMOUS, "marketing", None, names, token_budget=None)["schema"]
    events, customers = re.findall(r"CREATE TABLE (\S+) \(", text)[:2]
    if "customers" in events:
        events, customers = customers, events
    sql = (
        f"SELECT c.segment, COUNT(*) AS purchases FROM {events} AS e JOIN {customers} AS c "
        "ON c.user_pseudo_id = e.user_pseudo_id "
        "WHERE e.event_name = 'purchase' AND _TABLE_SUFFIX BETWEEN '20210101' AND '20210103' "
        "GROUP BY c.segment"
    )
    report = served.validate(ANONYMOUS, "marketing", sql)
    assert report["valid"] is True, report
    assert sorted(report["tables"]) == [
        "bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_*",
        "my-company.crm.customers",
    ]


def test_shorter_name_is_refused_with_the_full_name_as_hint(served: SchemaService) -> None:
    schema = served.retriever(ANONYMOUS, "marketing").artifact.schema
    report = validate_sql("SELECT segment FROM crm.customers", schema)
    assert report.valid is False
    assert "my-company.crm.customers" in report.errors[0]
    assert validate_sql("SELECT segment FROM `my-company.crm.customers`", schema).valid is True


def test_a_shard_named_by_its_own_name_validates_against_its_family(served: SchemaService) -> None:
    schema = served.retriever(ANONYMOUS, "marketing").artifact.schema
    shard = "`bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_20210102`"
    report = validate_sql(f"SELECT e.event_name FROM {shard} AS e WHERE e.event_date = '20210102'", schema)
    assert report.valid is True, report.errors
    assert report.tables == ["bigquery-public-data.ga4_obfuscated_sample_ecommerce.events_*"]
    outside = validate_sql(
        shard.replace("20210102", "20991231").join(["SELECT event_name FROM ", ""]), schema
    )
    assert outside.valid is False and "unknown table" in outside.errors[0]
