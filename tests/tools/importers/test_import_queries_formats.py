"""Each warehouse's query-log view, exported the way that warehouse writes it, then imported.

Column names are those of the real views (Snowflake ACCOUNT_USAGE.QUERY_HISTORY, BigQuery
INFORMATION_SCHEMA.JOBS, pg_stat_statements, Redshift SYS_QUERY_HISTORY, Databricks
system.query.history, MySQL events_statements_summary_by_digest); the files are written as each
unload writes them (docs/query-history.md has the export queries).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemarag.assets.lib.query_history import open_queries
from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.query_log import history_dir, import_queries

TABLES = [
    {"name": "orders", "columns": [{"name": "id"}, {"name": "customer_id"}, {"name": "amount"}]},
    {"name": "customers", "columns": [{"name": "id"}, {"name": "name"}]},
]
JOIN = {
    "left_table": "customers",
    "left_column": "id",
    "right_table": "orders",
    "right_column": "customer_id",
}


def setup(tmp_path: Path, dialect: str, tables: list[dict] = TABLES) -> Path:
    data = tmp_path / "schemas"
    data.mkdir()
    (data / "wh.json").write_text(json.dumps({"name": "wh", "dialect": dialect, "tables": tables}))
    return data


def stored(data: Path) -> list[dict]:
    return open_queries(history_dir(data, "wh")).read().to_pylist()


def csv_text(header: list[str], body: list[list[object]], **kw) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", **kw)
    writer.writerow(header)
    writer.writerows(body)
    return out.getvalue()


def test_snowflake_query_history_unload(tmp_path: Path) -> None:
    """COPY INTO @stage/qh/ FROM (SELECT ... FROM SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY)
    FILE_FORMAT = (TYPE = CSV COMPRESSION = GZIP FIELD_OPTIONALLY_ENCLOSED_BY = '"') HEADER = TRUE:
    parts data_0_0_0.csv.gz..., upper-case headers, NULL written as \\N."""
    data = setup(tmp_path, "snowflake")
    header = ["QUERY_ID", "QUERY_TEXT", "DATABASE_NAME", "SCHEMA_NAME", "QUERY_TYPE", "USER_NAME",
              "ROLE_NAME", "WAREHOUSE_NAME", "EXECUTION_STATUS", "ERROR_CODE", "ERROR_MESSAGE",
              "START_TIME", "END_TIME", "TOTAL_ELAPSED_TIME"]  # fmt: skip
    join = (
        'SELECT c."NAME", SUM(o.AMOUNT) FROM ANALYTICS.PUBLIC.ORDERS o\n'
        "JOIN ANALYTICS.PUBLIC.CUSTOMERS c ON o.CUSTOMER_ID = c.ID WHERE c.NAME = 'ACME Corp' GROUP BY 1"
    )
    ok, null = "SUCCESS", r"\N"
    part0 = [
        ["01b2-1", join, "ANALYTICS", "PUBLIC", "SELECT", "ANN", "ANALYST", "WH", ok, null, null,
         "2024-05-01 09:00:00.000 -0700", "2024-05-01 09:00:01.000 -0700", "1000"],
        ["01b2-2", join.replace("ACME Corp", "Globex"), "ANALYTICS", "PUBLIC", "SELECT", "BOB", "ANALYST",
         "WH", ok, null, null, "2024-05-02 09:00:00.000 -0700", "2024-05-02 09:00:01.000 -0700", "900"],
    ]  # fmt: skip
    part1 = [
        ["01b2-3", "SELECT * FROM ORDERS WHERE ID = 1", "ANALYTICS", "PUBLIC", "SELECT", "ANN", "ANALYST",
         "WH", "FAIL", "002003", "Object does not exist", "2024-05-03 09:00:00.000 -0700",
         "2024-05-03 09:00:00.100 -0700", "100"],
        ["01b2-4", "INSERT INTO ORDERS VALUES (1, 2, 3)", "ANALYTICS", "PUBLIC", "INSERT", "ETL", "LOADER",
         "WH", ok, null, null, "2024-05-03 10:00:00.000 -0700", "2024-05-03 10:00:00.500 -0700", "500"],
        ["01b2-5", "SHOW TABLES", null, null, "SHOW", "ANN", "ANALYST", null, ok, null, null,
         "2024-05-03 11:00:00.000 -0700", "2024-05-03 11:00:00.100 -0700", "100"],
    ]  # fmt: skip
    unload = tmp_path / "qh"
    unload.mkdir()
    for i, body in enumerate((part0, part1)):
        text = csv_text(header, body)
        (unload / f"data_0_{i}_0.csv.gz").write_bytes(gzip.compress(text.encode()))
    report = import_queries([str(unload)], db="wh", data=data)
    (row,) = stored(data)
    assert row["count"] == 2 and row["users"] == 2 and row["source"] == "snowflake"
    assert (row["first_seen"], row["last_seen"]) == (
        "2024-05-01 09:00:00.000 -0700",
        "2024-05-02 09:00:00.000 -0700",
    )
    assert row["joins"] == [JOIN] and "ACME" not in row["sql"]
    assert dict(report.skipped) == {"failed": 1, "not_a_query": 2}


def test_bigquery_jobs_export_data_parquet(tmp_path: Path) -> None:
    """EXPORT DATA OPTIONS (uri = 'gs://b/jobs/*.parquet', format = 'PARQUET') AS SELECT ... FROM
    `region-us`.INFORMATION_SCHEMA.JOBS: parts 000000000000.parquet..., timestamps typed."""
    tables = [dict(t, name=f"shop.{t['name']}") for t in TABLES]
    data = setup(tmp_path, "bigquery", tables)
    ts = pa.timestamp("us", tz="UTC")
    query = (
        "SELECT c.name, SUM(o.amount) FROM `acme-prod.shop.orders` AS o "
        "JOIN `acme-prod`.shop.customers c ON o.customer_id = c.id WHERE o.amount > 100 GROUP BY c.name"
    )
    table = pa.table(
        {
            "creation_time": pa.array([1714550400000000, 1714636800000000, 1714723200000000], ts),
            "project_id": ["acme-prod"] * 3,
            "user_email": ["ann@acme.com", "ann@acme.com", "etl@acme.iam.gserviceaccount.com"],
            "job_id": ["bquxjob_1", "bquxjob_2", "bquxjob_3"],
            "job_type": ["QUERY", "QUERY", "LOAD"],
            "statement_type": ["SELECT", "SELECT", None],
            "state": ["DONE", "DONE", "DONE"],
            "query": [query, query.replace("100", "5"), None],
            "error_reason": [None, None, None],
            "total_bytes_processed": pa.array([1024, 2048, None], pa.int64()),
        }
    )
    folder = tmp_path / "jobs"
    folder.mkdir()
    pq.write_table(table.slice(0, 2), folder / "000000000000.parquet")
    pq.write_table(table.slice(2), folder / "000000000001.parquet")
    report = import_queries([str(tmp_path / "jobs" / "*.parquet")], db="wh", data=data)
    (row,) = stored(data)
    assert sorted(row["tables"]) == ["shop.customers", "shop.orders"] and row["count"] == 2
    assert row["joins"] == [{k: f"shop.{v}" if k.endswith("table") else v for k, v in JOIN.items()}]
    assert row["first_seen"].startswith("2024-05-01") and row["users"] == 1
    assert report.skipped == {"failed": 1}  # the LOAD job


def test_pg_stat_statements_psql_copy(tmp_path: Path) -> None:
    """\\copy (SELECT ... FROM pg_stat_statements ...) TO 'pgss.csv' WITH (FORMAT csv, HEADER):
    lower-case headers, literals already $n, calls per statement."""
    data = setup(tmp_path, "postgres")
    header = ["userid", "dbid", "toplevel", "queryid", "query", "calls", "total_exec_time", "rows"]
    body = [
        [10, 16384, "t", "-4217305312372419386",
         "SELECT c.name, sum(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id\n"
         "WHERE o.amount > $1 GROUP BY c.name", 42, 12.5, 84],
        [10, 16384, "t", "123", "UPDATE orders SET amount = $1 WHERE id = $2", 7, 1.0, 7],
        [10, 16384, "t", "456", "BEGIN", 50, 0.1, 0],
        [16, 16384, "t", "789", "SELECT name FROM customers WHERE id = $1", 3, 0.2, 3],
    ]  # fmt: skip
    (tmp_path / "pgss.csv").write_text(csv_text(header, body))
    import_queries([str(tmp_path / "pgss.csv")], db="wh", data=data)
    got = {r["sql"]: r for r in stored(data)}
    join = got[
        "SELECT c.name, SUM(o.amount) FROM orders AS o JOIN customers AS c ON o.customer_id = c.id "
        "WHERE o.amount > $1 GROUP BY c.name"
    ]
    assert join["count"] == 42 and join["joins"] == [JOIN] and join["source"] == "pg_stat_statements"
    assert got["SELECT name FROM customers WHERE id = $1"]["count"] == 3


def test_redshift_sys_query_history_unload(tmp_path: Path) -> None:
    """UNLOAD ('SELECT ... FROM SYS_QUERY_HISTORY ...') TO 's3://b/qh_' CSV HEADER GZIP: parts
    named qh_0000_part_00.gz (no .csv), lower-case headers, status in lower case."""
    data = setup(tmp_path, "postgres")
    header = ["user_id", "query_id", "transaction_id", "session_id", "database_name", "query_type",
              "status", "result_cache_hit", "start_time", "end_time", "elapsed_time", "error_message",
              "query_text"]  # fmt: skip
    text = (
        "select c.name, count(*) from public.orders o inner join public.customers c "
        "on c.id = o.customer_id where c.name like 'A%' group by c.name"
    )
    body = [
        [100, 9001, 1, 1, "dev", "SELECT", "success", "f", "2024-05-01 09:00:00.123", "", 1000, "", text],
        [100, 9002, 2, 1, "dev", "SELECT", "failed", "f", "2024-05-01 09:05:00", "", 10, "denied", text],
        [101, 9003, 3, 2, "dev", "COPY", "success", "f", "2024-05-01 10:00:00", "", 10, "", "copy x from 's3://x'"],
    ]  # fmt: skip
    unload = tmp_path / "unload"
    unload.mkdir()
    (unload / "qh_0000_part_00.gz").write_bytes(gzip.compress(csv_text(header, body).encode()))
    report = import_queries([str(unload / "qh_*")], db="wh", data=data)
    (row,) = stored(data)
    assert row["joins"] == [JOIN] and row["count"] == 1 and row["source"] == "redshift"
    assert "'A%'" not in row["sql"]
    assert dict(report.skipped) == {"failed": 1, "not_a_query": 1}


def test_databricks_query_history_spark_parquet(tmp_path: Path) -> None:
    """spark.table("system.query.history").where(...).write.parquet(path): a folder of
    part-00000-<uuid>-c000.snappy.parquet beside _SUCCESS and _committed_ markers."""
    tables = [dict(t, name=f"sales.{t['name']}") for t in TABLES]
    data = setup(tmp_path, "postgres", tables)
    text = (
        "SELECT c.name, SUM(o.amount) FROM main.sales.orders o JOIN main.sales.customers c "
        "USING (id) WHERE c.name = 'x' GROUP BY ALL"
    )
    table = pa.table(
        {
            "account_id": ["a1"] * 3,
            "workspace_id": ["w1"] * 3,
            "statement_id": ["s1", "s2", "s3"],
            "executed_by": ["ann@acme.com", "bob@acme.com", "ann@acme.com"],
            "session_id": ["x", "y", "z"],
            "execution_status": ["FINISHED", "FINISHED", "FAILED"],
            "statement_text": [text, "SELECT name FROM main.sales.customers", "SELECT nope FROM t"],
            "statement_type": ["SELECT", "SELECT", "SELECT"],
            "error_message": [None, None, "UNRESOLVED_COLUMN"],
            "client_application": ["Databricks SQL Editor"] * 3,
            "start_time": pa.array([1714550400000000] * 3, pa.timestamp("us", tz="UTC")),
        }
    )
    out = tmp_path / "history"
    out.mkdir()
    pq.write_table(table, out / "part-00000-3f1c-c000.snappy.parquet", compression="snappy")
    (out / "_SUCCESS").write_text("")
    (out / "_committed_123").write_text("{}")
    report = import_queries([str(out)], db="wh", data=data, dialect="databricks")
    got = {r["sql"]: r for r in stored(data)}
    assert len(got) == 2 and report.skipped == {"failed": 1}
    join = next(r for r in got.values() if len(r["tables"]) == 2)
    assert join["joins"] == [
        {
            "left_table": "sales.customers",
            "left_column": "id",
            "right_table": "sales.orders",
            "right_column": "id",
        }
    ]


def test_mysql_digest_summary_batch_tsv(tmp_path: Path) -> None:
    """mysql --batch -e "SELECT ... FROM performance_schema.events_statements_summary_by_digest"
    > digests.tsv: a header row, tabs, NULL as the word NULL; DIGEST_TEXT already has ? and a
    digest over performance_schema_max_digest_length ends in '...'."""
    data = setup(tmp_path, "mysql")
    header = ["SCHEMA_NAME", "DIGEST", "DIGEST_TEXT", "COUNT_STAR", "SUM_TIMER_WAIT", "FIRST_SEEN",
              "LAST_SEEN", "QUERY_SAMPLE_TEXT"]  # fmt: skip
    digest = (
        "SELECT `c` . `name` , SUM ( `o` . `amount` ) FROM `orders` `o` JOIN `customers` `c` "
        "ON `o` . `customer_id` = `c` . `id` WHERE `c` . `name` = ? GROUP BY `c` . `name`"
    )
    body = [
        ["shop", "3f2a", digest, "17", "123456", "2024-05-01 09:00:00.000000", "2024-05-09 09:00:00.000000",
         "SELECT c.name FROM orders o JOIN customers c ON o.customer_id = c.id WHERE c.name = 'x'"],
        ["shop", "9b1c", "SELECT `name` FROM `customers` WHERE `id` IN (...) AND `name` LIKE ? ORDER BY `...",
         "4", "1", "2024-05-01 09:00:00.000000", "2024-05-01 09:00:00.000000", "NULL"],
        ["NULL", "77aa", "SHOW VARIABLES LIKE ?", "90", "1", "2024-05-01 09:00:00.000000",
         "2024-05-01 09:00:00.000000", "NULL"],
    ]  # fmt: skip
    (tmp_path / "digests.tsv").write_text(
        "\t".join(header) + "\n" + "".join("\t".join(r) + "\n" for r in body)
    )
    report = import_queries([str(tmp_path / "digests.tsv")], db="wh", data=data)
    (row,) = stored(data)
    assert row["count"] == 17 and row["joins"] == [JOIN] and row["source"] == "mysql"
    assert row["last_seen"].startswith("2024-05-09")
    assert report.skipped["unparsable"] == 1 and report.skipped["not_a_query"] == 1


def test_generic_csv_with_questions(tmp_path: Path) -> None:
    """Question/SQL pairs a team keeps (Vanna's training data shape): question, sql."""
    data = setup(tmp_path, "postgres")
    (tmp_path / "pairs.csv.zst").write_bytes(
        _zstd(csv_text(["question", "sql"], [["Top customers by revenue?", "select c.name from customers c "
              "join orders o on o.customer_id = c.id order by o.amount desc limit 10"]]).encode())
    )  # fmt: skip
    import_queries([str(tmp_path / "pairs.csv.zst")], db="wh", data=data)
    (row,) = stored(data)
    assert row["question"] == "Top customers by revenue?" and row["joins"] == [JOIN]
    assert row["sql"].endswith("LIMIT 10")


def _zstd(raw: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as stream:
        stream.write(raw)
    return sink.getvalue().to_pybytes()


def test_wrong_header_names_the_file_and_the_columns(tmp_path: Path) -> None:
    data = setup(tmp_path, "postgres")
    (tmp_path / "columns.csv").write_text("table_name,column_name\norders,id\n")
    with pytest.raises(ImportFormatError) as err:
        import_queries([str(tmp_path / "columns.csv")], db="wh", data=data)
    message = str(err.value)
    assert message.startswith(f"{tmp_path / 'columns.csv'}: no query column in the header")
    assert "QUERY_TEXT + EXECUTION_STATUS (Snowflake)" in message and "\n" not in message
