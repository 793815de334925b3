"""``examples_bench`` end to end on a real index with an imported history (issue 38, item 4).

One fold (``--k 1``) whose index is the sample ``ecommerce`` built with ``tests/history_support.py``'s
log; the questions are the log's own, so every question has an example over its tables (a real
run uses ``eval --query-log-folds`` folds, where a question's SQL never reaches its index).
"""

from __future__ import annotations

import json
from pathlib import Path

from history_support import DB, LOG, build_history_indexes

from schemarag.tools.benchmarks.examples_bench import choose_default, main


def test_bench_reports_tokens_and_recall_per_n_and_picks_a_default(tmp_path: Path, capsys) -> None:
    indexes = build_history_indexes(tmp_path / "build")
    folds = tmp_path / "folds"
    (folds / "fold0").mkdir(parents=True)
    (folds / "fold0" / "artifacts").symlink_to(indexes.artifacts)
    questions = tmp_path / "questions.json"
    rows = [{"db_id": DB, "question": q["question"], "SQL": q["sql"]} for q in LOG if q.get("question")]
    questions.write_text(json.dumps(rows), encoding="utf-8")
    out = tmp_path / "bench.json"
    argv = [
        "--questions",
        str(questions),
        "--folds",
        str(folds),
        "--k",
        "1",
        "--ns",
        "1,2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    payload = json.loads(out.read_text())
    assert payload["questions"] == len(rows)
    per_n = payload["per_n"]
    assert [e["n"] for e in per_n] == [0, 1, 2], "N=0 is always measured: the base of added tokens"
    assert per_n[0]["added_tokens"] == 0 and per_n[1]["added_tokens"] > 0
    assert per_n[1]["example_recall"] == 1.0 and per_n[0]["reachable"] == 1.0
    assert payload["default"] == choose_default(per_n)
    assert [e["n"] for e in payload["plain_sum_per_n"]] == [0, 1, 2]
    printed = capsys.readouterr().out
    assert (
        "| N | added prompt tokens | example recall |" in printed
        and f"default: {payload['default']}" in printed
    )
