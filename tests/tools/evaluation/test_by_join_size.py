"""``python -m schemarag.tools.evaluation.by_join_size``: complete recall per number of tables a
question joins, read from the rows the history folds write (``history_folds.fold_predictions``
through ``write_predictions``, as ``eval --query-log-folds --predictions`` writes them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemarag.tools.evaluation.by_join_size import by_join_size, main, read_rows
from schemarag.tools.evaluation.history_folds import fold_predictions, write_predictions


def _question(i: int) -> object:
    return type("Q", (), {"question_id": i, "db_id": "shop", "question": f"question {i}?"})()


def _ranked(gold: list[str], kept: dict[int, list[str]]) -> dict:
    return {"kept_by_budget": kept, "gold_tables": gold}


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    # gold sizes 1, 2, 2, 4, 5; without a history the 4- and 5-table questions miss at both
    # budgets, one 2-table question misses at 2; the history completes all but the 5-table one at 2
    gold = [["a"], ["a", "b"], ["a", "c"], ["a", "b", "c", "d"], ["a", "b", "c", "d", "e"]]
    without = [
        {5: ["a"], 2: ["a"]},  # the budgets in any order (a warehouse row holds 20, 10, 5)
        {2: ["a", "b"], 5: ["a", "b"]},
        {2: ["a", "d"], 5: ["a", "d", "c"]},
        {2: ["a", "b"], 5: ["a", "b", "e"]},
        {2: ["a", "b"], 5: ["a", "b", "c"]},
    ]
    shipped = [
        {2: ["a"], 5: ["a"]},
        {2: ["a", "b"], 5: ["a", "b"]},
        {2: ["a", "c"], 5: ["a", "c"]},
        {2: ["a", "b"], 5: ["a", "b", "c", "d"]},
        {2: ["a", "b"], 5: ["a", "b", "c", "d", "e"]},
    ]
    rows = fold_predictions(
        [_question(i) for i in range(5)],
        [0, 1, 2, 3, 4],
        [_ranked(g, k) for g, k in zip(gold, without, strict=True)],
        [_ranked(g, k) for g, k in zip(gold, shipped, strict=True)],
        [_ranked(g, k) for g, k in zip(gold, shipped, strict=True)],
    )
    path = tmp_path / "predictions.jsonl"
    assert write_predictions(path, rows) == 5
    return path


def test_cr_per_join_size_and_setting(predictions: Path) -> None:
    got = by_join_size(read_rows(predictions))
    assert list(got) == [1, 2, 4]  # the 5-table question is counted with the 4-table one
    assert [got[s]["questions"] for s in got] == [1, 2, 2]
    assert got[1]["without"] == {"2": 1.0, "5": 1.0}
    assert got[2]["without"] == {"2": 0.5, "5": 1.0} and got[2]["shipped"] == {"2": 1.0, "5": 1.0}
    assert list(got[2]["without"]) == ["2", "5"]  # the smaller budget first, as written in any order
    assert got[4]["without"] == {"2": 0.0, "5": 0.0} and got[4]["held out"] == {"2": 0.0, "5": 1.0}
    # the rows' own mean over sizes is the set's CR, as the evaluation reports it
    rows = read_rows(predictions)
    overall = sum(set(r["gold"]) <= set(r["kept_shipped"]["5"]) for r in rows) / len(rows)
    assert overall == sum(got[s]["questions"] * got[s]["shipped"]["5"] for s in got) / len(rows)


def test_cli_prints_one_line_per_size_and_writes_a_chart(
    predictions: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "charts" / "by_size.png"
    assert main([str(predictions), "--largest", "3", "--chart", str(chart)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "CR@2 / 5 per setting"
    assert lines[3] == (
        "3+ table(s),     2 questions: without 0.000 / 0.000; shipped 0.000 / 1.000; held out 0.000 / 1.000"
    )
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and lines[-1] == f"wrote {chart}"


def test_a_file_that_is_not_predictions_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "eval.json"
    bad.write_text('{"protocol": "5-fold"}\n')
    with pytest.raises(SystemExit) as exc:
        main([str(bad)])
    assert str(exc.value) == (
        f"{bad}: line 1 is not a predictions row with 'gold'; pass the file "
        "`schemarag eval --query-log-folds K --predictions F.jsonl` wrote"
    )
    assert main([str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
