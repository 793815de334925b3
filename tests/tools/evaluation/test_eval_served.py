"""``schemarag eval --focus default|compact`` and ``--adaptive`` score exactly what the surfaces
serve: the tables, columns and text of ``Retriever.search`` with that focus, on the bundled samples."""

from __future__ import annotations

import json
from pathlib import Path

from schemarag.cli import main
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.evaluation.questions import load_questions

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = ROOT / "data" / "questions" / "b2b_saas.jsonl"


def _eval(capsys, artifacts: Path, *extra: str) -> dict:
    where = [
        "--questions",
        str(QUESTIONS),
        "--artifacts",
        str(artifacts),
        "--data",
        str(ROOT / "data" / "schemas"),
    ]
    argv = ["eval", *where, "--no-baselines", "-q", "--json", "--budgets", "5,15", *extra]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_each_mode_scores_what_search_serves(built_artifacts: Path, capsys, tmp_path: Path) -> None:
    retriever = Retriever.open("b2b_saas", artifacts=built_artifacts)
    questions = load_questions(QUESTIONS, None)
    payloads = {}
    for mode, extra in {"default": ["--focus", "default"], "compact": ["--focus", "compact"],
                        "adaptive": ["--adaptive"]}.items():  # fmt: skip
        preds = tmp_path / f"{mode}.jsonl"
        payload = _eval(capsys, built_artifacts, *extra, "--predictions", str(preds))
        assert payload["served"] is True and payload["focus"] == (
            "compact" if mode == "compact" else "default"
        )
        assert payload["adaptive"] is (mode == "adaptive")
        rows = [json.loads(line) for line in preds.read_text().splitlines()]
        ask = {"focus": payload["focus"], "adaptive": payload["adaptive"]}
        for q, row in zip(questions, rows, strict=True):  # the same tables as the served search
            served = retriever.search(q.question, table_budget=15, **ask).ranking
            assert row["kept_tables"] == (list(served.tables) if served else [])
        payloads[mode] = payload
    # compact is never the larger prompt; adaptive keeps fewer tables than the fixed budget
    assert payloads["compact"]["metrics"]["context_ratio"] <= payloads["default"]["metrics"]["context_ratio"]
    assert (
        payloads["adaptive"]["metrics"]["mean_tables_kept"]
        <= payloads["default"]["metrics"]["mean_tables_kept"]
    )


def test_served_modes_refuse_evaluation_ablations(built_artifacts: Path, capsys) -> None:
    argv = ["eval", "--questions", str(QUESTIONS), "--artifacts", str(built_artifacts), "--focus", "compact",
            "--join-paths", "-q"]  # fmt: skip
    assert main(argv) == 2
    assert "drop --join-paths" in capsys.readouterr().err
