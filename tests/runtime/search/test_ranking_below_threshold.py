"""An asked-for table ranking runs even when no chunk passes the relevance threshold (issue 40,
item 7): served with ``--focus``, 51 of 1,534 BIRD dev questions used to get no table at all.
The threshold still decides which chunks are shown as documentation; a plain search is as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemarag.runtime.formatting import focused_schema_levels
from schemarag.runtime.search.retriever import Retriever

# No chunk of ecommerce reaches 0.3 for it (test_retriever_seed's off-topic questions), yet its
# words still say something about the tables.
QUESTION = "Who won the football world cup in 1998?"


@pytest.fixture(scope="module")
def retriever(built_artifacts: Path) -> Retriever:
    return Retriever.open("ecommerce", artifacts=built_artifacts)


@pytest.mark.parametrize(
    "ask",
    [{"focus": "compact"}, {"focus": "default"}, {"table_budget": 4}, {"adaptive": True}],
    ids=["compact", "default", "budget", "adaptive"],
)
def test_an_asked_for_ranking_runs_without_a_relevant_chunk(retriever: Retriever, ask: dict) -> None:
    res = retriever.search(QUESTION, **ask)
    assert res.chunks == [] and res.metadata.nothing_relevant  # still said: nothing passed 0.3
    ranking = res.ranking
    assert ranking is not None and ranking.tables, "an asked-for ranking always has tables"
    assert res.metadata.tables_included == res.tables and set(res.tables) <= set(ranking.tables)
    budget = ask.get("table_budget", retriever.config.table_budget)
    policy = ask.get("focus")
    if not ask.get("adaptive"):  # the same selection the evaluation's rank_tables makes
        assert ranking.tables == retriever.rank_tables(QUESTION, budget, policy=policy).tables
    text, levels = focused_schema_levels(res.schema, res)
    assert "-- Retrieved documentation" not in text  # no chunk is shown as documentation
    assert list(levels) == ranking.tables
    assert all(f" {t} (" in text or f" {t}:" in text for t in ranking.tables)


def test_a_plain_search_still_returns_no_table(retriever: Retriever) -> None:
    res = retriever.search(QUESTION)
    assert res.ranking is None and res.tables == [] and res.expanded_tables == []
    assert res.metadata.tables_included == [] and res.metadata.nothing_relevant
    assert retriever.search(QUESTION, table_budget=0).ranking is None  # chunks only, as before


def test_the_threshold_only_governs_the_documentation(retriever: Retriever) -> None:
    """A threshold nothing passes leaves the ranking exactly what a passable one gives."""
    question = "Which users placed the most orders?"
    shown = retriever.search(question, focus="compact")
    hidden = retriever.search(question, focus="compact", relevance_threshold=1.0)
    assert shown.chunks and not hidden.chunks
    assert hidden.ranking is not None and shown.ranking is not None
    assert hidden.ranking.tables == shown.ranking.tables
    assert hidden.ranking.columns == shown.ranking.columns
