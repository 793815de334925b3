"""QG-RAG-01 / QG-RAG-04: which strategy a database of a given size gets, and from what config."""

from __future__ import annotations

import pytest

from schemarag.app.querygen.strategy import StrategyConfig, choose_strategy
from schemarag.runtime.core.errors import ConfigError


def test_defaults_when_nothing_is_set() -> None:
    cfg = StrategyConfig.from_env({})
    assert cfg == StrategyConfig(
        enable_doc_retrieval=True, table_threshold=10, top_k=None, relevance_threshold=None
    )


def test_25_tables_with_rag_enabled_uses_rag(make_db) -> None:
    db = make_db(25)
    decision = choose_strategy(len(db.tables), StrategyConfig.from_env({"ENABLE_DOC_RETRIEVAL": "true"}))
    assert decision.strategy == "rag"
    assert "25 tables >= RETRIEVAL_TABLE_THRESHOLD 10" in decision.reason


def test_5_tables_use_full_schema(make_db) -> None:
    assert choose_strategy(len(make_db(5).tables), StrategyConfig.from_env({})).strategy == "full"


def test_threshold_is_inclusive() -> None:
    assert choose_strategy(10, StrategyConfig()).strategy == "rag"
    assert choose_strategy(9, StrategyConfig()).strategy == "full"


@pytest.mark.parametrize("value", ["false", "FALSE", "0", "no", "off"])
def test_disabled_retrieval_always_uses_full_schema(value: str) -> None:
    cfg = StrategyConfig.from_env({"ENABLE_DOC_RETRIEVAL": value})
    decision = choose_strategy(500, cfg)
    assert (decision.strategy, decision.reason) == ("full", "ENABLE_DOC_RETRIEVAL is false")


def test_threshold_15_with_12_tables_uses_full_schema(make_db) -> None:
    cfg = StrategyConfig.from_env({"RETRIEVAL_TABLE_THRESHOLD": "15"})
    assert cfg.table_threshold == 15
    assert choose_strategy(len(make_db(12).tables), cfg).strategy == "full"


def test_flag_forces_rag_on_3_tables(make_db) -> None:
    decision = choose_strategy(len(make_db(3).tables), StrategyConfig(), use_retrieval=True)
    assert decision.strategy == "rag"
    assert decision.reason == "retrieval forced on by the caller"


def test_flag_wins_over_disabled_config_both_ways() -> None:
    disabled = StrategyConfig(enable_doc_retrieval=False)
    assert choose_strategy(3, disabled, use_retrieval=True).strategy == "rag"
    assert choose_strategy(100, StrategyConfig(), use_retrieval=False).strategy == "full"


def test_top_k_and_relevance_threshold_from_env() -> None:
    cfg = StrategyConfig.from_env({"DOC_RETRIEVAL_TOP_K": "7", "DOC_RELEVANCE_THRESHOLD": "0.25"})
    assert (cfg.top_k, cfg.relevance_threshold) == (7, 0.25)


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"ENABLE_DOC_RETRIEVAL": "maybe"}, "ENABLE_DOC_RETRIEVAL='maybe' is not a boolean"),
        ({"RETRIEVAL_TABLE_THRESHOLD": "ten"}, "RETRIEVAL_TABLE_THRESHOLD='ten' is not an integer"),
        ({"RETRIEVAL_TABLE_THRESHOLD": "-1"}, "too small"),
        ({"DOC_RETRIEVAL_TOP_K": "0"}, "DOC_RETRIEVAL_TOP_K='0' is too small"),
        ({"DOC_RELEVANCE_THRESHOLD": "1.5"}, "out of range"),
    ],
)
def test_invalid_values_name_the_variable(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        StrategyConfig.from_env(env)
