"""Table ranking and FK expansion on hand-made chunk scores (no model, no build)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ranking_support import rank_with, route_with, table_scores
from tiny_support import in_memory_artifact

from schemarag.runtime.core.schema import Database
from schemarag.runtime.ranking.config import SHIPPED, AdaptiveBudget, RouteHedge
from schemarag.runtime.ranking.evidence import source_coverage, table_coverage

# orders -> customers (FK), products unrelated, order_items -> orders and -> products
STORE: dict[str, Any] = {
    "name": "store",
    "tables": [
        {"name": "customers", "columns": [{"name": "id", "primary_key": True}, {"name": "full_name"}]},
        {
            "name": "orders",
            "columns": [
                {"name": "id", "primary_key": True},
                {"name": "customer_id", "foreign_key": {"table": "customers", "column": "id"}},
                {"name": "status"},
                {"name": "placed_at"},
            ],
        },
        {"name": "products", "columns": [{"name": "sku", "primary_key": True}, {"name": "title"}]},
        {
            "name": "order_items",
            "columns": [
                {"name": "order_id", "foreign_key": {"table": "orders", "column": "id"}},
                {"name": "sku", "foreign_key": {"table": "products", "column": "sku"}},
            ],
        },
    ],
}
TABLE = ["customers", "orders", "products", "order_items"]


def _art(per_table: dict[str, list[float]]):
    chunks, scores = [], []
    for t, vals in per_table.items():
        for v in vals:
            chunks.append((t, "table", None))
            scores.append(v)
    return in_memory_artifact(STORE, chunks), np.array(scores, dtype=np.float32)


def test_table_score_is_best_chunk_plus_a_little_of_the_next_two() -> None:
    art, rel = _art(
        {"customers": [0.9, 0.5, 0.4, 0.1], "orders": [0.6], "products": [], "order_items": [0.2, 0.2]}
    )
    w = SHIPPED.second_weight
    expected = [
        (0.9 + w / 2 * (0.5 + 0.4)) / (1 + w),  # the fourth chunk does not count
        0.6 / (1 + w),
        0.0,
        (0.2 + w / 2 * 0.2) / (1 + w),
    ]
    assert table_scores(art, rel).tolist() == pytest.approx(expected)


def test_database_level_chunks_count_for_no_table() -> None:
    art = in_memory_artifact(STORE, [(None, "database", None), ("orders", "table", None)])
    assert table_scores(art, np.array([1.0, 0.3], dtype=np.float32)).tolist() == pytest.approx(
        [0.0, 0.3 / (1 + SHIPPED.second_weight), 0.0, 0.0]
    )


def test_route_single_source_is_by_score_then_schema_order() -> None:
    art, _ = _art({t: [] for t in TABLE})
    order, margin = route_with(art, np.array([0.2, 0.9, 0.2, 0.5], dtype=np.float32))
    assert margin == 0.0  # one source: nothing to be unsure between
    assert [TABLE[i] for i in order.tolist()] == ["orders", "order_items", "customers", "products"]


def test_fk_neighbours_with_comparable_evidence_are_pulled_forward() -> None:
    # products outranks customers, but customers joins orders and has half its evidence
    art, rel = _art({"customers": [0.5], "orders": [0.9], "products": [0.8], "order_items": []})
    assert rank_with(art, rel, budget=2).tables == ["orders", "customers"]
    assert rank_with(art, rel, budget=2, fk_expand=False).tables == ["orders", "products"]


def test_weak_fk_neighbours_are_not_pulled_forward() -> None:
    art, rel = _art({"customers": [0.3], "orders": [0.9], "products": [0.8], "order_items": []})
    assert SHIPPED.neighbour_ratio * 0.9 > 0.3
    assert rank_with(art, rel, budget=2).tables == ["orders", "products"]


def test_budget_caps_the_tables_and_ranked_lists_every_table() -> None:
    art, rel = _art({"customers": [0.5], "orders": [0.9], "products": [0.8], "order_items": [0.7]})
    ranking = rank_with(art, rel, budget=3)
    assert len(ranking.tables) == 3 and ranking.tables[0] == "orders"
    assert sorted(ranking.ranked) == sorted(TABLE)
    assert set(ranking.scores) == set(ranking.tables)


def test_key_columns_are_always_kept_and_named_columns_shown() -> None:
    art = in_memory_artifact(STORE, [("orders", "column", "status"), ("orders", "column", "placed_at")])
    rel = np.array([0.9, 0.0], dtype=np.float32)
    ranking = rank_with(art, rel, budget=1, question="orders placed_at by status")
    assert ranking.tables == ["orders"]
    kept = ranking.columns["orders"]
    assert {"id", "customer_id"} <= set(kept)  # PK and FK: join columns are never pruned
    assert {"status", "placed_at"} <= set(kept)  # scored best, and named in the question


def test_neighbours_are_one_fk_hop_in_either_direction() -> None:
    db = Database.model_validate(STORE)
    assert db.neighbours("orders") == {"customers", "order_items"}
    assert db.neighbours("customers") == {"orders"}
    assert db.neighbours("ORDER_ITEMS") == {"orders", "products"}  # case-insensitive lookup
    assert db.neighbours("missing") == set()


# Two source databases in one union index: the league's tables match one question word
# strongly, the shop holds every other word of the question.
UNION: dict[str, Any] = {
    "name": "union",
    "tables": [
        {"name": "teams", "database": "league", "columns": [{"name": "id", "primary_key": True}]},
        {"name": "players", "database": "league", "columns": [{"name": "id", "primary_key": True}]},
        {"name": "orders", "database": "shop", "columns": [{"name": "id", "primary_key": True}]},
        {"name": "customers", "database": "shop", "columns": [{"name": "id", "primary_key": True}]},
    ],
}


def _union_art():
    chunks = [
        ("teams", "table", None),
        ("players", "table", None),
        ("orders", "table", None),
        ("customers", "table", None),
    ]
    postings = {"gold": {0: 1.0}, "custom": {3: 1.0}, "order": {2: 1.0}, "place": {2: 0.5}}
    art = in_memory_artifact(UNION, chunks, vocab=list(postings), postings=postings)
    return art, np.array([0.9, 0.8, 0.7, 0.6], dtype=np.float32)


def test_source_coverage_weights_words_by_how_few_databases_hold_them() -> None:
    art, _ = _union_art()
    _, sources = art.table_sources
    cov = source_coverage(art, "Which gold customers placed orders?")
    assert cov is not None
    by_source = dict(zip(sources, cov.tolist(), strict=True))
    assert by_source["shop"] == pytest.approx(0.75) and by_source["league"] == pytest.approx(0.25)
    assert source_coverage(art, "nothing indexed here") is None


def test_routing_prefers_the_database_that_holds_the_question_words() -> None:
    art, rel = _union_art()
    q = "Which gold customers placed orders?"
    # table evidence alone routes to the league (0.9 + half of 0.8 beats 0.7 + half of 0.6);
    # the question names orders and customers, so the named-table boost is off to isolate routing
    alone = {"route_coverage": 0.0, "name_boost": 0.0}
    assert rank_with(art, rel, budget=2, question=q, **alone).tables == ["teams", "players"]
    assert rank_with(art, rel, budget=2, question=q, name_boost=0.0).tables == [
        "orders",
        "customers",
    ]
    # naming them is evidence too: boosted, they lead even without coverage routing
    assert rank_with(art, rel, budget=2, question=q, route_coverage=0.0).tables == [
        "orders",
        "customers",
    ]


def test_table_coverage_weights_words_by_how_few_tables_hold_them() -> None:
    # one chunk per STORE table; "order" and "product" are in two tables, "custom" and "place" in one
    postings = {"custom": {0: 1.0}, "order": {1: 1.0, 3: 1.0}, "place": {1: 0.5}, "product": {2: 1.0, 3: 1.0}}
    art = in_memory_artifact(
        STORE, [(t, "table", None) for t in TABLE], vocab=list(postings), postings=postings
    )
    q = "customers who placed orders for products"
    cov = table_coverage(art, q)
    assert cov is not None
    by_table = dict(zip(TABLE, cov.tolist(), strict=True))
    # idf over tables: custom and place 1.204 each, order and product 0.693 each (of 3.794)
    assert by_table["orders"] == pytest.approx(0.5)
    assert by_table["order_items"] > by_table["customers"] > by_table["products"] > 0.0
    assert table_coverage(art, "nothing indexed here") is None
    # as an order: customers (0.9) matches one word, orders (0.8) two rarer ones; at power 1
    # coverage puts orders first, at 0 the chunk score alone keeps customers first
    rel = np.array([0.9, 0.8, 0.7, 0.6], dtype=np.float32)
    kw: dict[str, Any] = {"budget": 4, "question": q, "name_boost": 0.0, "fk_expand": False}
    plain = rank_with(art, rel, coverage_power=0.0, **kw)
    covered = rank_with(art, rel, coverage_power=1.0, **kw)
    assert plain.tables[0] == "customers" and covered.tables[0] == "orders"
    # the reported scores stay the calibrated chunk evidence, whatever the order
    assert covered.scores == plain.scores and covered.scores["customers"] > covered.scores["orders"]


def test_in_a_union_table_coverage_leaves_the_ranking_alone() -> None:
    art, rel = _union_art()
    q = "Which gold customers placed orders?"
    kw: dict[str, Any] = {"budget": 4, "question": q, "route_coverage": 0.0, "name_boost": 0.0}
    # a union routes by its databases' coverage (source_coverage); table coverage would move the
    # shop's orders (two of the four words) before the league's teams (one): it does not apply
    plain = rank_with(art, rel, coverage_power=0.0, **kw).tables
    assert rank_with(art, rel, coverage_power=1.0, **kw).tables == plain
    assert plain[0] == "teams"


def test_single_source_index_has_no_coverage_routing() -> None:
    art, _ = _art({t: [] for t in TABLE})
    assert source_coverage(art, "orders of customers") is None


# Three sources: a large winner, a close runner-up and a distant one (routing by table evidence).
THREE: dict[str, Any] = {
    "name": "three",
    "tables": [
        *({"name": f"big{i}", "database": "big", "columns": [{"name": "id"}]} for i in range(4)),
        *({"name": f"close{i}", "database": "close", "columns": [{"name": "id"}]} for i in range(2)),
        {"name": "far0", "database": "far", "columns": [{"name": "id"}]},
    ],
}
THREE_SCORES = np.array([0.9, 0.8, 0.7, 0.6, 0.85, 0.3, 0.2], dtype=np.float32)  # big0..3, close0..1, far0


def _three_order(hedge) -> list[str]:
    art = in_memory_artifact(THREE, [(t["name"], "table", None) for t in THREE["tables"]])
    order, _ = route_with(art, THREE_SCORES, route_hedge=hedge)
    return [art.table_names[i] for i in order.tolist()]


def test_without_hedging_the_winning_database_takes_every_leading_place() -> None:
    assert _three_order(None) == ["big0", "big1", "big2", "big3", "close0", "close1", "far0"]


def test_hedging_gives_a_close_runner_up_its_best_tables_after_the_winners_best() -> None:
    # source scores: big 0.9 + 0.5 * 0.8 = 1.3; close 0.85 + 0.5 * 0.3 = 1.0; far 0.2
    hedge = RouteHedge(ratio=0.5, lead=2, share=1, runners=2)
    assert _three_order(hedge) == ["big0", "big1", "close0", "big2", "big3", "close1", "far0"]
    # a runner-up below ratio x the winner gets nothing: far (0.2 < 0.5 * 1.3) is never hoisted
    wide = RouteHedge(ratio=0.5, lead=1, share=2, runners=2)
    assert _three_order(wide) == ["big0", "close0", "close1", "big1", "big2", "big3", "far0"]
    strict = RouteHedge(ratio=0.8, lead=2, share=1, runners=2)
    assert _three_order(strict) == _three_order(None)  # 1.0 < 0.8 * 1.3: a clear winner keeps all


def test_a_hedged_budget_keeps_the_runner_ups_best_table() -> None:
    art = in_memory_artifact(THREE, [(t["name"], "table", None) for t in THREE["tables"]])
    hedge = RouteHedge(ratio=0.5, lead=2, share=1, runners=2)
    kw = {"budget": 3, "route_coverage": 0.0, "family_slots": None}  # big0..3 would be one family
    assert rank_with(art, THREE_SCORES, route_hedge=hedge, **kw).tables == [
        "big0",
        "big1",
        "close0",
    ]
    assert rank_with(art, THREE_SCORES, route_hedge=None, **kw).tables == [
        "big0",
        "big1",
        "big2",
    ]


def test_adaptive_budget_keeps_a_floor_and_cuts_only_when_routing_is_sure() -> None:
    art = in_memory_artifact(THREE, [(t["name"], "table", None) for t in THREE["tables"]])
    kw = {"budget": 7, "route_coverage": 0.0, "route_hedge": None, "fk_expand": False, "family_slots": None}

    def rank(**more):
        return rank_with(art, THREE_SCORES, **kw, **more)

    # big0..big3 score 0.9, 0.8, 0.7, 0.6 (x the same table-score scale)
    cut = rank(adaptive=AdaptiveBudget(0.8)).tables
    assert cut == ["big0", "big1"]  # 0.7 < 0.8 * 0.9: the cut stops at big2
    floor = rank(adaptive=AdaptiveBudget(0.8, min_tables=4)).tables
    assert floor == ["big0", "big1", "big2", "big3", "close0"]  # four kept, then the cut: close0 passes it
    # routing margin here: close / big = 1.0 / 1.3 = 0.77; a cut only below 0.7 does not apply
    unsure = rank(adaptive=AdaptiveBudget(0.8, sure_margin=0.7)).tables
    assert len(unsure) == 7
    sure = rank(adaptive=AdaptiveBudget(0.8, sure_margin=0.8)).tables
    assert sure == cut
