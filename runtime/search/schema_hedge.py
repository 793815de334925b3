"""Schema hedging inside one database: a large dataset does not take every place.

A warehouse database often holds several schemas (BigQuery datasets, Snowflake schemas) of
very different sizes: ``sdoh`` beside a few hundred ``census_bureau_acs`` tables, OMOP tables
beside a code list. Ranked by score alone, the large schema's many near-matches fill the budget
and the small schema's one table the question also needs falls past it. Union routing
(``ranking.routing.route``) already hedges between *databases*; here the same rule
(:class:`~schemarag.runtime.ranking.config.RouteHedge`) applies between the schemas of a
single-source index, but softly: the first ``lead`` places stay in score order (whatever their
schema), then each runner-up schema scoring at least ``ratio`` times the best schema brings its
best ``share`` tables, then the rest in score order. A schema's score is its best table plus
half its second, as in routing (:mod:`.group_scores`).

Schemas are read from the qualified table names (``dataset.table``) once per opened version.
A dbt project's schemas are its layers (staging, marts) holding the same facts: the layer prior
(:mod:`.layer_prior`) orders those, and hedging between them would bring staging views back
above the marts, so an index whose tables carry a ``layer`` counts as one schema.

Example:
    >>> import numpy as np
    >>> ids = np.array([0, 0, 0, 0, 1]); scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    >>> from types import SimpleNamespace as Hedge
    >>> hedge = Hedge(ratio=0.3, lead=1, share=1, runners=1)
    >>> hedge_order(np.arange(5), scores, ids, 2, hedge, second_weight=0.5).tolist()
    [0, 4, 1, 2, 3]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schemarag.runtime.search.group_scores import group_scores
from schemarag.runtime.search.layer_prior import has_layers
from schemarag.runtime.search.per_artifact import per_artifact


@per_artifact
def table_schemas(art: Any) -> tuple[np.ndarray, list[str]]:
    """``(schema id per table, schema names)``: the qualifier before a table name's last dot
    (``""`` for an unqualified name); one schema for a dbt index (tables with a ``layer``)."""
    if has_layers(art):
        return np.zeros(len(art.table_names), dtype=np.int64), [""]
    names: list[str] = []
    index: dict[str, int] = {}
    ids = np.empty(len(art.table_names), dtype=np.int64)
    for i, t in enumerate(art.table_names):
        schema = t.rpartition(".")[0]
        ids[i] = index.setdefault(schema, len(index))
        if ids[i] == len(names):
            names.append(schema)
    return ids, names


def _ranked_schemas(
    ordered: np.ndarray, ordered_scores: np.ndarray, n_schemas: int, second_weight: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(score per schema, schemas best first)`` from the tables' schemas and scores in rank
    order; ties go to the lower schema id. The prior and the hedge read the leading schema here,
    so they never disagree on which it is."""
    score = group_scores(ordered, ordered_scores, n_schemas, second_weight)
    return score, np.lexsort((np.arange(n_schemas), -score))


def schema_prior_order(
    by_score: np.ndarray,
    scores: np.ndarray,
    schema_ids: np.ndarray,
    n_schemas: int,
    prior: float,
    keep: np.ndarray | None,
    second_weight: float,
) -> np.ndarray:
    """``by_score`` re-ordered with the scores of tables outside the leading schema (the best
    :func:`~.group_scores.group_scores`) times ``prior``: a question is usually answered inside
    one dataset, so the leading dataset's lookup table (``noaa_gsod.stations`` beside
    ``gsod*``) comes before another dataset's near-matches, as union routing puts the routed
    database first. ``keep`` (bool per table): tables that keep their score wherever they are
    (the question names them: :mod:`.named_tables`). ``prior`` 1 (or one schema): unchanged;
    ties keep their order."""
    if n_schemas <= 1 or prior >= 1.0 or len(by_score) <= 1:
        return by_score
    ordered = schema_ids[by_score]
    _, schema_order = _ranked_schemas(ordered, scores[by_score], n_schemas, second_weight)
    lead = int(schema_order[0])
    inside = ordered == lead if keep is None else (ordered == lead) | keep[by_score]
    adjusted = np.where(inside, scores[by_score], scores[by_score] * prior)
    return by_score[np.argsort(-adjusted, kind="stable")]


def hedge_order(
    by_score: np.ndarray,
    scores: np.ndarray,
    schema_ids: np.ndarray,
    n_schemas: int,
    hedge: Any,
    second_weight: float,
) -> np.ndarray:
    """``by_score`` (table indices, best first) with runner-up schemas' best tables moved up
    to right after the first ``hedge.lead`` (``hedge``: a ``RouteHedge``'s ratio, lead, share,
    runners): a few vectorised passes over the tables."""
    ratio, lead, share, runners = hedge.ratio, hedge.lead, hedge.share, hedge.runners
    if n_schemas <= 1 or runners <= 0 or len(by_score) <= lead:
        return by_score
    ordered = schema_ids[by_score]
    score, order = _ranked_schemas(ordered, scores[by_score], n_schemas, second_weight)
    top = float(score[order[0]])
    moved = np.zeros(len(by_score), dtype=bool)
    picks: list[np.ndarray] = []
    for s in order[1 : 1 + runners].tolist():
        if score[s] <= 0 or score[s] < ratio * top:
            break
        positions = np.flatnonzero(ordered == s)[:share]
        positions = positions[positions >= lead]  # already among the leading places
        moved[positions] = True
        picks.append(by_score[positions])
    if not picks:
        return by_score
    rest = by_score[lead:][~moved[lead:]]
    return np.concatenate([by_score[:lead], *picks, rest])
