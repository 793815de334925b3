"""From chunk relevance to a budgeted table list: aggregation, routing, FK expansion.

* **Table evidence**: a table's score is its best chunk plus a little of its next two
  (several chunks agreeing beat one lucky match), so ``orders`` outranks a table that merely
  mentions orders once.
* **Routing**: in a union index (tables named ``<db>__<table>``), source databases are ranked
  by their best tables, and the winning database's tables come first: a question is about
  one database, and a focused schema mixing two is rarely answerable.
* **FK expansion** under the budget: after each table, its FK neighbours with comparable
  evidence are pulled forward, so join partners arrive with the table that needs them.
"""

from __future__ import annotations

import numpy as np

from runtime.artifact_reader import IndexArtifact
from runtime.results import TableRanking

UNION_SEPARATOR = "__"
SECOND_WEIGHT = 0.3
NEIGHBOUR_RATIO = 0.5
ROUTE_SECOND_WEIGHT = 0.5


def table_scores(art: IndexArtifact, rel: np.ndarray) -> np.ndarray:
    """Per table: best chunk + SECOND_WEIGHT * mean of the next two."""
    n_tables = len(art.table_names)
    ct = np.asarray(art.chunk_table)
    mask = ct >= 0
    idx, vals = ct[mask], rel[mask]
    order = np.lexsort((-vals, idx))  # by table, then descending score
    idx, vals = idx[order], vals[order]
    starts = np.searchsorted(idx, np.arange(n_tables), side="left")
    ends = np.searchsorted(idx, np.arange(n_tables), side="right")
    out = np.zeros(n_tables, dtype=np.float32)
    for t in range(n_tables):
        s, e = starts[t], ends[t]
        if e > s:
            top = vals[s : min(e, s + 3)]
            out[t] = top[0] + SECOND_WEIGHT * (top[1:].sum() / 2.0)
    return out / np.float32(1.0 + SECOND_WEIGHT)


def source_of(table: str) -> str:
    return table.split(UNION_SEPARATOR, 1)[0] if UNION_SEPARATOR in table else ""


def routed_order(names: list[str], scores: np.ndarray) -> list[int]:
    """Table indices best first; in a union, the best source database's tables lead."""
    by_score = sorted(range(len(names)), key=lambda i: (-float(scores[i]), names[i]))
    sources = {source_of(n) for n in names}
    if len(sources) <= 1:
        return by_score
    best: dict[str, list[float]] = {}
    for i in by_score:
        best.setdefault(source_of(names[i]), []).append(float(scores[i]))
    src_score = {s: v[0] + ROUTE_SECOND_WEIGHT * (v[1] if len(v) > 1 else 0.0) for s, v in best.items()}
    top_src = max(src_score, key=lambda s: (src_score[s], s))
    lead = [i for i in by_score if source_of(names[i]) == top_src]
    return lead + [i for i in by_score if source_of(names[i]) != top_src]


def rank_tables_from_scores(
    art: IndexArtifact,
    rel: np.ndarray,
    budget: int,
    fk_expand: bool = True,
    question_tokens: list[str] | None = None,
) -> TableRanking:
    names = art.table_names
    scores = table_scores(art, rel)
    order = routed_order(names, scores)
    ranked = [names[i] for i in order]
    score_of = {names[i]: float(scores[i]) for i in range(len(names))}
    kept: list[str] = []
    for t in ranked:
        if len(kept) >= budget:
            break
        if t in kept:
            continue
        kept.append(t)
        if not fk_expand:
            continue
        neigh = sorted(art.schema.neighbours(t), key=lambda n: (-score_of[n], n))
        for n in neigh:
            if len(kept) >= budget:
                break
            if n not in kept and score_of[n] >= NEIGHBOUR_RATIO * score_of[t] and score_of[n] > 0:
                kept.append(n)
    return TableRanking(tables=kept, columns={}, scores={t: score_of[t] for t in kept}, ranked=ranked)
