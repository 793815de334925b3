"""Stages 15-16: the tables that fit the budget, with the tables that join them.

* :func:`budget`: tables are taken in queue order until the budget is full; after each, its
  foreign-key neighbours with comparable evidence are pulled forward, so join partners arrive
  with the table that needs them: declared neighbours first (score >= ``neighbour_ratio`` of
  the table's), then tables the query history reads with it (:func:`.history.co_used`), then
  neighbours over an inferred key (``inferred_ratio``; None: never), so an inferred edge never
  outranks a declared one. A neighbour whose own evidence is below ``neighbour_floor`` of the
  best table's is not pulled forward (it may still complete a join path). An adaptive budget
  stops early once the next table scores below its ``confidence`` times the best (never before
  ``min_tables``, and in a union only when routing is sure).
* :func:`join_paths`: a kept table not joined to the better-ranked kept tables brings the tables
  on its cheapest join path to them (at most ``join_path_hops`` edges, declared edges cheaper
  than inferred ones: :mod:`~schemarag.runtime.search.join_graph`), inserted right after it;
  bridges take the places of the lowest-ranked tables. In one database by default, not in a
  union (routing picks the database there) unless ``history_join_paths`` walks the logged
  joins; logged joins are edges when ``history_join_extra`` is set (:func:`.history.join_graph`).
"""

from __future__ import annotations

from collections.abc import Callable

from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import RankingConfig
from schemarag.runtime.ranking.history import co_used, join_graph
from schemarag.runtime.search.join_graph import DECLARED_COST, cheapest_path, join_edges


def budget(c: Candidates, config: RankingConfig) -> None:
    """``c.kept``: at most the request's budget, FK neighbours after the tables they join."""
    score_of = c.score_of()
    floor_of = _neighbour_floor(c, config)
    floor, least = _adaptive_floor(c, score_of)
    size = c.ask.budget
    kept: list[str] = []
    seen: set[str] = set()
    for t in c.queue:
        if len(kept) >= size or (len(kept) >= least and score_of[t] < floor):
            break
        if t in seen:
            continue
        kept.append(t)
        seen.add(t)
        if c.ask.fk_expand:
            for n in _neighbours(c, t, score_of, config):
                if len(kept) >= size:
                    break
                if n not in seen and floor_of(n):
                    kept.append(n)
                    seen.add(n)
    c.kept = kept


def _neighbour_floor(c: Candidates, config: RankingConfig) -> Callable[[str], bool]:
    """Whether a neighbour's own evidence (the calibrated score a result shows) is at least
    ``neighbour_floor`` of the best table's: a neighbour with next to none takes no place out of
    turn (it still comes in its own turn, or as a bridge of :func:`join_paths`)."""
    if config.neighbour_floor <= 0 or not c.calibrated.size:
        return lambda name: True
    least = config.neighbour_floor * float(c.calibrated.max())
    evidence, index = c.calibrated, c.art.table_index
    return lambda name: float(evidence[index[name]]) >= least


def _adaptive_floor(c: Candidates, score_of: dict[str, float]) -> tuple[float, int]:
    """``(floor, least)``: the score below which an adaptive budget stops taking tables (-1:
    never) and the tables it keeps in any case."""
    rule = c.ask.adaptive
    if rule is None:
        return -1.0, 1
    sure = rule.sure_margin is None or c.margin < rule.sure_margin
    floor = rule.confidence * score_of[c.ranked[0]] if c.ranked and sure else -1.0
    return floor, max(1, rule.min_tables)


def _neighbours(c: Candidates, table: str, score_of: dict[str, float], config: RankingConfig) -> list[str]:
    """``table``'s FK neighbours with comparable evidence: declared ones first, then inferred."""
    edges = join_edges(c.art, config.inferred_edge_base, config.inferred_edge_penalty).get(table, {})
    declared = [n for n, cost in edges.items() if cost <= DECLARED_COST]
    inferred = (
        [n for n, cost in edges.items() if cost > DECLARED_COST] if config.inferred_ratio is not None else []
    )
    out: list[str] = []
    for group, ratio in ((declared, config.neighbour_ratio), (inferred, config.inferred_ratio or 0.0)):
        for n in sorted(group, key=lambda n: (-score_of[n], n)):
            if score_of[n] >= ratio * score_of[table] and score_of[n] > 0:
                out.append(n)
        if group is declared:  # tables the history reads with it rank below declared keys
            out.extend(n for n in co_used(c, table, score_of, config) if n not in out)
    return out


def join_paths(c: Candidates, config: RankingConfig) -> None:
    """Join-path completion (``config.join_paths``; None: in a single-database index only)."""
    logged = config.history_join_paths and config.history_join_extra is not None and c.art.history.present
    if config.join_paths or (config.join_paths is None and c.single) or logged:
        c.kept = complete_join_paths(join_graph(c, config), c.kept, c.ask.budget, config.join_path_hops)


def complete_join_paths(
    graph: dict[str, dict[str, float]], kept: list[str], budget: int, hops: int
) -> list[str]:
    """``kept`` plus, after each table not yet joined to the ones before it, the tables on its
    cheapest join path to them in ``graph`` (:func:`~.join_graph.cheapest_path`, at most
    ``hops`` edges); tables past ``budget`` fall off the end (lowest ranked first).

    >>> graph = {"a": {"b": 1.0}, "b": {"a": 1.0, "c": 1.0}, "c": {"b": 1.0}}
    >>> complete_join_paths(graph, ["a", "c"], 3, 3)
    ['a', 'c', 'b']
    """
    if not kept:
        return kept
    out = [kept[0]]
    component = {kept[0]}
    for t in kept[1:]:
        if t in component:
            continue
        touching = bool(graph.get(t, {}).keys() & component)
        bridge = [] if touching else cheapest_path(graph, t, component, hops)
        out.append(t)
        component.add(t)
        for b in bridge:
            if b not in component:
                out.append(b)
                component.add(b)
    if len(out) > budget:  # bridges take the places of the lowest-ranked tables they displaced
        must = set(out[:budget])
        out = [t for t in out if t in must]
    return out
