"""The query history's stages alone, on a few synthetic tables with a hand-made history: each
config field moves what it says, and a version without a history ranks exactly as before."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from tiny_support import in_memory_artifact

from schemarag.runtime.artifact.history import QueryHistory
from schemarag.runtime.ranking import budget, evidence, history, routing
from schemarag.runtime.ranking.candidates import Candidates, RankingRequest
from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.ranking.pipeline import rank
from schemarag.runtime.search.history_signals import co_usage, table_usage

# no declared keys at all: orders / customers / regions are key-less, as in many warehouses
SCHEMA: dict[str, Any] = {
    "name": "wh",
    "tables": [
        {"name": "orders", "columns": [{"name": "id"}, {"name": "cust"}]},
        {"name": "customers", "columns": [{"name": "cid"}, {"name": "region"}]},
        {"name": "regions", "columns": [{"name": "rid"}, {"name": "label"}]},
        {"name": "unused", "columns": [{"name": "x"}]},
    ],
}
NAMES = ["orders", "customers", "regions", "unused"]


def _history() -> QueryHistory:
    """Ten statements read orders; six of them join customers (orders.cust = customers.cid),
    two of those also regions (customers.region = regions.rid); unused never appears."""
    empty = QueryHistory.empty()
    return replace(
        empty,
        tables=np.array([[10, 10], [6, 6], [2, 2], [0, 0]], dtype=np.int64),
        pairs=np.array([[0, 1, 6, 6], [0, 2, 2, 2], [1, 2, 2, 2]], dtype=np.int64),
        joins=np.array([[0, 1, 1, 0, 6, 6], [1, 1, 2, 0, 2, 2]], dtype=np.int64),
        columns=np.zeros((0, 4), dtype=np.int64),
        summary={"present": True},
    )


def _art(with_history: bool) -> Any:
    art = in_memory_artifact(SCHEMA, [(t, "table", None) for t in NAMES])
    return replace(art, history=_history()) if with_history else art


def _candidates(art: Any, scores: list[float], budget_: int = 4) -> Candidates:
    c = Candidates.start(art, np.array(scores, dtype=np.float32), RankingRequest("", budget_))
    evidence.evidence(c, SHIPPED)
    return c


def test_usage_is_log_scaled_and_co_usage_is_the_share_of_a_tables_statements() -> None:
    art = _art(True)
    usage = table_usage(art)
    assert usage[0] == 1.0 and usage[3] == 0.0 and 0 < usage[2] < usage[1] < 1
    co = co_usage(art)
    assert co["orders"] == [("customers", 0.6), ("regions", 0.2)]
    assert co["regions"][0] == ("customers", 1.0)


def test_popularity_moves_a_used_table_before_an_equal_unused_one_and_only_with_a_history() -> None:
    config = replace(SHIPPED, history_popularity=0.3)
    for with_history, first in ((True, "orders"), (False, "unused")):
        c = _candidates(_art(with_history), [0.5, 0.1, 0.1, 0.52])  # unused a little ahead
        history.popularity(c, config)
        routing.routing(c, config)
        ranked = [NAMES[i] for i in c.order]
        assert ranked[0] == first, ranked
    c = _candidates(_art(True), [0.5, 0.1, 0.1, 0.5])
    before = c.scores.copy()
    history.popularity(c, replace(SHIPPED, history_popularity=0.0))
    assert np.array_equal(c.scores, before), "weight 0: the stage is off"


def _kept(art: Any, scores: list[float], config: Any, size: int = 2) -> list[str]:
    c = _candidates(art, scores, size)
    routing.routing(c, config)
    c.queue = [NAMES[i] for i in c.order]
    budget.budget(c, config)
    return c.kept


def test_co_usage_completion_brings_the_table_the_history_reads_with_a_kept_one() -> None:
    scores = [0.9, 0.2, 0.1, 0.5]  # the question matches orders and, by a word, unused
    off = _kept(_art(True), scores, replace(SHIPPED, history_co_share=None))
    assert off == ["orders", "unused"]  # no declared key: customers cannot follow
    on = replace(SHIPPED, history_co_share=0.5, history_co_prior=0.0)
    assert _kept(_art(True), scores, on) == ["orders", "customers"]
    assert _kept(_art(False), scores, on) == off, "no history: nothing changes"
    strict = replace(on, history_co_share=0.7)  # 60 % of orders' statements read customers
    assert _kept(_art(True), scores, strict) == off
    picky = replace(on, history_co_ratio=0.5)  # customers' evidence is 0.2 / 0.9 of orders'
    assert _kept(_art(True), scores, picky) == off
    # two pseudo-statements: 6 / (10 + 2) = 0.5, still enough at 0.5, no longer at 0.55
    assert _kept(_art(True), scores, replace(on, history_co_prior=2.0)) == ["orders", "customers"]
    assert _kept(_art(True), scores, replace(on, history_co_prior=2.0, history_co_share=0.55)) == off


def test_logged_joins_complete_a_join_path_between_key_less_tables() -> None:
    art = _art(True)
    graph = history.join_graph(_candidates(art, [0, 0, 0, 0]), replace(SHIPPED, history_join_extra=None))
    assert graph["orders"] == {}, "history_join_extra None: the schema's keys only"
    config = replace(SHIPPED, history_join_extra=0.1)
    graph = history.join_graph(_candidates(art, [0, 0, 0, 0]), config)
    assert graph["orders"] == {"customers": 1.1} and graph["customers"] == {"orders": 1.1, "regions": 1.1}
    c = _candidates(art, [0.9, 0.0, 0.8, 0.0], 3)
    c.kept = ["orders", "regions"]
    budget.join_paths(c, config)
    assert c.kept == ["orders", "regions", "customers"], "the bridge analysts join through"


def test_without_a_history_every_history_knob_ranks_exactly_as_shipped() -> None:
    on = replace(
        SHIPPED,
        history_popularity=0.3,
        history_co_share=0.25,
        history_join_extra=0.1,
        history_join_paths=True,
        history_example_weight=0.5,
        history_co_prior=2.0,
    )
    art = _art(False)
    rel = np.array([0.9, 0.2, 0.1, 0.5], dtype=np.float32)
    for size in (1, 2, 4):
        ask = RankingRequest("orders by customer", size)
        a, b = rank(art, rel, ask, SHIPPED), rank(art, rel, ask, on)
        assert (a.tables, a.ranked, a.scores, a.columns) == (b.tables, b.ranked, b.scores, b.columns)


def test_co_usage_prior_lifts_what_the_best_match_is_read_with_by_how_often() -> None:
    config = replace(SHIPPED, history_co_weight=1.0, history_co_top=1, history_co_prior=0.0)
    c = _candidates(_art(True), [0.8, 0.1, 0.1, 0.3])
    before = c.scores.copy()
    history.co_usage_prior(c, config)
    lift = (c.scores - before).tolist()
    # orders is the best match: customers gains 0.6 x its score, regions 0.2 x, unused nothing
    assert np.allclose(lift, [0.0, 0.6 * before[0], 0.2 * before[0], 0.0], atol=1e-6)
    assert c.scores[1] > c.scores[3], "customers now ahead of the one-word match"
    for art, cfg in ((_art(False), config), (_art(True), replace(config, history_co_weight=0.0))):
        c = _candidates(art, [0.8, 0.1, 0.1, 0.3])
        before = c.scores.copy()
        history.co_usage_prior(c, cfg)
        assert np.array_equal(c.scores, before), "no history or weight 0: off"


EXAMPLES = [
    "-- tables: orders\nSELECT count(*) FROM orders",
    "-- tables: orders, customers\nSELECT c.cid, count(*) FROM orders o JOIN customers c ON o.cust = c.cid",
    "-- tables: orders, customers, regions\nSELECT r.label, count(*) FROM orders o JOIN customers c "
    "ON o.cust = c.cid JOIN regions r ON c.region = r.rid GROUP BY r.label",
]


def _with_examples(art: Any) -> Any:
    """``art``'s history with :data:`EXAMPLES` and their BM25 index, as the build writes them."""
    from schemarag.assets.lib.history_arrays import example_bm25

    terms = example_bm25(EXAMPLES)
    h = replace(
        art.history,
        example_indptr=np.array([0, 1, 3, 6], dtype=np.int64),
        example_tables=np.array([0, 0, 1, 0, 1, 2], dtype=np.int32),
        example_term_indptr=terms.indptr,
        example_term_rows=terms.indices,
        example_term_weights=terms.data,
        example_vocab=terms.vocab,
    )
    return replace(art, history=h)


def _example_lift(art: Any, question: str, config: Any) -> list[float]:
    c = Candidates.start(art, np.array([0.8, 0.1, 0.1, 0.3], dtype=np.float32), RankingRequest(question, 4))
    evidence.evidence(c, SHIPPED)
    before = c.scores.copy()
    history.example_evidence(c, config)
    return ((c.scores - before) / before.max()).tolist()  # in units of the best table's score


def test_a_question_like_a_past_query_brings_the_tables_it_read() -> None:
    art = _with_examples(_art(True))
    config = replace(SHIPPED, history_example_weight=0.5, history_example_top=1)
    lift = _example_lift(art, "orders per region label", config)
    # the third example alone matches "label": its three tables gain half the best score
    assert np.allclose(lift, [0.5, 0.5, 0.5, 0.0], atol=1e-6), lift
    two = _example_lift(art, "orders per region label", replace(config, history_example_top=2))
    assert two == lift, "the next examples read no table the first did not lift as much"
    assert _example_lift(art, "unrelated words only", config) == [0.0] * 4, "no match: no lift"
    question = "orders per region label"
    assert _example_lift(art, question, replace(config, history_example_weight=0.0)) == [0.0] * 4
    assert _example_lift(_art(True), question, config) == [0.0] * 4, "a history built before the index"
    assert _example_lift(_art(False), question, config) == [0.0] * 4, "no history"


def test_pseudo_statements_shrink_the_shares_of_a_rarely_read_table() -> None:
    """regions was read twice, both times with customers: a plain share of 1.0, but 2 / (2 + 2)
    with two pseudo-statements; orders, read ten times, keeps most of its shares."""
    art = _art(True)
    assert co_usage(art, 2.0)["regions"][0] == ("customers", 0.5)
    assert co_usage(art, 2.0)["orders"] == [("customers", 0.5), ("regions", 2 / 12)]
    config = replace(SHIPPED, history_co_weight=1.0, history_co_top=1, history_co_prior=2.0)
    c = _candidates(art, [0.1, 0.1, 0.8, 0.3])  # regions is the best match
    before = c.scores.copy()
    history.co_usage_prior(c, config)
    assert np.allclose((c.scores - before)[1], 0.5 * before[2], atol=1e-6), "half, not all, of it"
