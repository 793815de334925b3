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
