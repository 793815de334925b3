"""``import queries`` on a catalog that qualifies its tables, with a log that does not.

A Snowflake or PostgreSQL catalog export names tables ``schema.table``; analysts who ran ``USE
SCHEMA`` or set a ``search_path`` log ``FROM KNA1``. Those statements must reach the history
(``tools/importers/query_log/short_names.py``), and a name two schemas hold must not be guessed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.runtime.core.schema import Database
from schemarag.tools.importers.query_log import import_queries
from schemarag.tools.importers.query_log.short_names import fold_short_names
from tests.tools.importers.test_import_queries import rows, write_schema


def _cols(*names: str) -> list[dict]:
    return [{"name": n} for n in names]


ERP = {
    "name": "erp",
    "dialect": "snowflake",
    "tables": [
        {"name": "SAPABAP1.KNA1", "columns": _cols("MANDT", "KUNNR", "NAME1")},
        {"name": "SAPABAP1.VBAK", "columns": _cols("MANDT", "VBELN", "KUNNR", "NETWR")},
        {"name": "SAPABAP1.VBAP", "columns": _cols("MANDT", "VBELN", "POSNR", "MATNR")},
        {"name": "ARCHIVE.VBAK", "columns": _cols("MANDT", "VBELN", "KUNNR", "NETWR")},
        {"name": "ARCHIVE.VBAP", "columns": _cols("MANDT", "VBELN", "POSNR", "MATNR")},
    ],
}


def _import(tmp_path: Path, statements: list[str | dict], append: bool = False) -> tuple[list[dict], object]:
    data = tmp_path / "schemas"
    if not append:
        write_schema(data, ERP)
    log = tmp_path / "log.jsonl"
    lines = [s if isinstance(s, dict) else {"sql": s} for s in statements]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = import_queries([str(log)], db="erp", data=data, append=append)
    return rows(data, "erp"), report


def test_unqualified_names_resolve_to_the_one_table_that_ends_with_them(tmp_path: Path) -> None:
    got, report = _import(
        tmp_path,
        ["select k.name1, sum(v.netwr) from kna1 k join sapabap1.vbak v on k.kunnr = v.kunnr group by 1"],
    )
    (row,) = got
    assert sorted(row["tables"]) == ["SAPABAP1.KNA1", "SAPABAP1.VBAK"]
    assert [tuple(j.values()) for j in row["joins"]] == [("SAPABAP1.KNA1", "KUNNR", "SAPABAP1.VBAK", "KUNNR")]
    assert {"table": "SAPABAP1.KNA1", "column": "NAME1"} in row["columns"]
    assert report.skipped["no_known_table"] == 0
    # stored (and shown as an example) with the name the DDL shows; a qualified name as written
    assert "FROM SAPABAP1.KNA1 AS k JOIN sapabap1.vbak AS v" in row["sql"]


def test_the_sessions_schema_in_the_log_picks_among_schemas(tmp_path: Path) -> None:
    items = "select p.matnr, h.netwr from vbak h join vbap p on p.vbeln = h.vbeln"
    got, _ = _import(
        tmp_path,
        [
            {"sql": items, "schema": "ARCHIVE"},
            {"sql": items + " where h.netwr > 0", "schema": "PROD.SAPABAP1"},
        ],
    )
    assert sorted(tuple(sorted(r["tables"])) for r in got) == [
        ("ARCHIVE.VBAK", "ARCHIVE.VBAP"),
        ("SAPABAP1.VBAK", "SAPABAP1.VBAP"),
    ]
    # an --append resolves the stored rows again, without the log's schema: they name it now
    again, report = _import(tmp_path, ["select count(*) from kna1"], append=True)
    assert sorted(tuple(sorted(r["tables"])) for r in again) == [
        ("ARCHIVE.VBAK", "ARCHIVE.VBAP"),
        ("SAPABAP1.KNA1",),
        ("SAPABAP1.VBAK", "SAPABAP1.VBAP"),
    ]
    assert report.skipped["no_known_table"] == 0


def test_snowflake_query_history_schema_name_is_the_sessions_schema(tmp_path: Path) -> None:
    """QUERY_HISTORY's DATABASE_NAME and SCHEMA_NAME are the session's; unloaded as CSV."""
    data = write_schema(tmp_path / "schemas", ERP)
    items = "SELECT p.MATNR FROM VBAK h JOIN VBAP p ON p.VBELN = h.VBELN"
    csv_text = (
        "QUERY_ID,QUERY_TEXT,DATABASE_NAME,SCHEMA_NAME,USER_NAME,EXECUTION_STATUS,START_TIME\n"
        f'1,"{items}",PROD,ARCHIVE,ANN,SUCCESS,2024-05-01 09:00:00.000 -0700\n'
        f'2,"{items}",\\N,\\N,BOB,SUCCESS,2024-05-02 09:00:00.000 -0700\n'
    )
    (tmp_path / "qh.csv").write_text(csv_text)
    report = import_queries([str(tmp_path / "qh.csv")], db="erp", data=data)
    (row,) = rows(data, "erp")
    assert sorted(row["tables"]) == ["ARCHIVE.VBAK", "ARCHIVE.VBAP"] and row["source"] == "snowflake"
    assert report.skipped["no_known_table"] == 1  # no session schema and nothing else to go by


def test_a_name_two_schemas_hold_follows_the_statements_other_tables(tmp_path: Path) -> None:
    got, report = _import(
        tmp_path,
        [
            # KNA1 is SAPABAP1's alone, so VBAK is SAPABAP1's too
            "select count(*) from kna1 join vbak on kna1.kunnr = vbak.kunnr",
            # archive.vbak written in full: its item table is archive's
            "select p.matnr from archive.vbak h join vbap p on p.vbeln = h.vbeln",
            # ... also written with its database, longer than the schema's name (as validate folds it)
            "select p.posnr from prod.archive.vbak h join vbap p on p.vbeln = h.vbeln",
            # both names in two schemas and nothing else to go by: not guessed
            "select p.matnr from vbak h join vbap p on p.vbeln = h.vbeln",
        ],
    )
    tables = sorted(tuple(sorted(r["tables"])) for r in got)
    assert tables == [
        ("ARCHIVE.VBAK", "ARCHIVE.VBAP"),
        ("ARCHIVE.VBAK", "ARCHIVE.VBAP"),
        ("SAPABAP1.KNA1", "SAPABAP1.VBAK"),
    ]
    assert report.skipped["no_known_table"] == 1


def test_a_cte_named_like_a_table_stays_the_cte() -> None:
    import sqlglot

    db = Database.model_validate(ERP)
    tree = sqlglot.parse_one("with kna1 as (select 1 as kunnr) select * from kna1", read="snowflake")
    assert fold_short_names(tree, db) is tree  # nothing to fold: the CTE shadows the table
    folded = fold_short_names(sqlglot.parse_one("select * from Kna1", read="snowflake"), db)
    assert folded.sql(dialect="snowflake") == "SELECT * FROM SAPABAP1.KNA1 AS Kna1"


def test_a_schema_of_plain_names_is_untouched() -> None:
    import sqlglot

    db = Database.model_validate({"name": "s", "tables": [{"name": "orders", "columns": _cols("id")}]})
    tree = sqlglot.parse_one("select id from orders")
    assert fold_short_names(tree, db) is tree


def test_default_schema_for_a_log_that_does_not_say_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_stat_statements and BigQuery's JOBS carry no session schema: ``--default-schema`` says it
    (a search_path), and a line's own ``schema`` still wins."""
    from schemarag.cli import main

    data = write_schema(tmp_path / "schemas", ERP)
    log = tmp_path / "log.jsonl"
    items = "select p.matnr from vbak h join vbap p on p.vbeln = h.vbeln"
    lines = [{"sql": items}, {"sql": items + " where h.netwr > 0", "schema": "SAPABAP1"}]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    args = ["import", "queries", "--db", "erp", "--data", str(data), str(log)]
    assert main([*args, "--default-schema", "archive"]) == 0
    capsys.readouterr()
    assert sorted(tuple(sorted(r["tables"])) for r in rows(data, "erp")) == [
        ("ARCHIVE.VBAK", "ARCHIVE.VBAP"),
        ("SAPABAP1.VBAK", "SAPABAP1.VBAP"),
    ]
    # a schema no table lives in: one line naming it and the schemas there are; nothing replaced
    assert main([*args, "--default-schema", "SALES"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "--default-schema 'SALES': no table of erp is in that schema; pass one of archive, sapabap1" in err
    assert len(rows(data, "erp")) == 2


# A BigQuery project with the same tables in two datasets (a staging copy beside production), as
# `import catalog` names them from INFORMATION_SCHEMA.COLUMNS: project.dataset.table.
WAREHOUSE = {
    "name": "wh",
    "dialect": "bigquery",
    "tables": [
        {"name": "acme.sales.orders", "columns": _cols("order_id", "customer_id", "amount")},
        {"name": "acme.sales.customers", "columns": _cols("customer_id", "region")},
        {"name": "acme.staging.orders", "columns": _cols("order_id", "customer_id", "amount")},
        {"name": "acme.staging.customers", "columns": _cols("customer_id", "region")},
    ],
}
# written with the job's default dataset: nothing in the text says which dataset
SHORT = (
    "SELECT c.region, SUM(o.amount) FROM orders o JOIN customers c"
    " ON o.customer_id = c.customer_id GROUP BY 1"
)


def _ref(dataset: str, *tables: str) -> list[dict[str, str]]:
    """``referenced_tables`` as JOBS holds it: ARRAY<STRUCT<project_id, dataset_id, table_id>>."""
    return [{"project_id": "acme", "dataset_id": dataset, "table_id": t} for t in tables]


def test_bigquery_jobs_referenced_tables_pick_the_dataset_in_a_parquet_export(tmp_path: Path) -> None:
    """EXPORT DATA ... FORMAT PARQUET of JOBS with ``referenced_tables`` (an array of structs) and
    ``error_result`` (a struct, NULL for a job that ran): the job's own list of the tables it read
    says which dataset a name written without one is in."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = write_schema(tmp_path / "schemas", WAREHOUSE)
    error = pa.struct([("reason", pa.string()), ("location", pa.string()), ("message", pa.string())])
    table = pa.table(
        {
            "job_id": ["j1", "j2", "j3", "j4"],
            "creation_time": pa.array([1714550400000000] * 4, pa.timestamp("us", tz="UTC")),
            "user_email": ["ann@acme.com"] * 4,
            "job_type": ["QUERY"] * 4,
            "statement_type": ["SELECT"] * 4,
            "state": ["DONE"] * 4,
            "query": [SHORT, SHORT + " LIMIT 10", SHORT + " LIMIT 5", SHORT + " LIMIT 1"],
            "referenced_tables": [
                _ref("staging", "orders", "customers"),
                _ref("sales", "customers", "orders"),
                None,  # nothing said: the name stays unknown, as no other rule names one
                _ref("sales", "orders", "customers"),
            ],
            "error_result": pa.array(
                [
                    None,
                    {"reason": None, "location": None, "message": None},
                    None,
                    {"reason": "invalidQuery", "location": "query", "message": "Syntax error"},
                ],
                error,
            ),
        }
    )
    pq.write_table(table, tmp_path / "jobs.parquet")
    report = import_queries([str(tmp_path / "jobs.parquet")], db="wh", data=data)
    got = sorted(tuple(sorted(r["tables"])) for r in rows(data, "wh"))
    assert got == [
        ("acme.sales.customers", "acme.sales.orders"),  # an error_result of nulls: the job ran
        ("acme.staging.customers", "acme.staging.orders"),
    ]
    assert report.skipped["no_known_table"] == 1 and report.skipped["failed"] == 1
    (staging,) = [r for r in rows(data, "wh") if "acme.staging.orders" in r["tables"]]
    assert staging["joins"] == [
        {"left_table": "acme.staging.customers", "left_column": "customer_id",
         "right_table": "acme.staging.orders", "right_column": "customer_id"}
    ]  # fmt: skip


def test_bigquery_referenced_tables_as_json_text_in_csv_and_as_a_list_in_jsonl(tmp_path: Path) -> None:
    """A CSV export cannot hold an array: ``TO_JSON_STRING(referenced_tables)`` writes it as JSON
    text. ``bq query --format=json`` (a .jsonl of job rows) keeps the list; a list of names works
    too. A hint that is not JSON is no hint: the statement is still read by the other rules."""
    import csv

    data = write_schema(tmp_path / "schemas", WAREHOUSE)
    with (tmp_path / "jobs.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "creation_time", "job_type", "state", "query", "referenced_tables"])
        job = ["2024-05-01 00:00:00 UTC", "QUERY", "DONE"]
        w.writerow(["j1", *job, SHORT, json.dumps(_ref("staging", "orders", "customers"))])
        other = "SELECT COUNT(*) FROM orders JOIN sales.customers USING (customer_id)"
        w.writerow(["j2", *job, other, "[{not json"])
    import_queries([str(tmp_path / "jobs.csv")], db="wh", data=data)
    assert sorted(tuple(sorted(r["tables"])) for r in rows(data, "wh")) == [
        ("acme.sales.customers", "acme.sales.orders"),  # the bad hint ignored: sales, from customers
        ("acme.staging.customers", "acme.staging.orders"),
    ]
    # a table of statements of its own (the generic CSV: sql, referenced_tables as names)
    with (tmp_path / "mine.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["sql", "referenced_tables"], [SHORT + " LIMIT 7", "acme.staging.orders"]])
    import_queries([str(tmp_path / "mine.csv")], db="wh", data=data)
    assert [sorted(r["tables"]) for r in rows(data, "wh")] == [
        ["acme.staging.customers", "acme.staging.orders"]
    ]
    log = tmp_path / "jobs.jsonl"
    lines = [
        {"query": SHORT, "referenced_tables": _ref("sales", "orders", "customers")},
        {"query": SHORT + " LIMIT 3", "referenced_tables": ["acme.staging.orders", "acme.staging.customers"]},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = import_queries([str(log)], db="wh", data=data)
    assert sorted(tuple(sorted(r["tables"])) for r in rows(data, "wh")) == [
        ("acme.sales.customers", "acme.sales.orders"),
        ("acme.staging.customers", "acme.staging.orders"),
    ]
    assert report.skipped["no_known_table"] == 0


def test_snowflake_access_history_direct_objects_pick_the_schema(tmp_path: Path) -> None:
    """QUERY_HISTORY joined with ACCESS_HISTORY on QUERY_ID and unloaded as CSV: the VARIANT
    ``DIRECT_OBJECTS_ACCESSED`` is JSON text, each object's ``objectName`` a full name. It names
    the schema where the session's schema is NULL (a worksheet that ran ``USE SCHEMA`` after
    logging in, or a query through a connector that never set one)."""
    data = write_schema(tmp_path / "schemas", ERP)
    items = "SELECT p.MATNR FROM VBAK h JOIN VBAP p ON p.VBELN = h.VBELN"
    objects = [
        {"objectDomain": "Table", "objectId": 1, "objectName": "PROD.ARCHIVE.VBAK", "columns": []},
        {"objectDomain": "Table", "objectId": 2, "objectName": "PROD.ARCHIVE.VBAP", "columns": []},
    ]
    escaped = json.dumps(objects).replace('"', '""')
    (tmp_path / "qh.csv").write_text(
        "QUERY_ID,QUERY_TEXT,DATABASE_NAME,SCHEMA_NAME,USER_NAME,EXECUTION_STATUS,START_TIME,DIRECT_OBJECTS_ACCESSED\n"
        f'1,"{items}",\\N,\\N,ANN,SUCCESS,2024-05-01 09:00:00.000 -0700,"{escaped}"\n'
    )
    report = import_queries([str(tmp_path / "qh.csv")], db="erp", data=data)
    (row,) = rows(data, "erp")
    assert sorted(row["tables"]) == ["ARCHIVE.VBAK", "ARCHIVE.VBAP"]
    assert report.skipped["no_known_table"] == 0


def test_a_date_shard_written_short_resolves_to_its_family_by_the_referenced_tables(tmp_path: Path) -> None:
    """``FROM events_20240105`` with a default dataset: the catalog collapsed the daily shards into
    ``ga4.events_*``, so no table ends with the name as written. The job's ``referenced_tables``
    names the shard in full, and the full name reads the family."""
    from tests.tools.importers.test_import_queries import _ga_schema

    users = {"name": "ga4.users", "columns": _cols("user_id", "country")}
    data = write_schema(tmp_path / "schemas", _ga_schema("20240131", 31, users))
    sql = "select u.country, count(*) from events_20240105 e join users u on u.user_id = e.user_id group by 1"
    month = "select event_name, count(*) from `events_202401*` group by 1"  # a wildcard written short
    lines = [
        {"query": sql, "referenced_tables": _ref("ga4", "events_20240105", "users")},
        {"query": sql + " limit 1"},  # nothing said: the shard stays unknown, the users table is read
        {"query": month, "referenced_tables": _ref("ga4", "events_20240101", "events_20240102")},
        {"query": month + " limit 1"},  # nothing said: no known table
    ]
    (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = import_queries([str(tmp_path / "jobs.jsonl")], db="ga", data=data)
    got = sorted(tuple(sorted(r["tables"])) for r in rows(data, "ga"))
    assert got == [("ga4.events_*",), ("ga4.events_*", "ga4.users"), ("ga4.users",)]
    assert report.skipped["no_known_table"] == 1


def test_a_hostile_referenced_tables_is_no_hint_and_loses_no_statement(tmp_path: Path) -> None:
    """Nested 100,000 deep, longer than a field may be, or not a list of tables: the statement is
    still imported by the other rules, and the import does not fail."""
    from schemarag.tools.importers.query_log.sources import MAX_REFERENCED, referenced_tables

    deep = "[" * 100_000 + "]" * 100_000
    assert referenced_tables(deep, 10**6) == ()
    assert referenced_tables('"p.sales.orders", `p.crm.x`', 99) == ("p.sales.orders", "p.crm.x")  # quoted
    assert referenced_tables("p.a.t," * 10, 20) == ()  # longer than the field limit
    many = [f"p.d.t{i}" for i in range(MAX_REFERENCED + 50)]
    assert len(referenced_tables(many, 10**6)) == MAX_REFERENCED
    data = write_schema(tmp_path / "schemas", WAREHOUSE)
    other = "SELECT COUNT(*) FROM orders JOIN sales.customers USING (customer_id)"
    lines = [
        {"query": other, "referenced_tables": deep},
        {"query": other + " LIMIT 2", "referenced_tables": {"a": 1}},
    ]
    (tmp_path / "jobs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = import_queries([str(tmp_path / "jobs.jsonl")], db="wh", data=data)
    assert [sorted(r["tables"]) for r in rows(data, "wh")] == [
        ["acme.sales.customers", "acme.sales.orders"]
    ] * 2
    assert report.skipped["no_known_table"] == 0


def test_names_several_schemas_hold_are_said_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A statement skipped because its short names are in several schemas says so, in the summary
    and in --verbose, with what to pass; a log of nothing else fails in one line that says it, and
    the stored history is left as it was."""
    from schemarag.cli import main

    items = "select p.matnr from vbak h join vbap p on p.vbeln = h.vbeln"
    got, report = _import(tmp_path, ["select count(*) from kna1", items, items + " where h.netwr > 0"])
    assert [r["tables"] for r in got] == [["SAPABAP1.KNA1"]]
    assert report.skipped["no_known_table"] == 2 and report.ambiguous == 2
    assert report.summary().endswith(
        "; 2 of them name only tables several schemas hold: pass --default-schema, or each statement's "
        "schema or referenced_tables (docs/query-history.md)"
    )
    assert any(
        "names only tables several schemas hold: vbak (SAPABAP1.VBAK, ARCHIVE.VBAK); "
        "vbap (SAPABAP1.VBAP, ARCHIVE.VBAP)" in line
        for line in report.skipped_list
    )
    # a table no schema holds is not called ambiguous
    _, other = _import(tmp_path, ["select count(*) from kna1", "select * from scratch_tbl"])
    assert other.skipped["no_known_table"] == 1 and other.ambiguous == 0
    assert "several schemas" not in other.summary()
    # nothing but such statements: one line naming the fix; the stored history stays
    log = tmp_path / "only.jsonl"
    log.write_text(json.dumps({"sql": items}) + "\n")
    data = tmp_path / "schemas"
    assert main(["import", "queries", "--db", "erp", "--data", str(data), str(log)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no statement kept (1 skipped: 1 touching no known table)" in err
    assert "1 name only tables several schemas hold: pass --default-schema" in err
    assert [r["tables"] for r in rows(data, "erp")] == [["SAPABAP1.KNA1"]]


def test_the_summary_counts_the_short_names_qualified_by_each_rule(tmp_path: Path) -> None:
    """What a log's ``FROM vbak`` was taken to mean is said per rule, counted per statement kept
    (a statement repeated in the log counts again, though its resolution is cached); a statement
    skipped counts nothing."""
    items = "select p.matnr from vbak h join vbap p on p.vbeln = h.vbeln"
    got, report = _import(
        tmp_path,
        [
            "select count(*) from kna1",  # KNA1: one table ends with it
            "select count(*) from kna1",  # the same text again: a cached outcome, counted again
            {"sql": items, "schema": "ARCHIVE"},  # two names, by the session's schema
            "select count(*) from kna1 join vbak on kna1.kunnr = vbak.kunnr",  # one, then the other's schema
            {"sql": "select * from vbak", "referenced_tables": ["PROD.ARCHIVE.VBAK"]},  # what it read
            "select * from vbak",  # several schemas hold it, nothing to go by: skipped, not counted
            "select * from sapabap1.vbak",  # written in full: nothing to qualify
        ],
    )
    assert len(got) == 5 and report.skipped["no_known_table"] == 1
    assert report.short_names == {"one_table": 3, "session": 2, "statement": 1, "read": 1}
    assert (
        "; 7 table name(s) written short were qualified: 3 by the one table it ends, 2 by the session's "
        "schema, 1 by the schema of the statement's other tables, 1 by the tables the log says the "
        "statement read; skipped 1:" in report.summary()
    )
    assert report.qualified_lines(2) == [  # --verbose: what each name became, most frequent first
        "kna1 -> SAPABAP1.KNA1 (the one table it ends): 3 time(s)",
        "vbak -> ARCHIVE.VBAK (the session's schema): 1 time(s)",
    ]
    # a log that names every table in full says nothing of it
    _, plain = _import(tmp_path, ["select * from sapabap1.vbak"])
    assert not plain.short_names and "written short" not in plain.summary()


def test_verbose_lists_what_each_short_name_became(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schemarag.cli import main

    data = write_schema(tmp_path / "schemas", ERP)
    log = tmp_path / "log.jsonl"
    statements = [
        {"sql": "select count(*) from vbak", "schema": "ARCHIVE"},
        {"sql": "select count(*) from kna1 join vbak using (kunnr)"},
    ]
    log.write_text("".join(json.dumps(s) + "\n" for s in statements))
    assert main(["import", "queries", "--db", "erp", "--data", str(data), "--verbose", str(log)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert "3 table name(s) written short were qualified" in err[0]
    assert sorted(line for line in err if line.startswith("  qualified ")) == [
        "  qualified kna1 -> SAPABAP1.KNA1 (the one table it ends): 1 time(s)",
        "  qualified vbak -> ARCHIVE.VBAK (the session's schema): 1 time(s)",
        "  qualified vbak -> SAPABAP1.VBAK (the schema of the statement's other tables): 1 time(s)",
    ]


def test_a_use_in_a_script_is_the_session_schema_of_the_statements_after_it(tmp_path: Path) -> None:
    """A ``.sql`` worksheet that switches schemas with ``USE SCHEMA`` logs its short names as the
    warehouse resolved them; the session is the file's (another file starts without one); a
    ``USE WAREHOUSE`` names no schema; a log line of several statements follows its own ``USE``."""
    data = write_schema(tmp_path / "schemas", ERP)
    (tmp_path / "worksheet.sql").write_text(
        "USE SCHEMA ARCHIVE;\n"
        "select p.matnr from vbak h join vbap p on p.vbeln = h.vbeln;\n"
        "USE WAREHOUSE reporting_wh;\n"
        "select count(*) from vbak;\n"
        "use schema prod.sapabap1;\n"
        "select count(*) from vbak where netwr > 0;\n"
    )
    (tmp_path / "other.sql").write_text("select count(*) from vbap;\n")  # no USE in this file
    line = {"sql": "USE SCHEMA ARCHIVE; select max(netwr) from vbak", "schema": "SAPABAP1"}
    (tmp_path / "lines.jsonl").write_text(json.dumps(line) + "\n")
    sources = [str(tmp_path / n) for n in ("worksheet.sql", "other.sql", "lines.jsonl")]
    report = import_queries(sources, db="erp", data=data)
    got = sorted((tuple(sorted(r["tables"])), r["sql"].split(" FROM ")[0]) for r in rows(data, "erp"))
    assert got == [
        (("ARCHIVE.VBAK",), "SELECT COUNT(*)"),
        (("ARCHIVE.VBAK",), "SELECT MAX(netwr)"),
        (("ARCHIVE.VBAK", "ARCHIVE.VBAP"), "SELECT p.matnr"),
        (("SAPABAP1.VBAK",), "SELECT COUNT(*)"),
    ]
    assert report.skipped == {"not_a_query": 4, "no_known_table": 1}  # the USEs; other.sql's vbap
    assert report.short_names == {"session": 5}


def test_set_search_path_in_a_postgres_script(tmp_path: Path) -> None:
    data = write_schema(tmp_path / "schemas", ERP)
    (tmp_path / "psql.sql").write_text(
        'SET search_path TO "$user", archive, public;\nselect count(*) from vbak;\n'
        "SET search_path = sapabap1;\nselect count(*) from vbap;\n"
    )
    report = import_queries([str(tmp_path / "psql.sql")], db="erp", data=data, dialect="postgres")
    assert sorted(tuple(r["tables"]) for r in rows(data, "erp")) == [("ARCHIVE.VBAK",), ("SAPABAP1.VBAP",)]
    assert report.short_names == {"session": 2} and report.skipped == {"not_a_query": 2}
