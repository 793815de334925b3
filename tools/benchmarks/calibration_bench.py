"""``schemarag bench calibration``: does one relevance threshold separate on- from off-topic?

For each database, the top-1 relevance of its own sample questions (``data/questions/<db>.jsonl``)
and of a fixed set of questions about things no schema here holds (weather, sports, recipes,
other languages). A good calibration puts every on-topic question above the threshold and
every off-topic one below it, on every database, with the same threshold.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from schemarag.runtime.core.config import DEFAULT_THRESHOLD
from schemarag.runtime.core.paths import artifacts_dir
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.commands.json_output import add_json_output

OFF_TOPIC = (
    "What is the weather in Paris?", "Who won the world cup in 2018?", "recipe for chocolate cake",
    "How tall is the Eiffel tower?", "best pizza in Naples", "who is the president of France",
    "translate hello into Japanese", "what time does the sun set today", "how do I fix a flat bicycle tire",
    "tell me a joke about cats", "what is the capital of Australia", "how many moons does Jupiter have",
    "symptoms of the common cold", "lyrics of bohemian rhapsody", "when was the printing press invented",
    "how to grow tomatoes on a balcony", "¿Qué tiempo hace en Madrid?", "Wie spät ist es in Berlin?",
    "train schedule from Boston to New York", "how to tie a bow tie",
)  # fmt: skip


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", action="append", default=None, help="databases (default: ecommerce, b2b_saas)"
    )
    parser.add_argument("--questions-dir", default="data/questions", help="folder with <db>.jsonl")
    add_json_output(parser)


def _top1(retriever: Retriever, question: str) -> float:
    res = retriever.search(question, top_k=1, relevance_threshold=0.0)
    return res.chunks[0].score if res.chunks else 0.0


def run(args: argparse.Namespace) -> int:
    rows = []
    for db in args.db or ["ecommerce", "b2b_saas"]:
        r = Retriever.open(db, artifacts=artifacts_dir(args.artifacts))
        path = Path(args.questions_dir) / f"{db}.jsonl"
        on_q = [json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()]
        on = [_top1(r, q) for q in on_q]
        off = [_top1(r, q) for q in OFF_TOPIC]
        rows.append({
            "database": db, "on_topic": len(on), "off_topic": len(off),
            "on_min": round(min(on), 3), "on_median": round(float(np.median(on)), 3),
            "off_max": round(max(off), 3), "off_median": round(float(np.median(off)), 3),
            "on_below_threshold": [q for q, s in zip(on_q, on, strict=True) if s < DEFAULT_THRESHOLD],
            "off_at_or_above_threshold": [
                q for q, s in zip(OFF_TOPIC, off, strict=True) if s >= DEFAULT_THRESHOLD
            ],
        })  # fmt: skip
    print(f"threshold {DEFAULT_THRESHOLD}")
    print(f"{'database':<14}{'on min':>8}{'on med':>8}{'off max':>9}{'off med':>9}  misclassified")
    for r in rows:
        bad = len(r["on_below_threshold"]) + len(r["off_at_or_above_threshold"])
        print(
            f"{r['database']:<14}{r['on_min']:>8.2f}{r['on_median']:>8.2f}{r['off_max']:>9.2f}"
            f"{r['off_median']:>9.2f}  {bad} of {r['on_topic'] + r['off_topic']}"
        )
        for q in r["off_at_or_above_threshold"]:
            print(f"    off-topic kept: {q}")
        for q in r["on_below_threshold"]:
            print(f"    on-topic dropped: {q}")
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(rows, indent=2, ensure_ascii=False))
    return 0
