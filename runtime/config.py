"""Retrieval and strategy settings: per-call values win, then the environment, then defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass

from schemarag.runtime.errors import ConfigError

DEFAULT_TOP_K = 5
DEFAULT_THRESHOLD = 0.3


def _env_number(name: str, default: float, kind: type) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"environment variable {name}={raw!r} is not a valid {kind.__name__}") from None


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int
    relevance_threshold: float

    @classmethod
    def resolve(cls, top_k: int | None = None, relevance_threshold: float | None = None) -> RetrievalSettings:
        """``top_k``: argument, ``$DOC_RETRIEVAL_TOP_K``, 5.

        Threshold: argument, ``$DOC_RELEVANCE_THRESHOLD``, 0.3."""
        k = int(top_k if top_k is not None else _env_number("DOC_RETRIEVAL_TOP_K", DEFAULT_TOP_K, int))
        thr = float(
            relevance_threshold
            if relevance_threshold is not None
            else _env_number("DOC_RELEVANCE_THRESHOLD", DEFAULT_THRESHOLD, float)
        )
        if k < 1:
            raise ConfigError(f"top_k must be >= 1, got {k}")
        if not 0.0 <= thr <= 1.0:
            raise ConfigError(f"relevance threshold must be within [0, 1], got {thr}")
        return cls(top_k=k, relevance_threshold=thr)
