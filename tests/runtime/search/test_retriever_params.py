"""top_k and relevance_threshold: per call, from the environment, defaults, validation; rank_tables budget."""

from __future__ import annotations

import pytest

from schemarag.runtime.core.config import DEFAULT_THRESHOLD, DEFAULT_TOP_K, RetrievalSettings
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.search.retriever import Retriever

RICH = "Which users have placed the most orders?"  # many chunks are relevant


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("DOC_RETRIEVAL_TOP_K", raising=False)
    monkeypatch.delenv("DOC_RELEVANCE_THRESHOLD", raising=False)
    return monkeypatch


def test_defaults_are_top5_threshold_03(ecommerce: Retriever, clean_env: pytest.MonkeyPatch) -> None:
    assert (DEFAULT_TOP_K, DEFAULT_THRESHOLD) == (5, 0.3)
    res = ecommerce.search(RICH)
    assert len(res.chunks) == 5
    assert res.metadata.top_k == 5 and res.metadata.relevance_threshold == 0.3
    assert all(c.score >= 0.3 for c in res.chunks)


def test_environment_sets_top_k_and_threshold(ecommerce: Retriever, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DOC_RETRIEVAL_TOP_K", "3")
    assert len(ecommerce.search(RICH).chunks) == 3
    clean_env.setenv("DOC_RETRIEVAL_TOP_K", "50")
    clean_env.setenv("DOC_RELEVANCE_THRESHOLD", "0.5")
    res = ecommerce.search(RICH)
    assert res.metadata.top_k == 50 and res.metadata.relevance_threshold == 0.5
    assert res.chunks and all(c.score >= 0.5 for c in res.chunks)
    looser = ecommerce.search(RICH, relevance_threshold=0.3)
    assert len(looser.chunks) > len(res.chunks)


def test_call_arguments_override_environment(ecommerce: Retriever, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("DOC_RETRIEVAL_TOP_K", "2")
    clean_env.setenv("DOC_RELEVANCE_THRESHOLD", "0.9")
    res = ecommerce.search(RICH, top_k=4, relevance_threshold=0.3)
    assert len(res.chunks) == 4
    assert res.metadata.top_k == 4 and res.metadata.relevance_threshold == 0.3


@pytest.mark.parametrize(
    ("name", "value"),
    [("DOC_RETRIEVAL_TOP_K", "five"), ("DOC_RETRIEVAL_TOP_K", "0"), ("DOC_RELEVANCE_THRESHOLD", "high")],
)
def test_invalid_environment_values_are_config_errors(
    ecommerce: Retriever, clean_env: pytest.MonkeyPatch, name: str, value: str
) -> None:
    clean_env.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        ecommerce.search(RICH)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(("top_k", "threshold"), [(0, 0.3), (-1, 0.3), (5, -0.1), (5, 1.5)])
def test_invalid_arguments_are_config_errors(ecommerce: Retriever, top_k: int, threshold: float) -> None:
    with pytest.raises(ConfigError):
        ecommerce.search(RICH, top_k=top_k, relevance_threshold=threshold)


def test_settings_resolution_order(clean_env: pytest.MonkeyPatch) -> None:
    assert RetrievalSettings.resolve() == RetrievalSettings(5, 0.3)
    clean_env.setenv("DOC_RETRIEVAL_TOP_K", " ")  # blank means unset
    clean_env.setenv("DOC_RELEVANCE_THRESHOLD", "0.45")
    assert RetrievalSettings.resolve() == RetrievalSettings(5, 0.45)
    assert RetrievalSettings.resolve(7, 0.1) == RetrievalSettings(7, 0.1)


def test_changing_parameters_gives_fresh_results_not_cached_ones(
    ecommerce: Retriever, clean_env: pytest.MonkeyPatch
) -> None:
    lengths = [len(ecommerce.search(RICH, top_k=k).chunks) for k in (2, 5, 2, 4)]
    assert lengths == [2, 5, 2, 4]
    strict = ecommerce.search(RICH, top_k=20, relevance_threshold=0.6)
    loose = ecommerce.search(RICH, top_k=20, relevance_threshold=0.3)
    strict_again = ecommerce.search(RICH, top_k=20, relevance_threshold=0.6)
    assert len(loose.chunks) > len(strict.chunks)
    assert [c.chunk.chunk_id for c in strict_again.chunks] == [c.chunk.chunk_id for c in strict.chunks]
    # a smaller k is a prefix of a larger k (same ranking, just cut)
    assert [c.chunk.chunk_id for c in ecommerce.search(RICH, top_k=2).chunks] == [
        c.chunk.chunk_id for c in loose.chunks[:2]
    ]


def test_top_k_larger_than_index_returns_all_relevant(ecommerce: Retriever) -> None:
    n = ecommerce.artifact.n_chunks
    res = ecommerce.search(RICH, top_k=n + 100, relevance_threshold=0.0)
    assert len(res.chunks) == n
    assert len({c.chunk.chunk_id for c in res.chunks}) == n


def test_repeated_search_is_deterministic(ecommerce: Retriever) -> None:
    a = ecommerce.search(RICH, top_k=10).to_dict()
    b = ecommerce.search(RICH, top_k=10).to_dict()
    assert a == b


@pytest.mark.parametrize("budget", [1, 2, 3, 5, 8])
def test_rank_tables_respects_budget(b2b: Retriever, budget: int) -> None:
    ranking = b2b.rank_tables("monthly recurring revenue by plan for each account", budget)
    assert 1 <= len(ranking.tables) <= budget
    assert len(set(ranking.tables)) == len(ranking.tables)
    assert set(ranking.tables) <= {t.name for t in b2b.schema.tables}
    assert set(ranking.scores) == set(ranking.tables)
    assert all(0.0 <= s <= 1.0 for s in ranking.scores.values())


def test_rank_tables_best_table_first_and_budget_on_small_db(ecommerce: Retriever) -> None:
    ranking = ecommerce.rank_tables("Which products are low on stock?", 1)
    assert ranking.tables == ["products"]
    assert ranking.ranked[0] == "products"
    both = ecommerce.rank_tables("Which users have placed the most orders?", 2)
    assert set(both.tables) == {"users", "orders"}
    assert len(ecommerce.rank_tables("Which users have placed the most orders?", 10).tables) <= 3
