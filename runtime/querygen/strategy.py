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

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from schemarag.runtime.errors import ConfigError

Strategy = Literal["full", "rag"]

DEFAULT_TABLE_THRESHOLD = 10
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


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
        env = os.environ if env is None else env
        return cls(
            enable_doc_retrieval=_bool(env, "ENABLE_DOC_RETRIEVAL", True),
            table_threshold=_int(env, "RETRIEVAL_TABLE_THRESHOLD", DEFAULT_TABLE_THRESHOLD, minimum=0),
            top_k=_int(env, "DOC_RETRIEVAL_TOP_K", None, minimum=1),
            relevance_threshold=_float01(env, "DOC_RELEVANCE_THRESHOLD"),
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


def _raw(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value.strip() if value is not None and value.strip() else None


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    value = _raw(env, name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ConfigError(f"{name}={value!r} is not a boolean; use true or false")


def _int(env: Mapping[str, str], name: str, default: int | None, minimum: int) -> int | None:
    value = _raw(env, name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not an integer; use a whole number >= {minimum}") from None
    if number < minimum:
        raise ConfigError(f"{name}={value!r} is too small; use a whole number >= {minimum}")
    return number


def _float01(env: Mapping[str, str], name: str) -> float | None:
    value = _raw(env, name)
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a number; use a value between 0 and 1") from None
    if not 0.0 <= number <= 1.0:
        raise ConfigError(f"{name}={value!r} is out of range; use a value between 0 and 1")
    return number
