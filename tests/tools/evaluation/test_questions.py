"""Question files (BIRD and Spider) and gold extraction on real BIRD dev SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.schema import load_schema
from schemarag.tools.evaluation.gold import SchemaView, gold_from_sql
from schemarag.tools.evaluation.questions import load_questions
from schemarag.tools.importers.writer import import_catalog

FIXTURE = Path(__file__).parents[2] / "fixtures" / "bird_small"


def test_bird_file_keeps_ids_and_evidence() -> None:
    qs = load_questions(FIXTURE / "questions.json")
    assert len(qs) == 6 and (qs[0].question_id, qs[0].db_id) == (1470, "debit_card_specializing")
    assert qs[0].text(with_evidence=True) == qs[0].question  # empty evidence adds nothing
    assert qs[1].evidence and qs[1].text(with_evidence=True).endswith(qs[1].evidence)
    assert qs[1].text() == qs[1].question.strip()


def test_spider_file_gets_positional_ids(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps([{"db_id": "a", "question": "q0", "query": "SELECT 1"},
                                {"db_id": "a", "question": "q1", "query": "SELECT 2"}]))  # fmt: skip
    assert [(q.question_id, q.sql) for q in load_questions(path)] == [(0, "SELECT 1"), (1, "SELECT 2")]
    path.write_text(json.dumps([{"db_id": "a", "question": "no sql"}]))
    with pytest.raises(ConfigError, match="question #0 lacks SQL"):
        load_questions(path)


def test_gold_of_real_bird_questions_against_the_union_import(tmp_path: Path) -> None:
    import_catalog([FIXTURE / "tables.json"], tmp_path, union="u")
    view = SchemaView(load_schema(tmp_path / "u.json"), "debit_card_specializing")
    golds = [gold_from_sql(q.sql, view) for q in load_questions(FIXTURE / "questions.json")]
    assert all(g.ok for g in golds)
    prefix = "debit_card_specializing__"
    assert golds[0].tables == [prefix + "gasstations"]
    assert golds[0].columns == {prefix + "gasstations": ["Country", "GasStationID", "Segment"]}
    assert sorted(golds[5].tables) == [prefix + "customers", prefix + "yearmonth"]  # FROM (subquery) AS t1
    assert golds[5].columns[prefix + "yearmonth"] == ["Consumption", "CustomerID", "Date"]
