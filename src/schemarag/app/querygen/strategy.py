"""Full schema or retrieved (RAG) schema? The decision and the configuration behind it.

Small schemas fit in a prompt and lose nothing by being sent whole; large ones drown the model
and cost tokens, so their prompt is built from retrieved documentation (QG-RAG-01, QG-RAG-04).
Precedence: an explicit ``use_retrieval`` (CLI flag / API argument) wins; otherwise
``ENABLE_DOC_RETRIEVAL`` (default true) and ``table_count >= RETRIEVAL_TABLE_THRESHOLD``
(default 10) choose RAG.

Example:
    >>> cfg = StrategyConfig.from_env({"RETRIEVAL_TABLE_THRESHOLD": "15"})
    >>> choose_strategy(12, cfg).strategy
    'full'
    >>> choose_strategy(3, cfg, use_retrieval=True).strategy
    'rag'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from schemarag.runtime.core.config import DEFAULT_TABLE_THRESHOLD, runtime_settings

Strategy = Literal["full", "rag"]


@dataclass(frozen=True)
class StrategyConfig:
    """RAG settings; ``top_k`` / ``relevance_threshold`` of ``None`` mean the retriever's defaults."""

    enable_doc_retrieval: bool = True
    table_threshold: int = DEFAULT_TABLE_THRESHOLD
    top_k: int | None = None
    relevance_threshold: float | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> StrategyConfig:
        """Read ``ENABLE_DOC_RETRIEVAL``, ``RETRIEVAL_TABLE_THRESHOLD``, ``DOC_RETRIEVAL_TOP_K``
        and ``DOC_RELEVANCE_THRESHOLD``; unset or empty variables keep the defaults."""
        s = runtime_settings(env)
        return cls(
            enable_doc_retrieval=s.enable_doc_retrieval,
            table_threshold=s.retrieval_table_threshold,
            top_k=s.doc_retrieval_top_k,
            relevance_threshold=s.doc_relevance_threshold,
        )


@dataclass(frozen=True)
class StrategyDecision:
    """The chosen strategy and a one-line reason (logged and shown by ``--prompt-only``)."""

    strategy: Strategy
    reason: str


def choose_strategy(
    table_count: int, config: StrategyConfig, use_retrieval: bool | None = None
) -> StrategyDecision:
    """Apply the precedence rules in the module docstring."""
    if use_retrieval is not None:
        flag = "on" if use_retrieval else "off"
        return StrategyDecision("rag" if use_retrieval else "full", f"retrieval forced {flag} by the caller")
    if not config.enable_doc_retrieval:
        return StrategyDecision("full", "ENABLE_DOC_RETRIEVAL is false")
    if table_count >= config.table_threshold:
        return StrategyDecision(
            "rag", f"{table_count} tables >= RETRIEVAL_TABLE_THRESHOLD {config.table_threshold}"
        )
    return StrategyDecision(
        "full", f"{table_count} tables < RETRIEVAL_TABLE_THRESHOLD {config.table_threshold}"
    )
