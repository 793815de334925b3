"""``bench validate``: verdict counts and grouped reasons on a small question file written here."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from schemarag.tools.benchmarks.validate_bench import add_arguments, measure, run

TABLES = [{
    "db_id": "shop",
    "table_names_original": ["users"], "table_names": ["users"],
    "column_names_original": [[-1, "*"], [0, "id"], [0, "name"]],
    "column_names": [[-1, "*"], [0, "id"], [0, "name"]],
    "column_types": ["text", "number", "text"], "primary_keys": [1], "foreign_keys": [],
}]  # fmt: skip
QUESTIONS = [
    {"db_id": "shop", "SQL": "SELECT id FROM users"},
    {"db_id": "shop", "SQL": "SELECT name FROM users /*! , id */"},
    {"db_id": "shop", "SQL": "SELECT total(id) FROM users"},  # SQLite's total(): DuckDB cannot bind it
    {"db_id": "shop", "SQL": "SELECT julianday(name) FROM users"},
]


def _files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "q.json").write_text(json.dumps(QUESTIONS))
    (tmp_path / "t.json").write_text(json.dumps(TABLES))
    return tmp_path / "q.json", tmp_path / "t.json"


def test_verdicts_and_reasons(tmp_path: Path) -> None:
    results = measure(*_files(tmp_path), top=5)
    assert results["statements"] == 4
    assert results["verdicts"] == {"valid": 1, "invalid": 1, "unchecked": 2}
    [(invalid, n)] = results["reasons"]["invalid"]
    assert n == 1 and invalid.startswith("not allowed: executable comment /*! , id */")
    unchecked = dict(results["reasons"]["unchecked"])
    assert sorted(unchecked.values()) == [1, 1]
    assert any("total does not exist" in r for r in unchecked)


def test_run_prints_the_table_and_writes_json(tmp_path: Path, capsys) -> None:
    questions, tables = _files(tmp_path)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = tmp_path / "out.json"
    args = parser.parse_args(["--questions", str(questions), "--tables", str(tables), "--out", str(out)])
    assert run(args) == 0
    printed = capsys.readouterr().out
    assert "  valid          1  (25.0%)" in printed and "  unchecked      2  (50.0%)" in printed
    assert json.loads(out.read_text())["verdicts"]["invalid"] == 1
