"""The history knobs to ship: one choice pooled over several fold evaluations (issue 38).

Each ``schemarag eval --query-log-folds K`` payload (``--out``) holds every history-grid
candidate's in-sample complete recall. No one set speaks for the warehouses we do not see: a
union rewards a popularity prior only because most of its databases have no history, a per
database set has a handful of tables. So the shipped setting is the candidate with the best mean
over the sets, each set weighing the same, of that set's own objective: the mean CR over its
budgets (on a warehouse payload, over its nontrivial questions, as its cross-validation ranks).

    python -m schemarag.tools.evaluation.history_pool reports/history/union.json \\
        reports/history/perdb.json reports/history/nofk.json reports/history/spider.json \\
        [--leave-one-set-out]

``--leave-one-set-out`` scores each set with the candidate the other sets choose, beside the
shipped one: how a choice pooled without a set fares on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_NOT_KNOBS = {"complete_recall", "questions", "candidate"}


def set_scores(payload: dict[str, Any]) -> dict[tuple, float]:
    """``{knobs as sorted items: objective}`` of one payload (BIRD or warehouse folds).

    >>> bird = {"in_sample_per_candidate": [
    ...     {"history_co_weight": 1.0, "complete_recall": {"5": 0.9, "10": 1.0}, "questions": 2}]}
    >>> set_scores(bird)
    {(('history_co_weight', 1.0),): 0.95}
    >>> wh = {"cross_validation": {"in_sample_per_candidate": [{"candidate": {"history_co_weight": 1.0},
    ...     "complete_recall": {"all": {"5": 1.0}, "nontrivial": {"5": 0.5, "20": 0.7}}}]}}
    >>> set_scores(wh)
    {(('history_co_weight', 1.0),): 0.6}
    """
    out: dict[tuple, float] = {}
    warehouse = "cross_validation" in payload and "in_sample_per_candidate" not in payload
    rows = (
        payload["cross_validation"]["in_sample_per_candidate"]
        if warehouse
        else payload["in_sample_per_candidate"]
    )
    for row in rows:
        if warehouse:
            knobs, cr = row["candidate"], row["complete_recall"]["nontrivial"]
        else:
            knobs, cr = {k: v for k, v in row.items() if k not in _NOT_KNOBS}, row["complete_recall"]
        values = [v for v in cr.values() if v is not None]
        out[tuple(sorted(knobs.items()))] = round(sum(values) / len(values), 9) if values else 0.0
    return out


def pooled(payloads: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], float, list[float]]]:
    """Candidates every payload scored, best pooled mean first: ``(knobs, mean, per set)``.
    Ties keep the grid's order (the first payload's), so the shipped setting, listed first,
    wins a tie."""
    scores = [set_scores(p) for p in payloads]
    common = _common(scores)
    rows = [(dict(k), sum(s[k] for s in scores) / len(scores), [s[k] for s in scores]) for k in common]
    return sorted(rows, key=lambda r: -r[1])


def _common(scores: Sequence[dict[tuple, float]]) -> list[tuple]:
    """The candidates every set scored, in the first set's (the grid's) order."""
    return [k for k in scores[0] if all(k in s for s in scores[1:])]


def leave_one_set_out(payloads: Sequence[dict[str, Any]]) -> list[tuple[dict[str, Any], float, float]]:
    """Per set, ``(knobs chosen on the other sets, their score on it, the grid's first
    candidate's score on it)``: whether pooling generalises to a set it never saw, as the
    warehouses we do not see will be. The first candidate is the shipped setting (the grid lists
    it first), so the last two values compare a choice made without the set with what ships.

    >>> a = {"in_sample_per_candidate": [{"p": 0, "complete_recall": {"5": 0.9}},
    ...                                   {"p": 1, "complete_recall": {"5": 0.8}}]}
    >>> b = {"in_sample_per_candidate": [{"p": 0, "complete_recall": {"5": 0.5}},
    ...                                   {"p": 1, "complete_recall": {"5": 0.7}}]}
    >>> [(k["p"], held, first) for k, held, first in leave_one_set_out([a, b])]
    [(1, 0.8, 0.9), (0, 0.5, 0.5)]
    """
    scores = [set_scores(p) for p in payloads]
    common = _common(scores)
    out = []
    for i, own in enumerate(scores):
        others = [s for j, s in enumerate(scores) if j != i]
        best = max(common, key=lambda k: sum(s[k] for s in others))  # max keeps the first of a tie
        out.append((dict(best), own[best], own[common[0]]))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("payloads", nargs="+", help="eval --query-log-folds --out files, one per set")
    ap.add_argument("--top", type=int, default=10, help="how many candidates to print (default 10)")
    ap.add_argument(
        "--leave-one-set-out",
        action="store_true",
        help="also score each set with the candidate the other sets choose, beside the shipped one",
    )
    args = ap.parse_args(argv)
    payloads = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.payloads]
    rows = pooled(payloads)
    names = " / ".join(Path(p).stem for p in args.payloads)
    print(f"pooled mean CR over {len(payloads)} sets (per set: {names}); {len(rows)} candidates")
    for knobs, mean, per_set in rows[: args.top]:
        shown = ", ".join(f"{k.removeprefix('history_')}={v}" for k, v in knobs.items())
        print(f"{mean:.4f}  [{' '.join(f'{v:.4f}' for v in per_set)}]  {shown}")
    if args.leave_one_set_out:
        print(
            "leave one set out: the set's score with the others' choice / with the shipped (first) candidate"
        )
        for path, (knobs, held, first) in zip(args.payloads, leave_one_set_out(payloads), strict=True):
            shown = ", ".join(f"{k.removeprefix('history_')}={v}" for k, v in knobs.items())
            print(f"{Path(path).stem}: {held:.4f} / {first:.4f}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
