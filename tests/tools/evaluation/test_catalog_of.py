"""``catalog_of``: an import folder written as a warehouse's catalog export, which
``import catalog`` reads back with the same tables, columns and words."""

from __future__ import annotations

import json
from pathlib import Path

from schemarag.runtime.core.schema import load_schema
from schemarag.tools.evaluation.catalog_of import main
from schemarag.tools.importers.catalog_export import import_catalog_export

CODED = {
    "name": "erp",
    "dialect": "sqlite",
    "tables": [
        {
            "name": "KNA1",
            "label": "customer master",
            "description": "Customer master (table `KNA1` of the `erp` database).",
            "columns": [
                {"name": "KUNNR", "type": "TEXT", "nullable": False, "description": "customer number"},
                {"name": "LAND1", "type": "TEXT", "description": "country key"},
            ],
        },
        {"name": "T005", "columns": [{"name": "LAND1", "type": "TEXT", "description": "country key"}]},
    ],
}


def test_an_export_round_trips_through_import_catalog(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "erp.json").write_text(json.dumps(CODED), encoding="utf-8")
    assert main(["--data", str(data), "--out", str(tmp_path / "export")]) == 0
    export = tmp_path / "export" / "erp"
    header = (export / "tables.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,TABLE_TYPE,COMMENT"  # Snowflake's view

    out = tmp_path / "out"
    import_catalog_export(export / "columns.csv", out, database="erp", tables=export / "tables.csv")
    back = load_schema(out / "erp.json")
    assert [t.name for t in back.tables] == ["KNA1", "T005"]  # one schema: bare names, as the SQL has them
    kna1 = back.table("KNA1")
    assert kna1.label == "customer master" and kna1.description == "customer master"  # the comment
    assert [(c.name, c.description, c.nullable) for c in kna1.columns] == [
        ("KUNNR", "customer number", False),
        ("LAND1", "country key", True),
    ]
    assert back.table("T005").label is None and back.table("T005").description == ""


def test_a_folder_without_schemas_is_refused_with_the_fix(tmp_path: Path, capsys) -> None:
    assert main(["--data", str(tmp_path), "--out", str(tmp_path / "export")]) == 2
    assert "pass an import folder as --data" in capsys.readouterr().err
