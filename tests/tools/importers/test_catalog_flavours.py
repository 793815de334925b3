"""``import catalog`` reads each warehouse's catalog export as the warehouse writes it.

Small fixtures with the headers each warehouse documents for its catalog views (Snowflake
INFORMATION_SCHEMA/ACCOUNT_USAGE, BigQuery COLUMNS/COLUMN_FIELD_PATHS/TABLE_OPTIONS, PostgreSQL and
Redshift information_schema, Databricks Unity Catalog system.information_schema, MySQL), and each
compression a warehouse unload uses.
"""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemarag.runtime.core.schema import Database, load_schema
from schemarag.runtime.formatting import format_full_schema
from schemarag.tools.importers.catalog_export import import_catalog_export


def _csv_text(header: list[str], rows: list[list[object]], delimiter: str = ",") -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", delimiter=delimiter)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _write(path: Path, header: list[str], rows: list[list[object]], delimiter: str = ",") -> Path:
    """A CSV export, compressed as its extension says (pyarrow's codecs: what warehouses write)."""
    text = _csv_text(header, rows, delimiter).encode()
    with pa.output_stream(str(path), compression="detect") as out:
        out.write(text)
    return path


def _load(tmp_path: Path, name: str) -> Database:
    return load_schema(tmp_path / "out" / f"{name}.json")


# --------------------------------------------------------------------------- Snowflake
SNOWFLAKE_COLUMNS = [
    "TABLE_CATALOG",
    "TABLE_SCHEMA",
    "TABLE_NAME",
    "COLUMN_NAME",
    "ORDINAL_POSITION",
    "COLUMN_DEFAULT",
    "IS_NULLABLE",
    "DATA_TYPE",
    "CHARACTER_MAXIMUM_LENGTH",
    "NUMERIC_PRECISION",
    "NUMERIC_SCALE",
    "COMMENT",
]
SNOWFLAKE_TABLES = [
    "TABLE_CATALOG",
    "TABLE_SCHEMA",
    "TABLE_NAME",
    "TABLE_OWNER",
    "TABLE_TYPE",
    "ROW_COUNT",
    "BYTES",
    "COMMENT",
]


def test_snowflake_information_schema(tmp_path: Path) -> None:
    cols = _write(
        tmp_path / "columns.csv.gz",
        SNOWFLAKE_COLUMNS,
        [
            ["SALES_DB", "PUBLIC", "ORDERS", "ORDER_ID", 1, "", "NO", "NUMBER", "", 38, 0, "Order key"],
            ["SALES_DB", "PUBLIC", "ORDERS", "AMOUNT", 2, "", "YES", "NUMBER", "", 12, 2, ""],
            ["SALES_DB", "PUBLIC", "ORDERS", "STATUS", 3, "", "YES", "TEXT", 16777216, "", "", ""],
            ["SALES_DB", "PUBLIC", "ACTIVE_CUSTOMERS", "NAME", 1, "", "YES", "TEXT", 200, "", "", ""],
            ["SALES_DB", "INFORMATION_SCHEMA", "TABLES", "TABLE_NAME", 1, "", "YES", "TEXT", "", "", "", ""],
        ],
    )
    tables = _write(
        tmp_path / "tables.csv.gz",
        SNOWFLAKE_TABLES,
        [
            ["SALES_DB", "PUBLIC", "ORDERS", "SYSADMIN", "BASE TABLE", 1200, 4096, "One row per order"],
            [
                "SALES_DB",
                "PUBLIC",
                "ACTIVE_CUSTOMERS",
                "SYSADMIN",
                "VIEW",
                "",
                "",
                "Customers active this year",
            ],
        ],
    )
    report = import_catalog_export(
        cols, tmp_path / "out", database="sales", tables=tables, dialect="snowflake"
    )
    db = _load(tmp_path, "sales")
    assert [t.name for t in db.tables] == ["ACTIVE_CUSTOMERS", "ORDERS"]  # one schema: bare names
    orders = db.table("ORDERS")
    assert orders.row_count == 1200 and orders.kind == "table" and orders.description == "One row per order"
    assert [c.type for c in orders.columns] == ["NUMBER", "NUMBER(12,2)", "TEXT"]
    assert orders.column("ORDER_ID").description == "Order key" and not orders.column("ORDER_ID").nullable
    view = db.table("ACTIVE_CUSTOMERS")
    assert view.kind == "view" and view.column("NAME").type == "TEXT(200)"
    assert "CREATE VIEW ACTIVE_CUSTOMERS (" in format_full_schema(db)
    assert report.warnings == []


def test_snowflake_account_usage_spans_databases_and_skips_dropped(tmp_path: Path) -> None:
    cols = _write(
        tmp_path / "columns.csv",
        [*SNOWFLAKE_COLUMNS, "DELETED"],
        [
            ["SALES", "PUBLIC", "ORDERS", "ID", 1, "", "NO", "NUMBER", "", 38, 0, "", ""],
            ["MARKETING", "PUBLIC", "ORDERS", "ID", 1, "", "NO", "NUMBER", "", 38, 0, "", ""],
            [
                "MARKETING",
                "PUBLIC",
                "OLD_LEADS",
                "ID",
                1,
                "",
                "NO",
                "NUMBER",
                "",
                38,
                0,
                "",
                "2024-01-02 10:00:00",
            ],
        ],
    )
    tables = _write(
        tmp_path / "tables.csv",
        SNOWFLAKE_TABLES,
        [
            ["MARKETING", "PUBLIC", "ORDERS", "SYSADMIN", "BASE TABLE", 7, "", "Campaign orders"],
        ],
    )
    report = import_catalog_export(
        cols, tmp_path / "out", database="acct", tables=tables, dialect="snowflake"
    )
    db = _load(tmp_path, "acct")
    # two databases hold PUBLIC.ORDERS: 3-part names keep them apart, no "listed twice"
    assert [t.name for t in db.tables] == ["MARKETING.PUBLIC.ORDERS", "SALES.PUBLIC.ORDERS"]
    assert db.table("MARKETING.PUBLIC.ORDERS").row_count == 7
    assert db.table("SALES.PUBLIC.ORDERS").row_count is None
    assert report.warnings == []


# --------------------------------------------------------------------------- BigQuery
def test_bigquery_columns_field_paths_and_table_options(tmp_path: Path) -> None:
    event_params = "ARRAY<STRUCT<key STRING, value STRUCT<string_value STRING, int_value INT64>>>"
    cols = _write(
        tmp_path / "column_field_paths.csv.gz",
        [
            "table_catalog",
            "table_schema",
            "table_name",
            "column_name",
            "field_path",
            "data_type",
            "description",
            "collation_name",
            "rounding_mode",
            "policy_tags",
        ],
        [
            [
                "my-project",
                "analytics_1",
                "events_20240101",
                "event_name",
                "event_name",
                "STRING",
                "Event name",
                "",
                "",
                "",
            ],
            [
                "my-project",
                "analytics_1",
                "events_20240101",
                "event_params",
                "event_params",
                event_params,
                "",
                "",
                "",
                "",
            ],
            [
                "my-project",
                "analytics_1",
                "events_20240101",
                "event_params",
                "event_params.key",
                "STRING",
                "Param key",
                "",
                "",
                "",
            ],
            [
                "my-project",
                "analytics_1",
                "events_20240101",
                "event_params",
                "event_params.value.int_value",
                "INT64",
                "",
                "",
                "",
                "",
            ],
            ["my-project", "analytics_1", "users", "user_id", "user_id", "STRING", "", "", "", ""],
            *[
                [
                    "my-project",
                    "analytics_1",
                    f"events_{day}",
                    "event_name",
                    "event_name",
                    "STRING",
                    "",
                    "",
                    "",
                    "",
                ]
                for day in ("20240102", "20240103")
            ],
        ],
    )
    options = _write(
        tmp_path / "table_options.csv",
        ["table_catalog", "table_schema", "table_name", "option_name", "option_type", "option_value"],
        [
            ["my-project", "analytics_1", "users", "description", "STRING", '"One row per \\"user\\""'],
            [
                "my-project",
                "analytics_1",
                "users",
                "labels",
                "ARRAY<STRUCT<STRING, STRING>>",
                '[STRUCT("a", "b")]',
            ],
        ],
    )
    report = import_catalog_export(cols, tmp_path / "out", database="ga4", tables=options, dialect="bigquery")
    db = _load(tmp_path, "ga4")
    assert [t.name for t in db.tables] == ["events_*", "users"]
    assert db.table("users").description == 'One row per "user"'
    events = db.table("events_*")
    assert [c.name for c in events.columns] == [
        "event_name",
        "event_params",
        "event_params.key",
        "event_params.value.int_value",
    ]
    assert events.column("event_params").type == event_params  # kept whole in the schema
    ddl = format_full_schema(db)
    assert "event_params ARRAY<STRUCT<...>>" in ddl  # compact in DDL: the fields are lines of their own
    assert "`event_params.key` STRING" in ddl
    assert report.raw_tables == 4 and report.warnings == []


# --------------------------------------------------------------------------- PostgreSQL / Redshift
PG_COLUMNS = [
    "table_catalog",
    "table_schema",
    "table_name",
    "column_name",
    "ordinal_position",
    "column_default",
    "is_nullable",
    "data_type",
    "character_maximum_length",
    "numeric_precision",
    "numeric_scale",
    "udt_name",
    "column_comment",
]


def test_postgres_information_schema_with_pg_description(tmp_path: Path) -> None:
    cols = _write(
        tmp_path / "columns.csv.bz2",
        PG_COLUMNS,
        [
            [
                "shop",
                "public",
                "orders",
                "id",
                1,
                "nextval('orders_id_seq')",
                "NO",
                "integer",
                "",
                32,
                0,
                "int4",
                "",
            ],
            [
                "shop",
                "public",
                "orders",
                "total",
                2,
                "",
                "YES",
                "numeric",
                "",
                12,
                2,
                "numeric",
                "Gross, in EUR",
            ],
            [
                "shop",
                "public",
                "orders",
                "email",
                3,
                "",
                "YES",
                "character varying",
                255,
                "",
                "",
                "varchar",
                "",
            ],
            ["shop", "public", "orders", "tags", 4, "", "YES", "ARRAY", "", "", "", "_text", ""],
            ["shop", "public", "orders", "mood", 5, "", "YES", "USER-DEFINED", "", "", "", "mood", ""],
            ["shop", "crm", "leads", "id", 1, "", "NO", "bigint", "", 64, 0, "int8", ""],
            ["shop", "pg_catalog", "pg_class", "oid", 1, "", "NO", "oid", "", "", "", "oid", ""],
        ],
    )
    tables = _write(
        tmp_path / "tables.csv",
        ["table_catalog", "table_schema", "table_name", "table_type", "n_live_tup", "table_comment"],
        [
            ["shop", "public", "orders", "BASE TABLE", 5000, "Orders placed online"],
            ["shop", "crm", "leads", "FOREIGN", -1, ""],
        ],
    )
    import_catalog_export(cols, tmp_path / "out", database="shop", tables=tables)
    db = _load(tmp_path, "shop")
    assert [t.name for t in db.tables] == ["crm.leads", "public.orders"]  # two schemas: schema.table
    orders = db.table("public.orders")
    assert [c.type for c in orders.columns] == [
        "integer",
        "numeric(12,2)",
        "character varying(255)",
        "text[]",
        "mood",
    ]
    assert orders.column("total").description == "Gross, in EUR" and orders.row_count == 5000
    assert db.table("crm.leads").kind == "external" and db.table("crm.leads").row_count is None


def test_redshift_svv_columns_remarks_and_table_info(tmp_path: Path) -> None:
    cols = _write(
        tmp_path / "svv_columns.csv",
        [
            "table_catalog",
            "table_schema",
            "table_name",
            "column_name",
            "ordinal_position",
            "is_nullable",
            "data_type",
            "remarks",
        ],
        [
            ["dev", "public", "sales", "salesid", 1, "NO", "integer", "Sale key"],
            ["dev", "public", "sales", "pricepaid", 2, "YES", "numeric(8,2)", ""],
        ],
    )
    info = _write(
        tmp_path / "svv_table_info.csv",
        ["database", "schema", "table", "tbl_rows"],
        [
            ["dev", "public", "sales", 172456],
        ],
    )
    import_catalog_export(cols, tmp_path / "out", database="tickit", tables=info, dialect="postgres")
    sales = _load(tmp_path, "tickit").table("sales")
    assert sales.row_count == 172456 and sales.column("salesid").description == "Sale key"
    assert sales.column("pricepaid").type == "numeric(8,2)"


# --------------------------------------------------------------------------- Databricks
def test_databricks_unity_catalog_system_information_schema(tmp_path: Path) -> None:
    table = pa.table(
        {
            "table_catalog": ["main", "main", "dev"],
            "table_schema": ["sales", "sales", "sales"],
            "table_name": ["orders", "orders", "orders"],
            "column_name": ["id", "items", "id"],
            "ordinal_position": [0, 1, 0],
            "is_nullable": ["NO", "YES", "NO"],
            "full_data_type": ["bigint", "array<struct<sku:string,qty:int>>", "bigint"],
            "data_type": ["LONG", "ARRAY", "LONG"],
            "comment": ["Order key", "Line items", None],
        }
    )
    pq.write_table(table, tmp_path / "columns.parquet")
    tables = pa.table(
        {
            "table_catalog": ["main", "dev"],
            "table_schema": ["sales", "sales"],
            "table_name": ["orders", "orders"],
            "table_type": ["MANAGED", "MATERIALIZED_VIEW"],
            "comment": ["Orders", None],
        }
    )
    pq.write_table(tables, tmp_path / "tables.parquet", compression="zstd")
    import_catalog_export(
        tmp_path / "columns.parquet",
        tmp_path / "out",
        database="uc",
        tables=tmp_path / "tables.parquet",
        dialect="postgres",
    )
    db = _load(tmp_path, "uc")
    assert [t.name for t in db.tables] == ["dev.sales.orders", "main.sales.orders"]
    main = db.table("main.sales.orders")
    assert main.column("items").type == "array<struct<sku:string,qty:int>>"  # full_data_type wins
    assert main.column("id").description == "Order key" and main.description == "Orders"
    assert db.table("dev.sales.orders").kind == "materialized_view"
    assert "CREATE MATERIALIZED VIEW dev.sales.orders (" in format_full_schema(db)


# --------------------------------------------------------------------------- MySQL
def test_mysql_information_schema(tmp_path: Path) -> None:
    header = [
        "TABLE_CATALOG",
        "TABLE_SCHEMA",
        "TABLE_NAME",
        "COLUMN_NAME",
        "ORDINAL_POSITION",
        "IS_NULLABLE",
        "DATA_TYPE",
        "COLUMN_TYPE",
        "COLUMN_KEY",
        "COLUMN_COMMENT",
    ]
    cols = _write(
        tmp_path / "columns.tsv",
        header,
        [
            ["def", "shop", "orders", "id", 1, "NO", "int", "int unsigned", "PRI", ""],
            [
                "def",
                "shop",
                "orders",
                "status",
                2,
                "YES",
                "enum",
                "enum('new','paid','it''s done')",
                "",
                "Order state",
            ],
            ["def", "shop", "orders", "total", 3, "YES", "decimal", "decimal(10,2)", "", ""],
        ],
        delimiter="\t",
    )
    tables = _write(
        tmp_path / "tables.csv",
        [
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "TABLE_TYPE",
            "ENGINE",
            "TABLE_ROWS",
            "TABLE_COMMENT",
        ],
        [
            ["def", "shop", "orders", "BASE TABLE", "InnoDB", 42, "Web shop orders"],
        ],
    )
    import_catalog_export(cols, tmp_path / "out", database="shop", tables=tables, dialect="mysql")
    orders = _load(tmp_path, "shop").table("orders")  # 'def' is not a catalog name
    assert orders.primary_key == ["id"] and orders.row_count == 42 and orders.description == "Web shop orders"
    assert [c.type for c in orders.columns] == [
        "int unsigned",
        "enum('new','paid','it''s done')",
        "decimal(10,2)",
    ]
    assert orders.column("status").description == "Order state"


# --------------------------------------------------------------------------- compression
@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".zst"])
def test_each_compression_reads_the_same(tmp_path: Path, suffix: str) -> None:
    header = ["table_schema", "table_name", "column_name", "data_type", "column_comment"]
    rows = [["s", "t", "a", "INT", 'Comment, with "quotes"\nand a newline'], ["s", "t", "b", "TEXT", ""]]
    cols = _write(tmp_path / f"columns.csv{suffix}", header, rows)
    import_catalog_export(cols, tmp_path / "out", database="c")
    t = _load(tmp_path, "c").table("t")
    assert [c.name for c in t.columns] == ["a", "b"]
    assert t.column("a").description == 'Comment, with "quotes"\nand a newline'


def test_compressed_file_without_its_extension_is_sniffed(tmp_path: Path) -> None:
    part = tmp_path / "000000000000"  # BigQuery EXPORT DATA writes names like this when told to
    part.write_bytes(gzip.compress(_csv_text(["table_name", "column_name"], [["t", "a"]]).encode()))
    import_catalog_export(part, tmp_path / "out", database="c")
    assert _load(tmp_path, "c").table("t") is not None
