"""Each ranking stage alone, on a few synthetic tables (no model, no build): what it reads from
the candidates, what it writes, and that its config field is what moves it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from tiny_support import in_memory_artifact

from schemarag.runtime.ranking import budget, columns, evidence, reorder, routing
from schemarag.runtime.ranking.candidates import Candidates, RankingRequest
from schemarag.runtime.ranking.config import SHIPPED, AdaptiveBudget
from schemarag.runtime.ranking.pipeline import STAGES, rank
from schemarag.runtime.search.value_mentions import MentionHit

# hub <- spoke_a, hub <- spoke_b (declared keys); lone joins nothing
SCHEMA: dict[str, Any] = {
    "name": "shop",
    "tables": [
        {"name": "hub", "columns": [{"name": "id", "primary_key": True}, {"name": "label"}]},
        {
            "name": "spoke_a",
            "columns": [{"name": "id"}, {"name": "hub_id", "foreign_key": {"table": "hub", "column": "id"}}],
        },
        {
            "name": "spoke_b",
            "columns": [{"name": "id"}, {"name": "hub_id", "foreign_key": {"table": "hub", "column": "id"}}],
        },
        {"name": "lone", "columns": [{"name": "x"}, {"name": "y"}]},
    ],
}
NAMES = ["hub", "spoke_a", "spoke_b", "lone"]


def _candidates(scores: list[float], budget: int = 4, **ask: Any) -> Candidates:
    """Candidates whose table evidence is ``scores`` (one table chunk each), routed by score."""
    art = in_memory_artifact(SCHEMA, [(t, "table", None) for t in NAMES])
    rel = np.array(scores, dtype=np.float32)
    c = Candidates.start(art, rel, RankingRequest("", budget, **ask))
    evidence.evidence(c, SHIPPED)
    routing.routing(c, SHIPPED)
    reorder.families(c, SHIPPED)
    return c


def test_the_pipeline_names_every_stage_once_in_the_documented_order() -> None:
    names = [n for n, _ in STAGES]
    assert names == [
        "evidence", "coverage", "name_boost", "popularity", "co_usage", "examples",
        "sibling_prior", "year_prior", "routing", "schema_order",
        "families", "structures",
        "twins", "mentions", "budget", "join_paths", "columns", "shard_hints", "compact_cap",
    ]  # fmt: skip


def test_evidence_scores_each_table_by_its_best_chunk_and_reports_them() -> None:
    c = _candidates([0.2, 0.9, 0.4, 0.0])
    one = np.float32(1.0 + SHIPPED.second_weight)  # a single chunk: no second or third to add
    assert c.scores.tolist() == (np.array([0.2, 0.9, 0.4, 0.0], dtype=np.float32) / one).tolist()
    assert c.calibrated is c.scores  # reported as they are
    half = replace(SHIPPED, second_weight=1.0)
    two = in_memory_artifact(SCHEMA, [("hub", "table", None), ("hub", "column", "label")])
    got = evidence.table_scores(two, np.array([0.8, 0.4], dtype=np.float32), half.second_weight)
    assert got[0] == np.float32((0.8 + 0.5 * 0.4) / 2.0)


def test_routing_in_one_database_orders_by_score() -> None:
    c = _candidates([0.2, 0.9, 0.4, 0.0])
    assert c.ranked == ["spoke_a", "spoke_b", "hub", "lone"]
    assert c.margin == 0.0


def test_budget_takes_declared_neighbours_after_the_table_they_join() -> None:
    c = _candidates([0.5, 0.9, 0.1, 0.6], budget=3)
    budget.budget(c, SHIPPED)  # hub (0.5) follows spoke_a (0.9): 0.5 >= neighbour_ratio 0.5 x 0.9
    assert c.kept == ["spoke_a", "hub", "lone"]
    c = _candidates([0.5, 0.9, 0.1, 0.6], budget=3)
    budget.budget(c, replace(SHIPPED, neighbour_ratio=0.6))
    assert c.kept == ["spoke_a", "lone", "hub"]
    c = _candidates([0.5, 0.9, 0.1, 0.6], budget=3, fk_expand=False)
    budget.budget(c, SHIPPED)
    assert c.kept == ["spoke_a", "lone", "hub"]


def test_a_neighbour_with_next_to_no_evidence_takes_no_place_out_of_turn() -> None:
    # spoke_a is weak but close to the best table; its neighbour hub has 0.04 x the best evidence
    scores = [0.02, 0.03, 0.5, 0.4]  # hub, spoke_a, spoke_b, lone
    c = _candidates(scores, budget=3)
    c.queue = ["spoke_b", "spoke_a", "lone", "hub"]
    budget.budget(c, replace(SHIPPED, neighbour_floor=0.0))  # hub (0.02 >= 0.5 x 0.03) follows spoke_a
    assert c.kept == ["spoke_b", "spoke_a", "hub"]
    c = _candidates(scores, budget=3)
    c.queue = ["spoke_b", "spoke_a", "lone", "hub"]
    budget.budget(c, SHIPPED)  # shipped floor 0.15: 0.02 < 0.15 x 0.5, hub waits its turn
    assert c.kept == ["spoke_b", "spoke_a", "lone"]
    budget.join_paths(c, SHIPPED)  # ... unless it completes a join path
    assert c.kept == ["spoke_b", "spoke_a", "hub"]


def test_an_adaptive_budget_stops_below_its_confidence_but_not_before_its_floor() -> None:
    c = _candidates([0.05, 0.9, 0.1, 0.8], budget=4, adaptive=AdaptiveBudget(confidence=0.5), fk_expand=False)
    budget.budget(c, SHIPPED)
    assert c.kept == ["spoke_a", "lone"]
    c = _candidates(
        [0.05, 0.9, 0.1, 0.8], budget=4, adaptive=AdaptiveBudget(0.5, min_tables=3), fk_expand=False
    )
    budget.budget(c, SHIPPED)
    assert c.kept == ["spoke_a", "lone", "spoke_b"]


def test_join_paths_bring_the_bridge_and_drop_the_weakest() -> None:
    c = _candidates([0.0, 0.9, 0.8, 0.7], budget=3, fk_expand=False)
    budget.budget(c, SHIPPED)
    assert c.kept == ["spoke_a", "spoke_b", "lone"]
    budget.join_paths(c, SHIPPED)  # spoke_b reaches spoke_a only through hub
    assert c.kept == ["spoke_a", "spoke_b", "hub"]
    c = _candidates([0.0, 0.9, 0.8, 0.7], budget=3, fk_expand=False)
    budget.budget(c, SHIPPED)
    budget.join_paths(c, replace(SHIPPED, join_paths=False))
    assert c.kept == ["spoke_a", "spoke_b", "lone"]


def test_mentions_move_a_clear_mentions_table_after_the_lead() -> None:
    c = _candidates([0.9, 0.8, 0.7, 0.1], mentions=[MentionHit("Utah", 3, 0.6, 0.3)])
    reorder.mentions(c, replace(SHIPPED, mention_lead=1))
    assert c.queue == ["hub", "lone", "spoke_a", "spoke_b"]
    c = _candidates([0.9, 0.8, 0.7, 0.1], mentions=[MentionHit("Utah", 3, 0.6, 0.3)])
    reorder.mentions(c, replace(SHIPPED, mention_lead=None))
    assert c.queue == ["hub", "spoke_a", "spoke_b", "lone"]


def test_columns_report_calibrated_scores_and_name_the_focus() -> None:
    c = _candidates([0.9, 0.1, 0.0, 0.0], budget=2)
    budget.budget(c, SHIPPED)
    columns.columns(c, SHIPPED)
    assert c.ranking is not None
    assert c.ranking.tables == ["hub", "spoke_a"]
    reported = (np.float32(0.9) / np.float32(1.0 + SHIPPED.second_weight)).item()
    assert c.ranking.focus == "default" and c.ranking.scores["hub"] == reported
    assert "label" in c.ranking.columns["hub"]  # a label column is always shown


def test_rank_runs_the_stages_in_order_with_the_given_config() -> None:
    art = in_memory_artifact(SCHEMA, [(t, "table", None) for t in NAMES])
    rel = np.array([0.0, 0.9, 0.8, 0.7], dtype=np.float32)
    ask = RankingRequest("", 3)
    assert rank(art, rel, ask).tables == ["spoke_a", "spoke_b", "hub"]
    assert rank(art, rel, ask, replace(SHIPPED, join_paths=False)).tables == ["spoke_a", "spoke_b", "lone"]


def test_kept_by_budget_keeps_what_rank_keeps_at_each_budget() -> None:
    from schemarag.runtime.ranking.pipeline import kept_by_budget

    art = in_memory_artifact(SCHEMA, [(t, "table", None) for t in NAMES])
    for scores in ([0.5, 0.9, 0.1, 0.6], [0.0, 0.9, 0.8, 0.7], [0.02, 0.03, 0.5, 0.4]):
        rel = np.array(scores, dtype=np.float32)
        got = kept_by_budget(art, rel, RankingRequest("hub spoke", 99), [1, 2, 3, 4])
        for b in (1, 2, 3, 4):
            assert got[b] == list(rank(art, rel, RankingRequest("hub spoke", b)).tables)


def test_sibling_prior_scores_the_schema_the_question_fits_worse_lower() -> None:
    cols = [{"name": c} for c in ("hash", "block", "sender", "value")]
    names = ["ETH_CLASSIC.TX", "ETH_CLASSIC.BALANCES", "ETH.TX"]
    schema = {"name": "chain", "tables": [{"name": t, "columns": cols} for t in names]}
    art = in_memory_artifact(schema, [(t, "table", None) for t in names])
    c = Candidates.start(art, np.zeros(3, dtype=np.float32), RankingRequest("ETH balances", 2))
    c.scores = np.array([0.9, 0.8, 0.7], dtype=np.float32)
    routing.sibling_prior(c, replace(SHIPPED, sibling_prior=1.0))
    assert c.scores.tolist() == np.array([0.9, 0.8, 0.7], dtype=np.float32).tolist()  # 1: off
    routing.sibling_prior(c, replace(SHIPPED, sibling_prior=0.5))  # the classic schema's two tables
    assert c.scores.tolist() == np.array([0.45, 0.4, 0.7], dtype=np.float32).tolist()


def test_year_prior_scores_the_copies_of_other_years_lower_when_the_question_names_one() -> None:
    cols = [{"name": c} for c in ("st_case", "state", "veh_no")]
    names = ["vehicle_2015", "vehicle_2016", "person_2015"]
    schema = {"name": "fars", "tables": [{"name": t, "columns": cols} for t in names]}
    art = in_memory_artifact(schema, [(t, "table", None) for t in names])
    scores = np.array([0.8, 0.9, 0.5], dtype=np.float32)
    for question, prior, want in (
        ("vehicles in 2015", 1.0, [0.8, 0.9, 0.5]),  # 1: off
        ("vehicles in 2015", 0.5, [0.8, 0.45, 0.5]),
        ("vehicles in 2016", 0.5, [0.4, 0.9, 0.5]),  # person_2015 has no other year: kept
        ("vehicles per state", 0.5, [0.8, 0.9, 0.5]),  # no year named
        ("vehicles in 2021", 0.5, [0.8, 0.9, 0.5]),  # a year no copy covers
    ):
        c = Candidates.start(art, np.zeros(3, dtype=np.float32), RankingRequest(question, 2))
        c.scores = scores.copy()
        routing.year_prior(c, replace(SHIPPED, year_prior=prior, year_prior_wide=1.0))
        assert c.scores.tolist() == np.array(want, dtype=np.float32).tolist(), question
    # database-wide: person_2015 covers no 2016 while vehicle_2016 does; a group member takes the
    # group's prior alone (vehicle_2015 at 0.5, not 0.5 x 0.25)
    c = Candidates.start(art, np.zeros(3, dtype=np.float32), RankingRequest("vehicles in 2016", 2))
    c.scores = scores.copy()
    routing.year_prior(c, replace(SHIPPED, year_prior=0.5, year_prior_wide=0.25))
    assert c.scores.tolist() == np.array([0.4, 0.9, 0.125], dtype=np.float32).tolist()
