"""``python -m schemarag.tools.evaluation.log_resolution``: a warehouse's gold SQL imported as a
log, as written and with its table names cut to their last part (a session with a default
schema), through ``import catalog`` and ``import queries`` on a tiny export folder."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from warehouse_support import HEADER

from schemarag.tools.evaluation.log_resolution import main, measure

# a two-schema Snowflake catalog: its tables import as SAPABAP1.KNA1, ..., STAGING.LOAD_LOG
ERP = {
    ("SAPABAP1", "KNA1"): ["KUNNR", "NAME1"],
    ("SAPABAP1", "VBAK"): ["VBELN", "KUNNR", "NETWR"],
    ("STAGING", "LOAD_LOG"): ["LOADED_AT", "ROWS_LOADED"],
    ("STAGING", "VBAK"): ["VBELN", "KUNNR", "NETWR"],  # VBAK in two schemas
}
GOLD = {
    "sf1": "SELECT k.NAME1, SUM(v.NETWR) FROM PROD.SAPABAP1.KNA1 k JOIN PROD.SAPABAP1.VBAK v "
    "ON k.KUNNR = v.KUNNR GROUP BY 1",
    "sf2": "SELECT COUNT(*) FROM PROD.STAGING.LOAD_LOG",
    "sf3": "SELECT * FROM PROD.ELSEWHERE.UNKNOWN_TABLE",
    "sf4": "SELECT COUNT(*) FROM PROD.STAGING.VBAK",
}


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, Path]:
    root, gold = tmp_path / "wh", tmp_path / "gold"
    folder = root / "snowflake" / "ERP"
    folder.mkdir(parents=True)
    with gzip.open(folder / "columns.csv.gz", "wt", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        for (schema, table), cols in ERP.items():
            for i, col in enumerate(cols, start=1):
                w.writerow(["PROD", schema, table, col, col, i, "TEXT", "YES", ""])
    gold.mkdir()
    rows = []
    for iid, sql in GOLD.items():
        (gold / f"{iid}.sql").write_text(sql + "\n", encoding="utf-8")
        row = {"instance_id": iid, "db": "ERP", "engine": "snowflake", "question": iid, "gold_tables": []}
        rows.append(row)
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root, gold


def test_names_cut_to_their_last_part_still_resolve(warehouse: tuple[Path, Path], tmp_path: Path) -> None:
    root, gold = warehouse
    got = measure(root, gold, tmp_path / "work", ["snowflake"], say=lambda s: None)
    # sf1 reads two tables, sf2 and sf4 one; sf3 names a table the catalog does not hold
    assert got["as written"] == {"logged": 4, "kept": 3, "tables": 4, "joins": 1}
    # cut, sf1's VBAK is SAPABAP1's (KNA1 is), sf4's VBAK could be either schema's: not guessed
    assert got["names cut"] == {
        "logged": 4, "kept": 2, "tables": 3, "joins": 1, "by_one_table": 2, "by_statement": 1
    }  # fmt: skip
    # with the session's schema on the line, sf4 resolves as the warehouse resolved it
    assert got["cut + schema"] == {
        "logged": 4, "kept": 3, "tables": 4, "joins": 1, "by_one_table": 2, "by_session": 2
    }  # fmt: skip
    # ... and with the tables it read on the line (BigQuery's referenced_tables, Snowflake's
    # direct_objects_accessed): sf4's VBAK is STAGING's
    assert got["cut + referenced"] == {
        "logged": 4, "kept": 3, "tables": 4, "joins": 1, "by_one_table": 2, "by_read": 2
    }  # fmt: skip
    # ... and as a worksheet: each statement after the USE SCHEMA its session ran
    assert got["cut + USE (.sql)"] == got["cut + schema"]


def test_cli_prints_one_line_per_variant(
    warehouse: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, gold = warehouse
    assert main(["--warehouse", str(root), "--gold-sql", str(gold), "--work", str(tmp_path / "w"),
                 "--engines", "snowflake"]) == 0  # fmt: skip
    assert capsys.readouterr().out.splitlines() == [
        "as written        3 of 4 statements kept, 4 table reads, 1 join edges",
        "names cut         2 of 4 statements kept, 3 table reads, 1 join edges; short names qualified: "
        "2 by the one table it ends, 1 by the schema of the statement's other tables",
        "cut + schema      3 of 4 statements kept, 4 table reads, 1 join edges; short names qualified: "
        "2 by the one table it ends, 2 by the session's schema",
        "cut + referenced  3 of 4 statements kept, 4 table reads, 1 join edges; short names qualified: "
        "2 by the one table it ends, 2 by the tables the log says the statement read",
        "cut + USE (.sql)  3 of 4 statements kept, 4 table reads, 1 join edges; short names qualified: "
        "2 by the one table it ends, 2 by the session's schema",
    ]
