"""``import catalog``: INFORMATION_SCHEMA-shaped CSV/Parquet exports, shard collapse, nested fields."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tiny_support import in_memory_artifact

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.search.named_tables import NameMatch, named_tables
from schemarag.tools.importers.catalog_export import import_catalog_export


def _csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


COLS = ["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "DATA_TYPE",
        "IS_NULLABLE", "COLUMN_COMMENT", "EXTRA_IGNORED"]  # fmt: skip


@pytest.fixture
def export(tmp_path):
    rows = [
        ["wh", "sales", "orders", "amount", 3, "NUMBER(10,2)", "YES", "Order total in USD", "x"],
        ["wh", "sales", "orders", "order_id", 1, "NUMBER", "NO", "", "x"],
        ["wh", "sales", "orders", "customer_id", 2, "NUMBER", "NO", "Who ordered", "x"],
        ["wh", "sales", "customers", "id", 1, "NUMBER", "NO", "", ""],
        ["wh", "sales", "customers", "email", 2, "TEXT", "YES", "Login e-mail", ""],
        ["wh", "information_schema", "tables", "table_name", 1, "TEXT", "NO", "", ""],
    ]
    for day in ("20240101", "20240102", "20240103"):
        rows += [
            ["wh", "web", f"events_{day}", "event_id", 1, "STRING", "NO", "", ""],
            ["wh", "web", f"events_{day}", "customer_id", 2, "NUMBER", "YES", "", ""],
        ]
    rows.append(["wh", "web", "events_20240103", "referrer", 3, "STRING", "YES", "Added in 2024", ""])
    rows += [["wh", "web", "address_1", "street", 1, "TEXT", "YES", "", ""],
             ["wh", "web", "address_2", "city", 1, "TEXT", "YES", "", ""]]  # fmt: skip
    columns = _csv(tmp_path / "columns.csv", COLS, rows)
    tables = _csv(
        tmp_path / "tables.csv",
        ["table_schema", "table_name", "table_type", "comment", "row_count"],
        [["sales", "orders", "BASE TABLE", "One row per order", 120],
         ["sales", "customers", "VIEW", "Customers", ""],
         ["web", "events_20240102", "BASE TABLE", "Click events", ""]],
    )  # fmt: skip
    fks = _csv(
        tmp_path / "fks.csv",
        ["table_schema", "table_name", "column_name", "referenced_table_schema", "referenced_table_name",
         "referenced_column_name", "constraint_type"],
        [["sales", "orders", "customer_id", "sales", "customers", "id", "FOREIGN KEY"],
         ["sales", "orders", "order_id", "", "", "", "PRIMARY KEY"],
         ["web", "events_20240101", "customer_id", "sales", "customers", "id", "FOREIGN KEY"],
         ["sales", "orders", "missing_col", "sales", "customers", "id", "FOREIGN KEY"]],
    )  # fmt: skip
    return columns, tables, fks


def test_csv_export(tmp_path, export):
    columns, tables, fks = export
    report = import_catalog_export(columns, tmp_path / "out", database="wh", tables=tables, foreign_keys=fks)
    db = load_schema(tmp_path / "out" / "wh.json")
    names = [t.name for t in db.tables]
    assert names == ["sales.customers", "sales.orders", "web.address_1", "web.address_2", "web.events_*"]
    orders = db.table("sales.orders")
    assert [c.name for c in orders.columns] == ["order_id", "customer_id", "amount"]  # ordinal order
    assert orders.description == "One row per order" and orders.row_count == 120
    assert orders.column("amount").type == "NUMBER(10,2)" and orders.column("amount").nullable
    assert orders.column("customer_id").description == "Who ordered"
    assert orders.primary_key == ["order_id"]
    assert (
        db.table("sales.customers").description == "Customers" and db.table("sales.customers").kind == "view"
    )
    assert orders.kind == "table"
    assert sorted(db.foreign_keys()) == [
        ("sales.orders", "customer_id", "sales.customers", "id"),
        ("web.events_*", "customer_id", "sales.customers", "id"),  # retargeted from a shard
    ]
    assert any("fks.csv: row 5: sales.orders.missing_col is not in --columns" in w for w in report.warnings)
    assert report.tables == 5 and report.foreign_keys == 2


def test_shard_family_collapsed(tmp_path, export):
    columns, tables, _ = export
    import_catalog_export(columns, tmp_path / "out", database="wh", tables=tables, dialect="bigquery")
    db = load_schema(tmp_path / "out" / "wh.json")
    events = db.table("web.events_*")
    assert [c.name for c in events.columns] == ["event_id", "customer_id", "referrer"]  # union, newest first
    assert events.description.startswith("Click events Sharded table family: 3 tables `web.events_20240101`")
    assert "(pattern `events_YYYYMMDD`, range 20240101 .. 20240103)" in events.description
    assert "_TABLE_SUFFIX BETWEEN '20240101' AND '20240103'" in events.description
    assert db.table("web.events_20240102") is None
    docs = tmp_path / "out" / "wh" / "docs"
    assert any("Sharded table family" in p.read_text() for p in docs.glob("web_events*.md"))


def test_a_short_table_comment_is_the_tables_label(tmp_path, export):
    """A comment that reads as a name (a data dictionary's short text) labels its table, so the
    name boost finds a coded table by its catalog's words; a sentence or a comment that only
    repeats the name labels nothing, so a readable export imports as before."""
    columns, tables, _ = export
    import_catalog_export(columns, tmp_path / "out", database="wh", tables=tables)
    db = load_schema(tmp_path / "out" / "wh.json")
    assert db.table("sales.orders").label == "One row per order"
    assert db.table("sales.customers").label is None  # "Customers": the name's own word
    assert db.table("web.events_*").label == "Click events"  # a family: its shards' comment
    assert db.table("web.address_1").label is None  # no comment

    erp_columns = _csv(
        tmp_path / "erp_columns.csv",
        COLS,
        [["ERP", "SAPSR3", code, "MANDT", 1, "VARCHAR(3)", "NO", "Client", ""]
         for code in ("KNA1", "VBAK", "ZSTG", "ZLOG")],
    )  # fmt: skip
    erp_tables = _csv(
        tmp_path / "erp_tables.csv",
        ["TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "COMMENT"],
        [["SAPSR3", "KNA1", "BASE TABLE", "General Data in Customer Master"],
         ["SAPSR3", "VBAK", "BASE TABLE", "Sales Document: Header Data"],
         ["SAPSR3", "ZSTG", "BASE TABLE", "Staging copy. Loaded nightly from the ERP, do not query."],
         ["SAPSR3", "ZLOG", "BASE TABLE", "Change log of every document " + "and its items " * 5]],
    )  # fmt: skip
    import_catalog_export(erp_columns, tmp_path / "erp", database="erp", tables=erp_tables)
    erp = load_schema(tmp_path / "erp" / "erp.json")
    assert {t.name: t.label for t in erp.tables} == {
        "KNA1": "General Data in Customer Master",
        "VBAK": "Sales Document: Header Data",
        "ZLOG": None,  # over 60 characters: a description
        "ZSTG": None,  # two sentences: a description
    }
    assert erp.table("ZLOG").description.startswith("Change log of every document")  # kept as it was
    # and the ranking's name match reads it: the catalog's words name the coded table
    art = in_memory_artifact(erp.model_dump(), [(t.name, "table", None) for t in erp.tables])
    named = named_tables(art, "how many customers are in the customer master data?", NameMatch(missing=1))
    assert [art.table_names[i] for i in np.flatnonzero(named)] == ["KNA1"]


def test_no_collapse_keeps_shards(tmp_path, export):
    columns, *_ = export
    import_catalog_export(columns, tmp_path / "out", database="wh", collapse_shards=False)
    db = load_schema(tmp_path / "out" / "wh.json")
    assert db.table("web.events_20240102") is not None and db.table("web.events_*") is None


def test_parquet_bigquery_field_paths(tmp_path):
    table = pa.table({
        "table_schema": ["ds"] * 4,
        "table_name": ["sessions"] * 4,
        "column_name": ["session_id", "device", "device", "device"],
        "field_path": ["session_id", "device", "device.os", "device.browser.name"],
        "data_type": ["STRING", "STRUCT<os STRING, browser STRUCT<name STRING>>", "STRING", "STRING"],
        "description": ["", "", "Operating system", "Browser name"],
    })  # fmt: skip
    pq.write_table(table, tmp_path / "cols.parquet")
    import_catalog_export(tmp_path / "cols.parquet", tmp_path / "out", database="bq", dialect="bigquery")
    db = load_schema(tmp_path / "out" / "bq.json")
    sessions = db.table("sessions")  # one schema: names stay unqualified
    assert [c.name for c in sessions.columns] == ["session_id", "device", "device.os", "device.browser.name"]
    assert sessions.column("device.os").description == "Operating system"


def test_missing_header_is_a_clear_error(tmp_path):
    bad = _csv(tmp_path / "c.csv", ["schema", "tbl", "col"], [["a", "b", "c"]])
    with pytest.raises(ImportFormatError, match=r"missing column.*table_name"):
        import_catalog_export(bad, tmp_path / "out", database="x")
    with pytest.raises(ImportFormatError, match="not found"):
        import_catalog_export(tmp_path / "nope.csv", tmp_path / "out", database="x")
    good = _csv(tmp_path / "ok.csv", ["table_name", "column_name"], [["t", "a"]])
    with pytest.raises(
        ImportFormatError, match=r"--dialect 'databricks' is not supported; use one of postgres"
    ):
        import_catalog_export(good, tmp_path / "out", database="x", dialect="databricks")


def test_family_knows_its_shards_and_sql_naming_a_shard_validates(tmp_path, export):
    from schemarag.app.querygen.sql_validation import validate_sql
    from schemarag.runtime.formatting import format_full_schema

    columns, *_ = export
    import_catalog_export(columns, tmp_path / "out", database="wh", dialect="snowflake")
    db = load_schema(tmp_path / "out" / "wh.json")
    shards = db.table("web.events_*").shards
    assert (shards.stem, shards.pattern, shards.first, shards.last, shards.count) == (
        "web.events_",
        "YYYYMMDD",
        "20240101",
        "20240103",
        3,
    )
    assert (
        '"events_*" ( -- 3 shards web.events_20240101 .. web.events_20240103, same columns: '
        "query a shard by its name, or UNION ALL the shards needed"
    ) in format_full_schema(db)
    ok = validate_sql(
        "SELECT e.event_id FROM web.events_20240102 AS e JOIN web.events_20240103 USING (event_id)", db
    )
    assert ok.valid is not False and not ok.errors, ok.errors
    assert ok.tables == ["web.events_*"]
    assert not validate_sql("SELECT event_id FROM web.events_20240104", db).valid  # not a shard that exists


def test_year_glued_to_a_word_is_a_family(tmp_path):
    """``gsod1929`` .. ``gsod2023`` (NOAA's yearly tables, a column added on the way) collapse into
    ``gsod*`` like dated shards; ``trips_2014`` style names keep the stricter number rule, and two
    tables with a year are no family."""
    from schemarag.app.querygen.sql_validation import validate_sql

    rows = []
    for year in (2019, 2020, 2021, 2022):
        rows += [["p", "noaa", f"gsod{year}", "stn", 1, "STRING", "NO", "", ""],
                 ["p", "noaa", f"gsod{year}", "temp", 2, "FLOAT64", "YES", "Mean temp", ""]]  # fmt: skip
    rows.append(["p", "noaa", "gsod2022", "flag_prcp", 3, "STRING", "YES", "", ""])
    rows += [["p", "noaa", "stations", "stn", 1, "STRING", "NO", "", ""],
             ["p", "noaa", "census2010", "pop", 1, "INT64", "YES", "", ""],
             ["p", "noaa", "census2020", "pop", 1, "INT64", "YES", "", ""]]  # fmt: skip
    columns = _csv(tmp_path / "columns.csv", COLS, rows)
    import_catalog_export(columns, tmp_path / "out", database="wx", dialect="bigquery")
    db = load_schema(tmp_path / "out" / "wx.json")
    gsod = db.table("gsod*")
    assert gsod is not None and db.table("gsod2020") is None
    s = gsod.shards
    assert (s.stem, s.pattern, s.first, s.last, s.count) == ("gsod", "YYYY", "2019", "2022", 4)
    assert [c.name for c in gsod.columns] == ["stn", "temp", "flag_prcp"]
    assert "one per year" in gsod.description
    assert "_TABLE_SUFFIX BETWEEN '2019' AND '2022'" in gsod.description
    assert db.table("census2010") is not None and db.table("census2020") is not None
    assert s.member("GSOD2021") and not s.member("gsod2023") and not s.member("gsod20210")
    ok = validate_sql("SELECT temp FROM gsod2021 WHERE stn = '725030'", db)
    assert ok.valid is not False and not ok.errors and ok.tables == ["gsod*"], ok.errors
