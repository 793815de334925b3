"""The query history's stages (issue 38; docs/query-history.md "In the ranking").

A warehouse's own SQL says which tables analysts read and which they read together. Four
signals, each off without a history (every array is empty, so every figure stays what it is):

* :func:`popularity` (after the name boost, before routing): a weak prior, scores times
  ``1 + history_popularity x usage`` (:func:`~schemarag.runtime.search.history_signals.table_usage`,
  in [0, 1]): between two tables with like evidence, the one analysts use comes first, and a
  table nobody ever queried does not beat it on one lucky word.
* :func:`co_usage_prior` (before routing): each table gains ``history_co_weight`` times the
  best ``score(a) x P(table | a)`` over the question's ``history_co_top`` best tables ``a``: the
  lookup a question's best match is read with (its publisher, its district) moves up by how
  often analysts read them together, before the budget is taken.
* :func:`co_used` (read by the budget stage): after a kept table, the tables that at least
  ``history_co_share`` of its statements also read follow it (co-usage completion), if their own
  evidence is at least ``history_co_ratio`` of its: the header of a ledger detail, the bridge
  a question never names.
* :func:`join_graph` (read by the budget's join-path stage): logged equi-joins join the graph
  at ``DECLARED_COST + history_join_extra``, above an inferred key and below a declared one, so
  key-less tables get the join paths their users take.
"""

from __future__ import annotations

import numpy as np

from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import RankingConfig
from schemarag.runtime.search.history_signals import co_usage, history_join_graph, table_usage
from schemarag.runtime.search.join_graph import join_edges


def popularity(c: Candidates, config: RankingConfig) -> None:
    """Scores times ``1 + history_popularity x usage`` (a version without a history: unchanged)."""
    if config.history_popularity <= 0 or not c.art.history.present:
        return
    usage = table_usage(c.art)
    c.scores = c.scores * (np.float32(1.0) + np.float32(config.history_popularity) * usage)


def co_usage_prior(c: Candidates, config: RankingConfig) -> None:
    """Each table's score gains ``history_co_weight x max(score(a) x P(table | a))`` over the
    ``history_co_top`` best tables ``a``: the tables analysts read with the question's best
    matches move up before the budget is taken, in the measure they are read with them."""
    if config.history_co_weight <= 0 or not c.art.history.present or not c.scores.size:
        return
    co, index = co_usage(c.art), c.art.table_index
    top = np.argsort(-c.scores, kind="stable")[: config.history_co_top]
    lift = np.zeros_like(c.scores)
    for a in top.tolist():
        base = float(c.scores[a])
        for name, share in co.get(c.art.table_names[a], []):
            b = index[name]
            lift[b] = max(lift[b], base * share)
    c.scores = c.scores + np.float32(config.history_co_weight) * lift


def co_used(c: Candidates, table: str, score_of: dict[str, float], config: RankingConfig) -> list[str]:
    """Tables the history reads together with ``table`` that follow it into the budget, best first.

    A partner qualifies when at least ``history_co_share`` of ``table``'s statements read it and
    its own evidence is at least ``history_co_ratio`` of ``table``'s (and above zero)."""
    share = config.history_co_share
    if share is None or not c.art.history.present:
        return []
    floor = config.history_co_ratio * score_of[table]
    partners = co_usage(c.art).get(table, [])
    return [
        n for n, p in partners if p >= share and score_of.get(n, 0.0) >= floor and score_of.get(n, 0.0) > 0
    ]


def join_graph(c: Candidates, config: RankingConfig) -> dict[str, dict[str, float]]:
    """The graph join-path completion walks: the schema's keys, plus the logged joins when the
    version has a history and ``history_join_extra`` is set."""
    base, penalty = config.inferred_edge_base, config.inferred_edge_penalty
    if config.history_join_extra is None or not c.art.history.present:
        return join_edges(c.art, base, penalty)
    return history_join_graph(c.art, base, penalty, config.history_join_extra)
