"""A group's routing score: its best table plus half its second.

Union routing ranks source databases this way (``ranking.routing.route``) and schema hedging ranks
the schemas of one database the same way (:mod:`.schema_hedge`): two tables agreeing beat one
lucky match. Vectorised over the tables in rank order (two sorts), no per-table Python loop.

Example:
    >>> import numpy as np
    >>> group_scores(np.array([1, 0, 1, 0, 0]), np.array([0.9, 0.8, 0.6, 0.4, 0.1]), 3, 0.5).tolist()
    [1.0, 1.2, 0.0]
"""

from __future__ import annotations

import numpy as np


def group_scores(groups: np.ndarray, scores: np.ndarray, n_groups: int, second_weight: float) -> np.ndarray:
    """Per group ``0 .. n_groups - 1``: best + ``second_weight`` x second-best score, from
    ``groups`` and ``scores`` of the tables in rank order (best first); 0 for a group absent.
    (``RankingConfig.route_second_weight`` says where its value comes from.)"""
    best = np.zeros(n_groups)
    second = np.zeros(n_groups)
    _, first = np.unique(groups, return_index=True)  # each group's first (best) position
    best[groups[first]] = np.maximum(scores[first], 0.0)
    rest = np.ones(len(groups), dtype=bool)
    rest[first] = False
    rest_groups, rest_scores = groups[rest], scores[rest]
    _, again = np.unique(rest_groups, return_index=True)  # each group's second position
    second[rest_groups[again]] = rest_scores[again]
    return best + second_weight * second
