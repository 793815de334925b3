"""Past queries chosen for a prompt from a real index's query history (issue 38, item 4).

The index is the sample ``ecommerce`` built by the real graph with a history imported by the
real ``import queries`` (``tests/history_support.py``); rankings are written out by hand where a
test needs exact scores, and come from the real retriever where it needs the served path.
"""

from __future__ import annotations

import pytest
import sqlglot
from history_support import DB, SPEND, HistoryIndexes, build_history_indexes

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.search.history_examples import (
    SECTION_TITLE,
    STRONG_RATIO,
    example_scores,
    examples_section,
    history_has_placeholders,
    select_examples,
)
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.retriever import Retriever


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> HistoryIndexes:
    return build_history_indexes(tmp_path_factory.mktemp("history_examples"))


@pytest.fixture(scope="module")
def art(indexes: HistoryIndexes):
    return Retriever.open(DB, artifacts=indexes.artifacts).pin().artifact


def _ranking(scores: dict[str, float]) -> TableRanking:
    return TableRanking(tables=list(scores), scores=scores, ranked=list(scores))


def _sql(art, examples) -> list[str]:
    return [art.history.examples["sql"][ex.row] for ex in examples]


def test_examples_read_only_kept_tables_best_fitting_first(art) -> None:
    both = _ranking({"orders": 0.8, "users": 0.7})
    chosen = select_examples(art, both, 10)
    # orders+users (1 - 0.5 + 0.875 - 0.5) beat orders alone (0.5) and users alone (0.375); the
    # spend query ran 5 times, the count once: runs break the tie; products is not kept
    assert [ex.tables for ex in chosen] == [("orders", "users"), ("orders", "users"), ("orders",), ("users",)]
    assert chosen[0].runs == 5 and chosen[0].score == pytest.approx(0.875)
    assert chosen[0].text.startswith(f"-- question: {SPEND}\nSELECT")
    assert chosen[1].text.startswith("-- tables: orders, users\nSELECT COUNT(*)")
    # the count statement was logged twice (without and with a question): shown once
    assert sum(sql == art.history.examples["sql"][chosen[1].row] for sql in _sql(art, chosen)) == 1
    assert all("'" not in ex.text for ex in chosen), "literals stay placeholders"
    assert [ex.tables for ex in select_examples(art, both, 2)] == [("orders", "users")] * 2
    only_orders = select_examples(art, _ranking({"orders": 0.9}), 10)
    assert [ex.tables for ex in only_orders] == [("orders",)], (
        "an example reading an unshown table is never chosen"
    )


def test_a_weak_table_counts_against_an_example(art) -> None:
    # users at 0.1 of the best is far below the strong ratio: reading it costs an example
    weak_users = _ranking({"orders": 0.8, "users": 0.08})
    chosen = select_examples(art, weak_users, 10)
    assert chosen[0].tables == ("orders",)
    assert chosen[0].score == pytest.approx(1 - STRONG_RATIO)
    assert ("users",) not in [ex.tables for ex in chosen], "an example with a negative total is not shown"
    # the plain sum of scores (strong_ratio 0) puts the widest query first
    plain = select_examples(art, weak_users, 1, strong_ratio=0.0)
    assert plain[0].tables == ("orders", "users")
    score, eligible = example_scores(art, weak_users)
    assert eligible.tolist() == [True, False, True, True, True, True]  # products is not kept
    assert score.shape == (art.history.n_examples,)


def test_token_limits_skip_whole_examples(art) -> None:
    both = _ranking({"orders": 0.8, "users": 0.7})
    every = select_examples(art, both, 10, max_tokens=None)
    first = every[0]
    assert first.tokens == estimate_tokens(first.text)
    # the spend query does not fit: skipped whole, never cut; the next ones that fit follow
    fewer = select_examples(art, both, 10, max_tokens=first.tokens - 1)
    assert first.row not in [ex.row for ex in fewer]
    assert sum(ex.tokens for ex in fewer) <= first.tokens - 1
    assert all(ex.text in {e.text for e in every} for ex in fewer)
    short = select_examples(art, both, 10, max_example_tokens=first.tokens - 1)
    assert first.row not in [ex.row for ex in short] and len(short) == len(every) - 1
    assert select_examples(art, both, 10, max_tokens=0) == []


def test_nothing_without_a_history_a_ranking_or_k(indexes: HistoryIndexes, art) -> None:
    plain = Retriever.open(DB, artifacts=indexes.plain).pin().artifact
    both = _ranking({"orders": 0.8, "users": 0.7})
    assert not plain.history.present
    assert select_examples(plain, both, 3) == []
    assert select_examples(art, both, 0) == []
    assert select_examples(art, None, 3) == []
    assert select_examples(None, both, 3) == []
    assert examples_section([]) == ""


def test_the_served_ranking_chooses_without_parsing_sql(art, indexes: HistoryIndexes, monkeypatch) -> None:
    pinned = Retriever.open(DB, artifacts=indexes.artifacts).pin()
    ranking = pinned.search(SPEND).ranking
    assert ranking is not None

    def refuse(*args, **kwargs):
        raise AssertionError("a request parsed SQL")

    for name in ("parse", "parse_one", "tokenize", "transpile"):
        monkeypatch.setattr(sqlglot, name, refuse)
    chosen = select_examples(pinned.artifact, ranking, 2)
    assert chosen and chosen[0].tables == ("orders", "users")
    assert chosen[1].tables == ("orders", "users") and "WHERE users.country = ?" in chosen[1].text


def test_section_says_what_the_examples_are(art) -> None:
    chosen = select_examples(art, _ranking({"orders": 0.8, "users": 0.7}), 2)
    assert history_has_placeholders(art)
    text = examples_section(chosen, history_has_placeholders(art))
    head, *bodies = text.split("\n\n")
    assert head.startswith(SECTION_TITLE) and "? stands for a literal value" in head
    assert bodies == [ex.text for ex in chosen]
    assert "? stands for" not in examples_section(chosen, placeholders=False)
    assert chosen[0].to_dict() == {
        "example_id": chosen[0].example_id,
        "tables": ["orders", "users"],
        "score": 0.875,
        "runs": 5,
        "tokens": chosen[0].tokens,
    }
