"""The bundled sample questions (``data/questions/<db>.jsonl``, what a plain ``schemarag eval``
scores): every gold SQL passes the project's validator against its sample schema, the gold tables
the file states are the ones the SQL reads, and the set holds questions that need several tables
(issue 40: the default eval must measure something). No retrieval result is asserted here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database
from schemarag.tools.evaluation.gold import SchemaView, gold_from_sql

ROOT = Path(__file__).resolve().parents[3]
FILES = sorted((ROOT / "data" / "questions").glob("*.jsonl"))
RECORDS = [
    (f.stem, i, json.loads(line))
    for f in FILES
    for i, line in enumerate(f.read_text(encoding="utf-8").splitlines())
    if line.strip()
]


def _schema(db: str) -> Database:
    path = ROOT / "data" / "schemas" / f"{db}.json"
    return Database.model_validate_json(path.read_text(encoding="utf-8"))


SCHEMAS = {db: _schema(db) for db in {f.stem for f in FILES}}


@pytest.mark.parametrize(("db", "i", "record"), RECORDS, ids=[f"{db}/{i}" for db, i, _ in RECORDS])
def test_gold_sql_is_valid_and_names_the_stated_tables(db: str, i: int, record: dict) -> None:
    schema = SCHEMAS[db]
    report = validate_sql(record["sql"], schema)
    assert report.valid is True, (record["question"], report.errors, report.unchecked_reason)
    gold = gold_from_sql(record["sql"], SchemaView(schema), schema.dialect)
    assert gold.ok, record["question"]
    assert sorted(gold.tables) == sorted(record["gold_tables"]), record["question"]


def test_questions_are_distinct_and_some_need_several_tables() -> None:
    questions = [r["question"] for _, _, r in RECORDS]
    assert len(questions) == len(set(questions))
    b2b = [r for db, _, r in RECORDS if db == "b2b_saas"]
    wide = [r for r in b2b if len(r["gold_tables"]) >= 3]
    assert len(wide) * 4 >= len(b2b)  # a quarter or more join three tables or more
    assert any(len(r["gold_tables"]) >= 5 for r in b2b)  # and one goes through two bridge tables
