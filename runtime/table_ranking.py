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
    """Per table: best chunk + SECOND_WEIGHT * mean of the next two, rescaled to [0, 1]."""
    n_tables = len(art.table_names)
    ct = art.chunk_table
    mask = ct >= 0
    idx, vals = ct[mask], rel[mask]
    order = np.lexsort((-vals, idx))  # by table, then descending score
    idx, vals = idx[order], vals[order]
    tables = np.arange(n_tables)
    starts = np.searchsorted(idx, tables, side="left")
    ends = np.searchsorted(idx, tables, side="right")
    padded = np.concatenate([vals, np.zeros(3, dtype=vals.dtype)])
    out = np.zeros(n_tables, dtype=np.float32)
    for k, weight in ((0, 1.0), (1, SECOND_WEIGHT / 2), (2, SECOND_WEIGHT / 2)):
        present = (starts + k) < ends
        out += np.where(present, padded[np.minimum(starts + k, len(vals))], 0.0).astype(np.float32) * weight
    return out / np.float32(1.0 + SECOND_WEIGHT)


def source_of(table: str) -> str:
    return table.split(UNION_SEPARATOR, 1)[0] if UNION_SEPARATOR in table else ""


def routed_order(art: IndexArtifact, scores: np.ndarray) -> np.ndarray:
    """Table indices best first; in a union, the best source database's tables lead."""
    names = art.table_names
    by_score = np.lexsort((np.arange(len(names)), -scores))
    src_ids, src_names = art.table_sources
    if len(src_names) <= 1:
        return by_score
    # best and second-best table score per source
    ordered_src = src_ids[by_score]
    best = np.full(len(src_names), -1.0)
    second = np.zeros(len(src_names))
    first_pos = np.full(len(src_names), -1)
    for pos, s in enumerate(ordered_src[: min(len(ordered_src), 4 * len(src_names) + 64)].tolist()):
        if best[s] < 0:
            best[s] = scores[by_score[pos]]
            first_pos[s] = pos
        elif second[s] == 0:
            second[s] = scores[by_score[pos]]
    best = np.maximum(best, 0.0)
    src_score = best + ROUTE_SECOND_WEIGHT * second
    top_src = int(np.lexsort((-np.arange(len(src_names)), -src_score))[0])
    lead = by_score[ordered_src == top_src]
    rest = by_score[ordered_src != top_src]
    return np.concatenate([lead, rest])


def rank_tables_from_scores(
    art: IndexArtifact,
    rel: np.ndarray,
    budget: int,
    fk_expand: bool = True,
    question_tokens: list[str] | None = None,
) -> TableRanking:
    names = art.table_names
    scores = table_scores(art, rel)
    order = routed_order(art, scores)
    ranked = [names[i] for i in order.tolist()]
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
