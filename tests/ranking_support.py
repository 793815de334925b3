"""Calling the ranking pipeline from tests the short way: request fields and config fields as
keyword arguments (``rank_with(art, rel, 3, question=q, name_boost=0.0)``)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import numpy as np

from schemarag.runtime.ranking import evidence, routing
from schemarag.runtime.ranking.candidates import RankingRequest
from schemarag.runtime.ranking.config import SHIPPED, RankingConfig
from schemarag.runtime.ranking.pipeline import rank
from schemarag.runtime.search.results import TableRanking

REQUEST_FIELDS = {f.name for f in fields(RankingRequest)} - {"question", "budget"}


def rank_with(art: Any, rel: np.ndarray, budget: int, question: str | None = None, **kw: Any) -> TableRanking:
    """:func:`rank` with ``kw`` split into request fields (policy, adaptive, mentions, fk_expand,
    calibration, cap_to_default: False unless given, so a capped policy is measured on its own
    as the columns grid does) and :class:`RankingConfig` fields replaced in SHIPPED."""
    ask = {"cap_to_default": False, **{k: v for k, v in kw.items() if k in REQUEST_FIELDS}}
    if ask.get("mentions") is None:
        ask.pop("mentions", None)
    config = replace(SHIPPED, **{k: v for k, v in kw.items() if k not in REQUEST_FIELDS})
    return rank(art, rel, RankingRequest(question or "", budget, **ask), config)


def route_with(art: Any, scores: np.ndarray, coverage: np.ndarray | None = None, **kw: Any) -> tuple:
    """:func:`routing.route` under SHIPPED with ``kw`` (e.g. ``route_hedge=...``) replaced."""
    config: RankingConfig = replace(SHIPPED, **kw)
    return routing.route(art, scores, coverage, config)


def table_scores(art: Any, rel: np.ndarray) -> np.ndarray:
    """Table evidence with the shipped second-chunk weight."""
    return evidence.table_scores(art, rel, SHIPPED.second_weight)
