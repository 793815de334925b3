"""Retrieval metrics over per-question records, as defined in ``shared/benchmarks/README.md``.

All functions are pure and compare table names case-insensitively (SQLite semantics), so a
gold ``Users`` matches a kept ``users``. A question with no gold tables (its SQL did not
resolve) is skipped by :func:`aggregate` and counted separately, never scored as a hit.

Example:
    >>> complete_recall_at({5: ["a", "b"], 10: ["a", "b", "c"]}, ["a", "c"])
    {5: False, 10: True}
    >>> percentile([10.0, 20.0, 30.0, 40.0], 50)
    25.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _lower(names: Iterable[str]) -> set[str]:
    return {n.lower() for n in names}


def complete_recall_at(kept_by_budget: Mapping[int, Sequence[str]], gold: Sequence[str]) -> dict[int, bool]:
    """Per budget: is every gold table among the kept tables (kept already FK-expanded, <= budget)?"""
    want = _lower(gold)
    return {budget: bool(want) and want <= _lower(kept) for budget, kept in kept_by_budget.items()}


def table_recall(kept: Sequence[str], gold: Sequence[str]) -> float:
    """|gold ∩ kept| / |gold|; 0.0 when there is no gold."""
    want = _lower(gold)
    return len(want & _lower(kept)) / len(want) if want else 0.0


def precision(kept: Sequence[str], gold: Sequence[str]) -> float:
    """|gold ∩ kept| / |kept|; 0.0 when nothing was kept."""
    have = _lower(kept)
    return len(_lower(gold) & have) / len(have) if have else 0.0


def column_srr(kept_columns: Mapping[str, Iterable[str]], gold_columns: Mapping[str, Iterable[str]]) -> bool:
    """Strict recall: every gold ``table.column`` is in the focused schema.

    ``kept_columns`` maps each kept table to the columns shown for it; a table that is not a
    key is not in the focused schema at all. A question without gold columns (``COUNT(*)``
    only) passes when its gold tables are kept.
    """
    kept = {t.lower(): _lower(cols) for t, cols in kept_columns.items()}
    for table, cols in gold_columns.items():
        shown = kept.get(table.lower())
        if shown is None or not _lower(cols) <= shown:
            return False
    return True


def reciprocal_rank(ranked: Sequence[str], gold: Sequence[str]) -> float:
    """1 / (1-based rank of the first gold table in ``ranked``); 0.0 if none is there."""
    want = _lower(gold)
    for i, name in enumerate(ranked, start=1):
        if name.lower() in want:
            return 1.0 / i
    return 0.0


def mrr(records: Iterable[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Mean reciprocal rank over ``(ranked, gold)`` pairs."""
    ranks = [reciprocal_rank(ranked, gold) for ranked, gold in records]
    return sum(ranks) / len(ranks) if ranks else 0.0


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default method), 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def context_ratio(focused_tokens: int, full_tokens: int) -> float:
    """Focused-schema tokens / full-schema tokens (same tokenizer, same formatter)."""
    return focused_tokens / full_tokens if full_tokens > 0 else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def aggregate(records: Sequence[Mapping[str, Any]], budgets: Sequence[int]) -> dict[str, Any]:
    """Headline metrics over per-question records of one method.

    Each record holds ``gold_tables``, ``gold_columns``, ``kept_by_budget`` ({budget: tables}),
    ``kept_columns`` (at the largest budget), ``focused_tokens``, ``full_tokens`` and
    ``latency_ms``. Table recall, precision, column SRR, MRR and context ratio are taken at
    the largest budget (reported as ``metrics_budget``).
    """
    scored = [r for r in records if r["gold_tables"]]
    top = max(budgets)
    hits = {b: 0 for b in budgets}
    for r in scored:
        kept = {b: r["kept_by_budget"][b] for b in budgets}
        for b, ok in complete_recall_at(kept, r["gold_tables"]).items():
            hits[b] += ok
    n = len(scored)
    latencies = [float(r["latency_ms"]) for r in records]
    return {
        "complete_recall": {str(b): hits[b] / n if n else 0.0 for b in budgets},
        "column_srr": _mean([float(column_srr(r["kept_columns"], r["gold_columns"])) for r in scored]),
        "column_srr_ddl": _mean(
            [float(column_srr(r.get("ddl_columns", r["kept_columns"]), r["gold_columns"])) for r in scored]
        ),
        "table_recall": _mean([table_recall(r["kept_by_budget"][top], r["gold_tables"]) for r in scored]),
        "precision": _mean([precision(r["kept_by_budget"][top], r["gold_tables"]) for r in scored]),
        "context_ratio": _mean([context_ratio(r["focused_tokens"], r["full_tokens"]) for r in scored]),
        "mrr": mrr((r["kept_by_budget"][top], r["gold_tables"]) for r in scored),
        "mean_tables_kept": _mean([float(len(r["kept_by_budget"][top])) for r in scored]),
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        "metrics_budget": top,
        "scored_questions": n,
        "skipped_no_gold": len(records) - n,
    }
