"""Each metric on hand-made cases, and the aggregate over per-question records."""

from __future__ import annotations

import pytest

from schemarag.tools.evaluation.metrics import (
    aggregate,
    column_srr,
    complete_recall_at,
    context_ratio,
    mrr,
    percentile,
    precision,
    reciprocal_rank,
    table_recall,
)


def test_complete_recall_needs_every_gold_table_case_insensitively() -> None:
    kept = {5: ["orders", "Users"], 8: ["orders", "users", "items"]}
    assert complete_recall_at(kept, ["users", "items"]) == {5: False, 8: True}
    assert complete_recall_at(kept, []) == {5: False, 8: False}  # no gold is never a hit


def test_table_recall_and_precision() -> None:
    assert table_recall(["a", "b", "c", "d"], ["a", "x"]) == 0.5
    assert precision(["a", "b", "c", "d"], ["a", "x"]) == 0.25
    assert precision([], ["a"]) == 0.0 and table_recall(["a"], []) == 0.0


def test_column_srr() -> None:
    kept = {"orders": ["id", "user_id"], "users": ["id", "name"]}
    assert column_srr(kept, {"orders": ["user_id"], "Users": ["NAME"]})
    assert not column_srr(kept, {"orders": ["total"]})
    assert not column_srr(kept, {"items": ["id"]})  # table not in the focused schema
    assert column_srr(kept, {})  # COUNT(*) only: nothing to miss


def test_reciprocal_rank_and_mrr() -> None:
    assert reciprocal_rank(["x", "y", "gold"], ["gold", "other"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], ["gold"]) == 0.0
    assert mrr([(["g"], ["g"]), (["x", "g"], ["g"]), (["x"], ["g"])]) == pytest.approx(0.5)
    assert mrr([]) == 0.0


def test_percentile_matches_linear_interpolation() -> None:
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 95) == pytest.approx(4.8)
    assert percentile([7.0], 95) == 7.0 and percentile([], 50) == 0.0


def test_context_ratio() -> None:
    assert context_ratio(250, 1000) == 0.25
    assert context_ratio(5, 0) == 0.0


def _record(gold, kept5, kept10, cols, latency, focused=100) -> dict:
    return {
        "gold_tables": gold,
        "gold_columns": {t: ["id"] for t in gold},
        "kept_by_budget": {5: kept5, 10: kept10},
        "kept_columns": cols,
        "focused_tokens": focused,
        "full_tokens": 1000,
        "latency_ms": latency,
    }


def test_aggregate_over_hand_made_records() -> None:
    records = [
        _record(["a"], ["a", "b"], ["a", "b"], {"a": ["id"], "b": ["id"]}, 10.0, 200),
        _record(["a", "c"], ["b", "a"], ["b", "a", "c"], {"b": ["id"], "a": ["id"], "c": ["x"]}, 30.0, 400),
        _record([], ["a"], ["a"], {"a": ["id"]}, 20.0),  # gold did not resolve: skipped
    ]
    m = aggregate(records, [5, 10])
    assert m["complete_recall"] == {"5": 0.5, "10": 1.0}
    assert m["column_srr"] == 0.5  # c.id is not shown in the second question
    assert m["table_recall"] == 1.0
    assert m["precision"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert m["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    assert m["context_ratio"] == pytest.approx(0.3)
    assert m["latency_ms"] == {"p50": 20.0, "p95": pytest.approx(29.0)}
    assert (m["scored_questions"], m["skipped_no_gold"], m["metrics_budget"]) == (2, 1, 10)
