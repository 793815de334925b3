"""The join graph of an index: declared and inferred edges with a cost, and cheapest join paths.

Edges come from the schema the index was built from: a declared foreign key costs
``DECLARED_COST``; an inferred one (``ForeignKey.inferred``, from the build's join inference,
docs/ranking.md) costs more, the more so the less sure it is, so a path over declared keys is
always preferred to an equally long one over guesses, and an inferred edge never outranks a
declared one. The graph is built once per opened index version (a weak-keyed cache), never per
request.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "s", "tables": [
    ...     {"name": "a", "columns": [{"name": "id", "primary_key": True}]},
    ...     {"name": "ab", "columns": [{"name": "a_id", "foreign_key": {"table": "a", "column": "id"}},
    ...         {"name": "b_id", "foreign_key": {"table": "b", "column": "id", "inferred": True,
    ...          "confidence": 0.8}}]},
    ...     {"name": "b", "columns": [{"name": "id", "primary_key": True}]}]})
    >>> g = edges_of(db)
    >>> g["ab"]["a"], g["ab"]["b"]
    (1.0, 1.4)
    >>> cheapest_path(g, "a", {"b"}, max_hops=3)
    ['ab']
"""

from __future__ import annotations

import heapq
from typing import Any

from schemarag.runtime.core.schema import Database
from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.search.per_artifact import per_artifact

DECLARED_COST = 1.0  # the unit every other edge cost is measured in
# An inferred edge costs 1 + penalty * (1 - confidence) + base: at least ``base`` more than a
# declared one (RankingConfig.inferred_edge_base / inferred_edge_penalty).


def edge_cost(
    inferred: bool,
    confidence: float | None,
    base: float = SHIPPED.inferred_edge_base,
    penalty: float = SHIPPED.inferred_edge_penalty,
) -> float:
    """Cost of one join edge (see the module docstring)."""
    if not inferred:
        return DECLARED_COST
    conf = 0.5 if confidence is None else confidence
    return round(DECLARED_COST + base + penalty * (1.0 - conf), 6)


def edges_of(
    db: Database, base: float = SHIPPED.inferred_edge_base, penalty: float = SHIPPED.inferred_edge_penalty
) -> dict[str, dict[str, float]]:
    """``{table: {neighbour: cost}}`` in both directions; the cheapest edge wins per pair."""
    out: dict[str, dict[str, float]] = {t.name: {} for t in db.tables}
    for table in db.tables:
        for col in table.columns:
            fk = col.foreign_key
            if fk is None:
                continue
            target = db.table(fk.table)
            if target is None or target.name == table.name:
                continue
            cost = edge_cost(fk.inferred, fk.confidence, base, penalty)
            for a, b in ((table.name, target.name), (target.name, table.name)):
                if cost < out[a].get(b, float("inf")):
                    out[a][b] = cost
    return out


@per_artifact
def join_edges(
    art: Any, base: float = SHIPPED.inferred_edge_base, penalty: float = SHIPPED.inferred_edge_penalty
) -> dict[str, dict[str, float]]:
    """:func:`edges_of` the artifact's schema, computed once per opened artifact and costs."""
    return edges_of(art.schema, base, penalty)


def cheapest_path(
    graph: dict[str, dict[str, float]], start: str, component: set[str], max_hops: int
) -> list[str]:
    """Intermediate tables of the cheapest path (Dijkstra, at most ``max_hops`` edges) from
    ``start`` to any table of ``component``; ``[]`` when none is reachable or they touch."""
    best: dict[tuple[str, int], float] = {(start, 0): 0.0}
    heap: list[tuple[float, int, str, tuple[str, ...]]] = [(0.0, 0, start, ())]
    while heap:
        cost, hops, node, path = heapq.heappop(heap)
        if node in component and node != start:
            return list(path[:-1])
        if hops >= max_hops:
            continue
        for n, w in sorted(graph.get(node, {}).items()):
            if n == start or n in path:
                continue
            c = cost + w
            if c < best.get((n, hops + 1), float("inf")):
                best[(n, hops + 1)] = c
                heapq.heappush(heap, (c, hops + 1, n, (*path, n)))
    return []
