"""No database fails for one odd value: long nested types are kept (and compact in DDL), a type past
the bound is shortened, a dangerous one becomes TEXT, each with one warning naming table and
column, and the database still builds into an index that serves the odd table."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import dagster as dg
import pytest

from schemarag.pipelines.build import build_databases
from schemarag.runtime.core.errors import SchemaFileError
from schemarag.runtime.core.schema import MAX_TYPE_CHARS, load_schema
from schemarag.runtime.formatting import format_focused_schema, format_full_schema
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.importers.catalog_export import import_catalog_export

HEADER = [
    "table_catalog",
    "table_schema",
    "table_name",
    "column_name",
    "field_path",
    "data_type",
    "description",
]


def _struct(fields: int) -> str:
    """A GA4-like ``ARRAY<STRUCT<...>>`` type with ``fields`` nested fields (about 40 chars each)."""
    inner = ", ".join(f"field_{i:04d} STRUCT<string_value STRING, int_value INT64>" for i in range(fields))
    return f"ARRAY<STRUCT<{inner}>>"


def _export(tmp_path: Path, rows: list[list[str]]) -> Path:
    path = tmp_path / "columns.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _row(table: str, column: str, type_text: str, description: str = "") -> list[str]:
    return ["proj", "ds", table, column, column, type_text, description]


def test_2000_character_struct_is_kept_and_compact_in_ddl(tmp_path: Path) -> None:
    long_type = _struct(40)
    assert 2000 <= len(long_type) < MAX_TYPE_CHARS
    cols = _export(
        tmp_path,
        [
            _row("events", "event_name", "STRING", "Name of the event"),
            _row("events", "event_params", long_type, "Parameters of the event"),
            _row("sessions", "items", _struct(12)),  # long, with no nested field rows
        ],
    )
    report = import_catalog_export(cols, tmp_path / "out", database="ga", dialect="bigquery")
    db = load_schema(tmp_path / "out" / "ga.json")
    assert db.table("events").column("event_params").type == long_type
    assert report.warnings == []
    ddl = format_full_schema(db)
    assert "event_params ARRAY<STRUCT<...>> -- Parameters of the event" in ddl
    assert "items ARRAY<STRUCT<...>>" in ddl and "field_0001" not in ddl


def test_type_past_the_bound_is_shortened_with_one_warning(tmp_path: Path) -> None:
    huge = _struct(2000)
    assert len(huge) > MAX_TYPE_CHARS
    cols = _export(tmp_path, [_row("firebase", "user_properties", huge), _row("firebase", "id", "STRING")])
    report = import_catalog_export(cols, tmp_path / "out", database="fb", dialect="bigquery")
    column = load_schema(tmp_path / "out" / "fb.json").table("firebase").column("user_properties")
    assert column.type == "ARRAY<STRUCT<...>>"
    assert len(report.warnings) == 1
    assert (
        "ds.firebase.user_properties" in report.warnings[0]
        and f"{len(huge):,} characters" in report.warnings[0]
    )


@pytest.mark.parametrize(
    "evil",
    [
        "INT); DROP TABLE users; --",
        "INT /* hidden */",
        "INT, is_admin BOOLEAN",
        "STRUCT<a INT>>)",
        "TEXT\x00",
    ],
)
def test_dangerous_type_becomes_text_and_cannot_reach_the_ddl(tmp_path: Path, evil: str) -> None:
    cols = _export(tmp_path, [_row("t", "ok", "INT64"), _row("t", "odd", evil)])
    report = import_catalog_export(cols, tmp_path / "out", database="d", dialect="bigquery")
    table = load_schema(tmp_path / "out" / "d.json").table("t")
    assert table.column("odd").type == "TEXT" and table.column("ok").type == "INT64"
    assert (
        len(report.warnings) == 1
        and "ds.t.odd" in report.warnings[0]
        and "imported as TEXT" in report.warnings[0]
    )
    ddl = format_full_schema(load_schema(tmp_path / "out" / "d.json"))
    assert "DROP" not in ddl and "hidden" not in ddl and "is_admin" not in ddl


def test_schema_file_with_a_dangerous_type_is_still_refused(tmp_path: Path) -> None:
    """The import is lenient; a hand-written schema JSON is not silently rewritten."""
    path = tmp_path / "x.json"
    path.write_text(
        json.dumps({"name": "x", "tables": [{"name": "t", "columns": [{"name": "a", "type": "INT; DROP"}]}]})
    )
    with pytest.raises(SchemaFileError, match=r"tables\[0\]\(t\)\.columns\[0\]\(a\)\.type"):
        load_schema(path)


def test_database_with_one_bad_column_builds_and_serves_it(tmp_path: Path) -> None:
    cols = _export(
        tmp_path,
        [
            _row("orders", "order_id", "INT64", "Order key"),
            _row("orders", "revenue", "NUMERIC", "Revenue in USD"),
            _row("web_events", "event_params", _struct(2000), "Tracking parameters of each web event"),
            _row("web_events", "page_url", "INT); DROP TABLE orders; --", "URL of the page viewed"),
        ],
    )
    data = tmp_path / "data"
    report = import_catalog_export(cols, data, database="shopdata", dialect="bigquery")
    assert len(report.warnings) == 2
    (built,) = build_databases(
        ["shopdata"], data, tmp_path / "artifacts", instance=dg.DagsterInstance.ephemeral()
    )
    assert built.ok, built
    retriever = Retriever.open("shopdata", artifacts=tmp_path / "artifacts")
    result = retriever.search("which pages did visitors view", top_k=4)
    assert "web_events" in [sc.chunk.table for sc in result.chunks]
    text = format_focused_schema(retriever.artifact.schema, result)
    assert "CREATE TABLE web_events (" in text and "event_params ARRAY<STRUCT<...>>" in text
    assert "page_url STRING" in text and "DROP" not in text
