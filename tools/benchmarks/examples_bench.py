"""``examples_bench``: how many past queries a prompt should carry (issue 38, item 4).

Past queries cost prompt tokens; what they buy is a worked example of the joins and columns the
question needs. On the fold indexes of ``schemarag eval --query-log-folds K`` (fold ``f``'s index
was built with the other folds' gold SQL as its query history, so a question's own SQL never
reaches it), every question of fold ``f`` gets the exact prompt ``schemarag generate
--prompt-only --examples N`` builds (``prepare_prompt`` on the pinned version, default strategy and
ranking; the retrieval is done once per question and reused for every N), and for each N:

* **added tokens**: prompt tokens with N examples minus with none (``estimate_tokens``);
* **example recall**: the share of questions for which some included example reads every table
  of the question's gold SQL (``gold_from_sql``): the prompt shows a query over the tables the
  answer needs; **within one table**: an example reads those and at most one table more;
  **exact**: an example reads exactly those tables (recall alone rewards the widest query);
* **reachable**: the share for which *some* example of the history reads every gold table (what
  a perfect choice could reach);
* beside it, the same for examples ordered by the plain sum of the kept tables' scores
  (``strong_ratio=0``), the order the shipped one was chosen over.

:func:`choose_default` turns the table into ``history_examples.DEFAULT_EXAMPLES``: the largest
N up to which each further example still raised recall by at least ``--min-gain`` points per 100
added tokens.

    nice schemarag bench examples \\
        --questions BIRD/dev/dev.json --folds FOLDS/k5_f1 [--k 5] [--ns 0,1,2,3,5] [--out FILE]

(``add_arguments`` and ``run`` follow the ``schemarag bench`` modules, so one line in
``tools/commands/bench_cmd.py``'s ``BENCHMARKS`` makes it ``schemarag bench examples``.)
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.app.querygen.generator import prepare_prompt
from schemarag.app.querygen.prompt import build_messages
from schemarag.app.querygen.strategy import StrategyConfig
from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.search.history_examples import (
    EXAMPLES_TOKEN_ALLOWANCE,
    examples_section,
    history_has_placeholders,
    select_examples,
)
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.commands.json_output import add_json_output, print_json, write_json
from schemarag.tools.evaluation.gold import SchemaView, gold_from_sql
from schemarag.tools.evaluation.history_folds import assign_folds
from schemarag.tools.evaluation.questions import Question, load_questions

DEFAULT_NS = (0, 1, 2, 3, 5)
SCORES = ("example_recall", "within_one_table", "exact")
# One more example is worth its tokens while it makes at least this many more questions (in
# percentage points) see a query over all their tables per 100 added prompt tokens. Fixed before
# the measurement: BIRD dev's prompts are about 2,000 tokens, so 5 points per 100 tokens asks an
# example to reach at least 1 % more of the questions for each 1 % it adds to the prompt.
MIN_GAIN_PER_100 = 5.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--questions", required=True, help="BIRD/Spider question file (with gold SQL)")
    parser.add_argument(
        "--folds",
        required=True,
        help="the fold folder of `eval --query-log-folds` (fold0/artifacts .. fold{K-1}/artifacts)",
    )
    parser.add_argument("--k", type=int, default=5, help="folds the indexes were built with (default 5)")
    parser.add_argument("--ns", default=",".join(map(str, DEFAULT_NS)), help="example counts to measure")
    parser.add_argument("--min-gain", type=float, default=MIN_GAIN_PER_100,
                        help="recall points per 100 tokens an example must add (default 5)")  # fmt: skip
    parser.add_argument(
        "--limit", type=int, default=None, help="questions per fold and database (smoke runs)"
    )
    add_json_output(parser)  # --json / --out FILE, as every `schemarag bench` module


def _gold(q: Question, db: Any, views: dict[str, SchemaView]) -> frozenset[str] | None:
    view = views.setdefault(q.db_id, SchemaView(db))
    gold = gold_from_sql(q.sql, view, db.dialect or "sqlite")
    return frozenset(gold.tables) if gold.ok and gold.tables else None


def _scores(gold: frozenset[str], chosen: list[Any]) -> dict[str, bool]:
    """Whether some chosen example reads every gold table (``hit``), those and at most one more
    (``near``), or exactly those (``exact``)."""
    tables = [frozenset(ex.tables) for ex in chosen]
    return {
        "hit": any(gold <= t for t in tables),
        "near": any(gold <= t and len(t) <= len(gold) + 1 for t in tables),
        "exact": any(gold == t for t in tables),
    }


def measure_question(q: Question, pinned: Any, ns: list[int], gold: frozenset[str]) -> dict[str, Any]:
    """One question's prompt tokens and example scores for every N, in the shipped order and in
    the plain-sum order (one retrieval; both orders see the ranking the prompt was built on)."""
    art = pinned.artifact
    found: dict[str, Any] = {}

    def retrieve(question: str, top_k: int | None, threshold: float | None) -> Any:
        if "result" not in found:
            found["result"] = pinned.search(question, top_k=top_k, relevance_threshold=threshold)
        return found["result"]

    config = StrategyConfig()
    row: dict[str, Any] = {"shipped": {}, "plain_sum": {}}
    for n in ns:
        p = prepare_prompt(q.question, art.schema, retrieve=retrieve, config=config, ddl=art.ddl,
                           artifact=art, examples=n)  # fmt: skip
        row["shipped"][n] = {"tokens": p.usage["prompt_tokens"], **_scores(gold, p.context.examples)}
        ranking = getattr(p.context.result, "ranking", None)
        plain = select_examples(art, ranking, n, max_tokens=EXAMPLES_TOKEN_ALLOWANCE, strong_ratio=0.0)
        section = examples_section(plain, history_has_placeholders(art))
        messages = build_messages(q.question, p.context.text, art.schema.dialect, art.schema.name, section)
        tokens = sum(estimate_tokens(m["content"]) for m in messages)
        row["plain_sum"][n] = {"tokens": tokens, **_scores(gold, plain)}
    return row


def reachable(art: Any, gold: frozenset[str]) -> bool:
    """Whether some example of ``art``'s history reads every gold table."""
    h = art.history
    return any(
        gold <= {art.table_names[i] for i in h.example_table_indices(e).tolist()} for e in range(h.n_examples)
    )


def measure(
    questions: list[Question],
    folds: Path,
    k: int,
    ns: list[int],
    limit: int | None = None,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Per-question rows over every fold (see the module docstring), aggregated per N."""
    assignment = assign_folds(questions, k)
    rows: list[dict[str, Any]] = []
    skipped = 0
    for fold in range(k):
        artifacts = folds / f"fold{fold}" / "artifacts"
        by_db: dict[str, list[Question]] = {}
        for q, f in zip(questions, assignment, strict=True):
            if f == fold:
                by_db.setdefault(q.db_id, []).append(q)
        t0 = time.perf_counter()
        for db_name, qs in sorted(by_db.items()):
            pinned = Retriever.open(db_name, artifacts=artifacts).pin()
            views: dict[str, SchemaView] = {}
            for q in qs[:limit]:
                gold = _gold(q, pinned.schema, views)
                if gold is None:
                    skipped += 1
                    continue
                row = measure_question(q, pinned, ns, gold)
                row.update(db=db_name, fold=fold, reachable=reachable(pinned.artifact, gold))
                rows.append(row)
        done = sum(r["fold"] == fold for r in rows)
        say(f"fold {fold}: {done} questions in {time.perf_counter() - t0:.0f}s")
    return {
        "questions": len(rows),
        "skipped_no_gold": skipped,
        "per_n": aggregate(rows, ns),
        "plain_sum_per_n": aggregate(rows, ns, "plain_sum"),
        "rows": rows,
    }


def aggregate(rows: list[dict[str, Any]], ns: list[int], order: str = "shipped") -> list[dict[str, Any]]:
    """Per N in ``order``: mean added prompt tokens, example recall, within one table, exact."""
    out = []
    base = np.array([r[order][ns[0]]["tokens"] for r in rows], dtype=np.float64)
    reach = round(float(np.mean([r["reachable"] for r in rows])), 4) if rows else 0.0
    for n in ns:
        tokens = np.array([r[order][n]["tokens"] for r in rows], dtype=np.float64)
        out.append({
            "n": n,
            "added_tokens": round(float(np.mean(tokens - base)), 1),
            "prompt_tokens": round(float(np.mean(tokens)), 1),
            "example_recall": round(float(np.mean([r[order][n]["hit"] for r in rows])), 4),
            "within_one_table": round(float(np.mean([r[order][n]["near"] for r in rows])), 4),
            "exact": round(float(np.mean([r[order][n]["exact"] for r in rows])), 4),
            "reachable": reach,
        })  # fmt: skip
    return out


def choose_default(per_n: list[dict[str, Any]], min_gain: float = MIN_GAIN_PER_100) -> int:
    """The largest N up to which every step from the previous N raised example recall by at
    least ``min_gain`` points per 100 added tokens (the first N when none did).

    >>> choose_default([{"n": 0, "added_tokens": 0, "example_recall": 0.0},
    ...                 {"n": 1, "added_tokens": 60, "example_recall": 0.3},
    ...                 {"n": 2, "added_tokens": 120, "example_recall": 0.36},
    ...                 {"n": 3, "added_tokens": 180, "example_recall": 0.37}])
    2
    """
    chosen = per_n[0]["n"]
    for prev, cur in itertools.pairwise(per_n):
        cost = cur["added_tokens"] - prev["added_tokens"]
        gain = 100.0 * (cur["example_recall"] - prev["example_recall"])
        if cost <= 0 or gain / cost * 100.0 < min_gain:
            break
        chosen = cur["n"]
    return chosen


def format_table(payload: dict[str, Any]) -> str:
    """The per-N table as docs/query-history.md shows it (shipped order; plain-sum order beside)."""
    lines = [
        "| N | added prompt tokens | example recall | recall points per 100 tokens | within one table "
        "| exact tables | plain-sum order: tokens, recall, within one, exact |",
        "|---|---|---|---|---|---|---|",
    ]
    prev = None
    for e, s in zip(payload["per_n"], payload["plain_sum_per_n"], strict=True):
        rate = "-"
        if prev is not None and e["added_tokens"] > prev["added_tokens"]:
            gain = 100.0 * (e["example_recall"] - prev["example_recall"])
            rate = f"{gain / (e['added_tokens'] - prev['added_tokens']) * 100.0:.1f}"
        plain = ", ".join([f"{s['added_tokens']:.0f}", *(f"{s[k]:.3f}" for k in SCORES)])
        lines.append(f"| {e['n']} | {e['added_tokens']:.0f} | {e['example_recall']:.3f} | {rate} | "
                     f"{e['within_one_table']:.3f} | {e['exact']:.3f} | {plain} |")  # fmt: skip
        prev = e
    reach = payload["per_n"][0]["reachable"] if payload["per_n"] else 0.0
    lines.append("")
    lines.append(f"{payload['questions']} questions ({payload['skipped_no_gold']} without resolvable gold "
                 f"tables left out); some example of the history reads every gold table for {reach:.3f}; "
                 f"default: {payload['default']}")  # fmt: skip
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    ns = sorted({int(x) for x in str(args.ns).split(",") if x.strip()})
    if not ns or ns[0] != 0:
        ns = [0, *ns]
    questions = load_questions(Path(args.questions))
    payload = measure(questions, Path(args.folds), args.k, ns, args.limit)
    payload["default"] = choose_default(payload["per_n"], args.min_gain)
    payload["min_gain_per_100_tokens"] = args.min_gain
    print(format_table(payload), file=sys.stderr if args.json_stdout is True else sys.stdout)
    write_json(payload, args.json_out)
    if args.json_stdout is True:
        print_json(payload)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
