"""The adaptive budget's join signal, and the widening it drives, on small synthetic schemas."""

from __future__ import annotations

from typing import Any

import numpy as np
from tiny_support import in_memory_artifact

from schemarag.runtime.search.join_signal import JoinSignal, join_cues, join_signal, name_words
from schemarag.runtime.search.table_ranking import AdaptiveBudget, rank_tables_from_scores

# Six key-less tables (no FK expansion can add any), scored so a confidence cut keeps one.
HR: dict[str, Any] = {
    "name": "hr",
    "tables": [
        {"name": t, "columns": [{"name": "id", "primary_key": True}, {"name": "label"}]}
        for t in ("employees", "departments", "offices", "projects", "badges", "order_items")
    ],
}
HR_SCORES = np.array([0.9, 0.5, 0.4, 0.3, 0.2, 0.1], dtype=np.float32)
ONE = "How many employees joined last year?"
SEVERAL = "List the employees and their departments for each office"

# Two databases in one union; both have a table called customers.
UNION: dict[str, Any] = {
    "name": "pool",
    "tables": [
        {"name": "shop__customers", "database": "shop", "columns": [{"name": "id"}]},
        {"name": "shop__orders", "database": "shop", "columns": [{"name": "id"}]},
        {"name": "bank__customers", "database": "bank", "columns": [{"name": "id"}]},
        {"name": "bank__bank", "database": "bank", "columns": [{"name": "id"}]},
    ],
}


def _hr():
    return in_memory_artifact(HR, [(t["name"], "table", None) for t in HR["tables"]])


def _rank(question: str, **kw):
    kw = {"budget": 15, "fk_expand": False, "family_slots": None, **kw}
    return rank_tables_from_scores(_hr(), HR_SCORES, question=question, **kw)


def test_cues_are_general_english_whole_words_longest_first() -> None:
    assert join_cues("Average salary per department, for each year") == ("for each", "per")
    assert join_cues("Names of the players along with their teams, respectively") == (
        "along with",
        "respectively",
    )
    assert join_cues("Which reach is permanent?") == ()  # 'per' only as a word, never inside one
    assert join_cues("EACH one compared TO the other") == ("compared to", "each")


def test_name_words_drop_the_union_database_numbers_and_schema_prefix() -> None:
    assert name_words("shop__customers", "shop") == {"custom"}
    assert name_words("bank__bank", "bank") == {"bank"}  # nothing left without the prefix: keep it
    assert name_words("ANALYTICS.ORDER_ITEMS_2024") == {"order", "item"}
    assert name_words("tbl_1") == {"tbl"}
    assert name_words("t_42") == frozenset()  # no word to name it by


def test_named_tables_need_every_name_word_of_the_question() -> None:
    art = _hr()
    assert join_signal(art, ONE).named == ("employees",)
    assert join_signal(art, "Items of each order").named == ("order_items",)
    assert join_signal(art, "The biggest order").named == ()  # 'item' missing
    sig = join_signal(art, SEVERAL)
    assert sig.named == ("employees", "departments", "offices")
    assert sig.cues == ("for each", "and their")
    assert sig.need == 4  # two tables beyond the first, two cues


def test_in_a_union_only_the_routed_databases_tables_count() -> None:
    art = in_memory_artifact(UNION, [(t["name"], "table", None) for t in UNION["tables"]])
    shop = art.table_source["shop__orders"]
    q = "customers and their orders"
    assert join_signal(art, q, shop).named == ("shop__customers", "shop__orders")
    assert join_signal(art, q, art.table_source["bank__bank"]).named == ("bank__customers",)
    assert join_signal(art, q).named == ("shop__customers", "shop__orders", "bank__customers")


def test_a_one_entity_question_needs_nothing_more() -> None:
    assert JoinSignal(named=("employees",)).need == 0
    assert JoinSignal().need == 0


def test_a_multi_entity_question_keeps_more_tables_with_the_same_scores() -> None:
    cut = AdaptiveBudget(0.8, min_tables=1, join_floor=1)
    one, several = _rank(ONE, adaptive=cut), _rank(SEVERAL, adaptive=cut)
    assert one.tables == ["employees"] and one.widened is None
    assert several.tables == ["employees", "departments", "offices", "projects", "badges"]  # 1 + 4
    assert several.widened == {
        "named_tables": ["employees", "departments", "offices"],
        "cues": ["for each", "and their"],
        "need": 4,
        "min_tables": 5,
    }
    assert several.to_dict()["widened"] == several.widened
    # join_floor 0 (the cut alone) treats both questions alike
    plain = AdaptiveBudget(0.8, min_tables=1)
    assert _rank(SEVERAL, adaptive=plain).tables == _rank(ONE, adaptive=plain).tables == ["employees"]


def test_widening_never_exceeds_the_budget() -> None:
    wide = AdaptiveBudget(0.8, min_tables=1, join_floor=5)
    for budget in (1, 2, 3, 6):
        ranking = _rank(SEVERAL, adaptive=wide, budget=budget)
        assert len(ranking.tables) == budget
        assert ranking.widened is not None and ranking.widened["min_tables"] <= budget


def test_no_widening_when_nothing_is_cut() -> None:
    # a fixed budget, or an adaptive one whose cut does not apply, has nothing to widen
    assert _rank(SEVERAL).widened is None
    none_cut = AdaptiveBudget(0.0, min_tables=1, join_floor=2)
    assert _rank(SEVERAL, adaptive=none_cut).widened is None
    assert len(_rank(SEVERAL, adaptive=none_cut).tables) == 6


def test_retrieve_says_why_the_budget_was_widened(capsys) -> None:
    from schemarag.app.commands.retrieve_cmd import _print_ranking

    ranking = _rank(SEVERAL, adaptive=AdaptiveBudget(0.8, min_tables=1, join_floor=1))
    ranking.adaptive = True
    _print_ranking(ranking, set())
    out = capsys.readouterr().out
    assert "adaptive floor widened to 5 tables for a join: names employees, departments, offices;" in out
    assert "'for each', 'and their'" in out
