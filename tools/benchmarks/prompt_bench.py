"""``schemarag bench prompt``: prompt tokens, full schema vs focused schema (QG-CORE-02).

For each question the exact messages the generator would send are built with
``prepare_prompt``: forced to the full schema, forced to retrieval (retrieved tables + FK
neighbours), and with the budgeted table ranking in each mode a caller can ask for (``--focus
default``, ``--focus compact``, ``--adaptive``; 15 tables). Prints per database the mean tokens
of each and their ratio to the full prompt; the focused prompt must be at most half the full
one on the large sample.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.app.querygen.generator import prepare_prompt
from schemarag.runtime.core.paths import artifacts_dir
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.commands.json_output import add_json_output

# The budgeted rankings a caller can ask for (Retriever.search / --focus / --adaptive), 15 tables.
RANKED_MODES: dict[str, dict[str, Any]] = {
    "focus default": {"focus": "default"},
    "focus compact": {"focus": "compact"},
    "adaptive": {"adaptive": True},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        action="append",
        dest="sets",
        default=None,
        metavar="DB=QUESTIONS[@ARTIFACTS]",
        help="database, JSONL/JSON question file (BIRD or ours), optional artifacts dir; repeatable "
        "(default: b2b_saas=data/questions/b2b_saas.jsonl)",
    )
    parser.add_argument("--limit", type=int, default=20, help="questions per database (default 20)")
    add_json_output(parser)


def _questions(path: Path, db: str, limit: int) -> list[str]:
    text = path.read_text(encoding="utf-8")
    rows: list[dict[str, Any]] = (
        json.loads(text)
        if text.lstrip().startswith("[")
        else [json.loads(line) for line in text.splitlines() if line.strip()]
    )
    rows = [r for r in rows if r.get("db_id", db) == db]
    return [r["question"] for r in rows[:limit]]


def measure(db_name: str, questions: list[str], artifacts: Path) -> dict[str, Any]:
    retriever = Retriever.open(db_name, artifacts=artifacts)
    db = retriever.schema

    def retriever_for(**ranking: Any):
        def retrieve(q: str, k: int | None, thr: float | None):
            return retriever.search(q, top_k=k, relevance_threshold=thr, **ranking)

        return retrieve

    full, focused, fallbacks = [], [], 0
    modes: dict[str, list[int]] = {name: [] for name in RANKED_MODES}
    for q in questions:
        f = prepare_prompt(q, db, use_retrieval=False)
        r = prepare_prompt(q, db, use_retrieval=True, retrieve=retriever_for())
        full.append(f.usage["prompt_tokens"])
        focused.append(r.usage["prompt_tokens"])
        fallbacks += r.context.metadata.get("strategy") != "rag"
        for name, ranking in RANKED_MODES.items():
            ranked = prepare_prompt(q, db, use_retrieval=True, retrieve=retriever_for(**ranking))
            modes[name].append(ranked.usage["prompt_tokens"])
    mean_full = float(np.mean(full))

    def summary(v: list[int]) -> dict[str, float]:
        mean = float(np.mean(v))
        return {"prompt_tokens": round(mean, 1), "ratio": round(mean / mean_full, 3)}

    return {
        "database": db_name,
        "tables": len(db.tables),
        "questions": len(questions),
        "full_prompt_tokens": round(float(np.mean(full)), 1),
        "focused_prompt_tokens": round(float(np.mean(focused)), 1),
        "ratio": round(float(np.mean(focused) / np.mean(full)), 3),
        "max_ratio": round(float(max(a / b for a, b in zip(focused, full, strict=True))), 3),
        "rag_fallbacks": fallbacks,
        "ranked_modes": {
            name: {
                "prompt_tokens": round(float(np.mean(v)), 1),
                "ratio": round(float(np.mean(v)) / mean_full, 3),
            }
            for name, v in modes.items()
        },
    }


def run(args: argparse.Namespace) -> int:
    default_artifacts = artifacts_dir(args.artifacts)
    rows = []
    for spec in args.sets or ["b2b_saas=data/questions/b2b_saas.jsonl"]:
        db, _, rest = spec.partition("=")
        qfile, _, arts = rest.partition("@")
        questions = _questions(Path(qfile), db, args.limit)
        print(f"{db}: {len(questions)} questions", file=sys.stderr, flush=True)
        rows.append(measure(db, questions, Path(arts) if arts else default_artifacts))
    print(
        f"{'database':<26}{'tables':>7}{'questions':>10}{'full tok':>10}{'focused tok':>12}{'ratio':>8}"
        f"{'max':>7}{'fallbacks':>10}"
    )
    for r in rows:
        print(
            f"{r['database']:<26}{r['tables']:>7}{r['questions']:>10}{r['full_prompt_tokens']:>10.0f}"
            f"{r['focused_prompt_tokens']:>12.0f}{r['ratio']:>8.2f}{r['max_ratio']:>7.2f}{r['rag_fallbacks']:>10}"
        )
    print(f"\n{'database':<26}" + "".join(f"{name + ' tok (ratio)':>28}" for name in RANKED_MODES))
    for r in rows:
        cells = [f"{m['prompt_tokens']:.0f} ({m['ratio']:.2f})" for m in r["ranked_modes"].values()]
        print(f"{r['database']:<26}" + "".join(f"{c:>28}" for c in cells))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(rows, indent=2))
    return 0
