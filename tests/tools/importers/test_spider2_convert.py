"""``schemarag import spider2``: the public Spider2 release (a few lines in its shapes, in
tests/fixtures/spider2_source) becomes the folder ``schemarag eval --warehouse`` reads."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.evaluation.warehouse import load_warehouse_questions
from schemarag.tools.importers.spider2 import COLUMNS_HEADER, convert_spider2

SOURCE = Path(__file__).resolve().parents[2] / "fixtures" / "spider2_source"


def _rows(path: Path) -> list[dict[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def out(tmp_path):
    lines: list[str] = []
    report = convert_spider2(SOURCE / "spider2-lite", tmp_path / "s2", progress=lines.append)
    return tmp_path / "s2", report, lines


def test_layout_and_progress(out):
    root, report, lines = out
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        "bigquery/ga4/columns.csv.gz", "bigquery/ga4/foreign_keys.csv", "bigquery/ga4/tables.csv",
        "questions.jsonl", "snowflake/DEPS_DEV_V1/columns.csv.gz", "snowflake/DEPS_DEV_V1/tables.csv",
        "sqlite/sqlite-sakila/columns.csv.gz", "sqlite/sqlite-sakila/tables.csv",
    ]  # fmt: skip
    assert [line.split(":")[1].strip() for line in lines] == ["bigquery", "snowflake", "sqlite"]
    assert report.engines["bigquery"].tables == 4 and report.questions == 3
    with gzip.open(root / "bigquery/ga4/columns.csv.gz", "rt") as fh:
        assert next(csv.reader(fh)) == COLUMNS_HEADER


def test_bigquery_nested_fields_ddl_only_tables_and_names(out):
    root = out[0]
    cols = _rows(root / "bigquery/ga4/columns.csv.gz")
    events = [(r["column_name"], r["field_path"], r["ordinal_position"], r["data_type"], r["column_comment"])
              for r in cols if r["table_name"] == "events_20210101"]  # fmt: skip
    assert events == [
        ("event_date", "event_date", "1", "STRING", "The date when the event was logged."),
        ("privacy_info", "privacy_info", "2", "STRUCT<analytics_storage INT64>", ""),
        (
            "privacy_info",
            "privacy_info.analytics_storage",
            "2",
            "INT64",
            "Whether Analytics storage is enabled.",
        ),
    ]
    ddl_only = [
        (r["column_name"], r["data_type"], r["column_comment"])
        for r in cols
        if r["table_name"] == "events_20210102"
    ]
    assert ddl_only == [
        ("event_date", "STRING", 'The date, "quoted".'),
        ("privacy_info", "STRUCT<analytics_storage INT64, ads_storage INT64>", ""),
    ]
    tables = _rows(root / "bigquery/ga4/tables.csv")
    assert [t["table_name"] for t in tables] == [
        " accident_2015",
        "accident_2015",
        "events_20210101",
        "events_20210102",
    ]
    assert {t["table_catalog"] for t in tables} == {"bigquery-public-data"}
    assert {t["table_schema"] for t in tables} == {"ga4_obfuscated_sample_ecommerce"}
    keys = _rows(root / "bigquery/ga4/foreign_keys.csv")
    assert [(k["table_name"], k["column_name"], k["constraint_type"]) for k in keys] == [
        (" accident_2015", "id", "PRIMARY KEY"),
        ("accident_2015", "id", "PRIMARY KEY"),
    ]


def test_snowflake_and_sqlite(out):
    root = out[0]
    tables = _rows(root / "snowflake/DEPS_DEV_V1/tables.csv")
    assert [(t["table_schema"], t["table_name"], t["table_comment"]) for t in tables] == [
        ("DEPS_DEV_V1", "PROJECTS", "Projects hosted on GitHub."),
        ("DEPS_DEV_V1", "SNAPSHOTS", ""),
    ]
    snow = _rows(root / "snowflake/DEPS_DEV_V1/columns.csv.gz")
    snap = [
        (r["column_name"], r["data_type"], r["column_comment"])
        for r in snow
        if r["table_name"] == "SNAPSHOTS"
    ]
    assert snap == [("Time", "NUMBER(38,0)", "When taken"), ("Count", "NUMBER(38,0)", "")]
    cols = _rows(root / "sqlite/sqlite-sakila/columns.csv.gz")
    assert {(r["table_catalog"], r["table_schema"]) for r in cols} == {("sqlite-sakila", "main")}
    others = [
        (r["table_name"], r["column_name"], r["data_type"]) for r in cols if r["table_name"] != "payment"
    ]
    assert others == [
        ("customer", "customer_id", "INT"), ("customer", "first_name", "VARCHAR(45)"),
        ("sqlite_sequence", "name", "TEXT"), ("sqlite_sequence", "seq", "TEXT"),
    ]  # fmt: skip


def test_questions_read_by_eval(out):
    root, report, _ = out
    records = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines()]
    assert [(r["instance_id"], r["engine"], r["db"]) for r in records] == [
        ("bq011", "bigquery", "ga4"),
        ("sf_bq350", "snowflake", "DEPS_DEV_V1"),
        ("local056", "sqlite", "sqlite-sakila"),
    ]
    assert records[1]["gold_tables"] == ["DEPS_DEV_V1.DEPS_DEV_V1.PROJECTS"]  # filed as bq350
    assert list(records[0]) == [
        "instance_id",
        "db",
        "engine",
        "question",
        "external_knowledge",
        "gold_tables",
    ]
    assert len(load_warehouse_questions(root / "questions.jsonl")) == 3
    assert any("bigquery/not_released: not found" in w for w in report.warnings)


def test_selection(tmp_path):
    report = convert_spider2(
        SOURCE / "spider2-lite", tmp_path / "o", engines=["sqlite"], dbs=["Sqlite-Sakila"]
    )
    assert sorted(report.engines) == ["sqlite"] and report.questions == 1
    assert not (tmp_path / "o" / "bigquery").exists()


@pytest.mark.parametrize(
    ("remove", "named"),
    [
        ("spider2-lite/spider2-lite.jsonl", "spider2-lite.jsonl"),
        ("methods", "spider2-lite-gold-tables.jsonl"),
        ("spider2-lite/resource", "databases"),
    ],
)
def test_missing_file_is_one_line_naming_it(tmp_path, remove, named):
    copy = tmp_path / "clone"
    shutil.copytree(SOURCE, copy)
    target = copy / remove
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    with pytest.raises(ImportFormatError) as err:
        convert_spider2(copy / "spider2-lite", tmp_path / "o")
    assert named in str(err.value) and "\n" not in str(err.value)


def test_cli(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "schemarag", "import", "spider2", "--source", str(SOURCE / "spider2-lite"),
         "--out", str(tmp_path / "o"), "--engines", "snowflake"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "spider2: snowflake: 1 databases, 2 tables" in run.stderr
    assert "next: schemarag eval --warehouse" in run.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "schemarag", "import", "spider2", "--source", str(tmp_path / "nope"),
         "--out", str(tmp_path / "x")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode != 0 and "nope: not found" in bad.stderr
