"""Names with control characters (issue 39, finding 3) never enter a schema.

The rule (SECURITY.md, "Names"): a table, column, schema or database name holding a C0 or C1
control character, DEL, NUL, U+2028 or U+2029 is refused where it enters. An import skips that
table or column with one warning that shows the name escaped (the rest of the database is
kept, as for any odd value); a schema JSON holding one is refused naming its path. So no
renderer (DDL, DDL comments, shard notes, doc headings, chunk text) can ever receive one: the
tests below import hostile names, then build and render everything and look for them."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from schemarag.pipelines.build import build_databases
from schemarag.runtime.core.errors import SchemaFileError
from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.formatting import format_focused_schema, format_full_schema
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.importers.catalog_export import import_catalog_export
from schemarag.tools.importers.dbt import import_dbt

CONTROL = ["\r", "\n", "\x00", "\x1b", "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\t"]
EVIL_TABLES = [
    "ev\r); DROP TABLE users; --_20240101",  # the issue's: \r ends the shard note's line comment
    "ev\r); DROP TABLE users; --_20240102",
    "orders\n# Table: admin_secrets",  # a newline split the doc's heading
    "x\u2028y",
    "nul\x00name",
]
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dbt_warehouse"


def _export(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["table_schema", "table_name", "column_name", "data_type", "column_comment"])
        for table, column, comment in rows:
            writer.writerow(["ds", table, column, "STRING", comment])
    return path


def _hostile(text: str) -> bool:
    return (
        any(c in text for c in CONTROL if c not in "\n\t")
        or "DROP TABLE users" in text
        or "admin_secrets" in text
    )


def test_catalog_import_skips_hostile_names_with_one_warning_each(tmp_path: Path) -> None:
    rows = [("orders", "order_id", "Order key"), ("orders", "status", "Order status")]
    rows += [(t, "id", "a row") for t in EVIL_TABLES]
    rows += [("orders", "amount\r); DROP TABLE users; --", "bad column"), ("orders", "note\x85x", "C1")]
    report = import_catalog_export(_export(tmp_path / "c.csv", rows), tmp_path / "out", database="d",
                                   dialect="bigquery")  # fmt: skip
    db = load_schema(tmp_path / "out" / "d.json")
    assert [t.name for t in db.tables] == ["orders"]
    assert [c.name for c in db.tables[0].columns] == ["order_id", "status"]
    named = [w for w in report.warnings if "control character" in w]
    assert len(named) == len(EVIL_TABLES) + 2, report.warnings
    assert all("\n" not in w and "\r" not in w and "\x00" not in w for w in report.warnings)
    assert any("'ev\\r); DROP TABLE users; --_20240101'" in w for w in named), named


def test_no_renderer_ever_receives_a_control_character(tmp_path: Path) -> None:
    """Import hostile names next to good ones, build the index, then render DDL (full and
    focused, with its shard notes), the written docs and every chunk: none holds a hostile name."""
    rows = [(f"events_2024010{i}", "event_name", "Name of the event") for i in range(1, 4)]
    rows += [("orders", "order_id", "Order key of every order"), ("orders", "status", "Order status")]
    rows += [(t, "id", "a row") for t in EVIL_TABLES] + [("orders", "c\u2029x", "sep")]
    data = tmp_path / "data"
    import_catalog_export(_export(tmp_path / "c.csv", rows), data, database="d", dialect="bigquery")
    docs = "".join(p.read_text(encoding="utf-8") for p in data.rglob("*.md"))
    assert docs and not _hostile(docs)
    (built,) = build_databases(["d"], data, tmp_path / "artifacts", instance=dg.DagsterInstance.ephemeral())
    assert built.ok, built
    retriever = Retriever.open("d", artifacts=tmp_path / "artifacts")
    db = retriever.artifact.schema
    full = format_full_schema(db)
    result = retriever.search("which events happened and what is the order status", top_k=10)
    focused = format_focused_schema(db, result)
    assert "events_*" in full  # the shard family (and its note) is rendered
    chunks = " ".join(sc.chunk.text + sc.chunk.title for sc in result.chunks)
    for text in (full, focused, chunks):
        assert not _hostile(text), text


@pytest.mark.parametrize(
    ("where", "schema"),
    [
        ("tables[0].name", {"name": "d", "tables": [{"name": "t\rx", "columns": [{"name": "a"}]}]}),
        ("columns[0].name", {"name": "d", "tables": [{"name": "t", "columns": [{"name": "a\u2028"}]}]}),
        ("$.name", {"name": "d\x00", "tables": [{"name": "t", "columns": [{"name": "a"}]}]}),
        (
            "foreign_key.column",
            {
                "name": "d",
                "tables": [
                    {
                        "name": "t",
                        "columns": [{"name": "a", "foreign_key": {"table": "t", "column": "a\x85"}}],
                    }
                ],
            },
        ),
    ],
)
def test_a_schema_file_with_a_control_character_in_a_name_is_refused(
    tmp_path: Path, where: str, schema
) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(schema))
    with pytest.raises(SchemaFileError, match="control character") as exc:
        load_schema(path)
    assert where.split(".")[-1] in str(exc.value)


def test_dbt_import_skips_a_column_and_a_model_with_control_characters(tmp_path: Path) -> None:
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    (project / "models" / "evil.yml").write_text(
        'version: 2\nmodels:\n  - name: "bad\\rmodel"\n    columns:\n      - name: id\n'
        '  - name: dim_customers\n    columns:\n      - name: "x\\u2028y"\n'
    )
    (project / "models" / "bad\rmodel.sql").write_text("select 1 as id\n")
    report = import_dbt(project, tmp_path / "out")
    db = load_schema(next((tmp_path / "out").glob("*.json")))
    names = [t.name for t in db.tables] + [c.name for t in db.tables for c in t.columns]
    assert not any(_hostile(n) or "\u2028" in n for n in names)
    assert sum("control character" in w for w in report.warnings) >= 2, report.warnings
