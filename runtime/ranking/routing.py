"""Stages 7-10: which database, then which schema, a question's tables come from.

* :func:`routing`: in a union index (tables whose ``Table.database`` names their source), source
  databases are ranked by their best tables times the square root of their *term coverage*
  (:func:`~.evidence.source_coverage`), and the winning database's tables come first: a
  question is about one database, and a focused schema mixing two is rarely answerable.
  **Hedging** (``RankingConfig.route_hedge``): close runner-up databases get a few places
  after the winner's best tables, so an uncertain routing does not spend a whole budget on
  one large wrong database.
* :func:`schema_order`: the same idea between the schemas of one database (BigQuery datasets,
  Snowflake schemas; :mod:`~schemarag.runtime.search.schema_hedge`): tables outside the
  leading schema rank at ``schema_prior`` of their score, then close runner-up schemas' best
  tables follow the first places.
* :func:`sibling_prior` (before :func:`schema_order`): in one database whose schemas hold copies
  of one another's tables (``CRYPTO_ETHEREUM`` / ``CRYPTO_ETHEREUM_CLASSIC``;
  :mod:`~schemarag.runtime.search.sibling_schemas`), the tables of a schema the question fits
  worse than its sibling score ``sibling_prior`` of their score, so the schema it names leads.
* :func:`year_prior` (after it, before routing): of the same-named tables of different years
  (``vehicle_2015`` / ``vehicle_2016``, ``accident_2015`` beside the family ``accident_*`` of
  2016 .. 2019; :mod:`~schemarag.runtime.search.dated_tables`), those covering none of the years
  the question names score ``year_prior`` of their score when another one covers one; any
  other table whose name or shard range gives years none of the question's scores
  ``year_prior_wide`` of its score when a table of the database covers one.
"""

from __future__ import annotations

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import RankingConfig
from schemarag.runtime.ranking.evidence import source_coverage
from schemarag.runtime.search.dated_tables import dated_groups, question_years, table_spans
from schemarag.runtime.search.dated_tables import year_prior as dated_scores
from schemarag.runtime.search.group_scores import group_scores
from schemarag.runtime.search.schema_hedge import hedge_order, schema_prior_order, table_schemas
from schemarag.runtime.search.sibling_schemas import sibling_groups
from schemarag.runtime.search.sibling_schemas import sibling_prior as fitted_scores


def routing(c: Candidates, config: RankingConfig) -> None:
    """``c.order`` (the routed table order) and ``c.margin`` (how unsure the routing is)."""
    cov = source_coverage(c.art, c.question, c.ask.calibration) if config.route_coverage > 0 else None
    c.order, c.margin = route(c.art, c.scores, cov, config)


def route(
    art: IndexArtifact, scores: np.ndarray, coverage: np.ndarray | None, config: RankingConfig
) -> tuple[np.ndarray, float]:
    """``(order, margin)``: table indices best first (in a union, the best source database's
    tables lead) and the runner-up database's routing score over the winner's (0 for a
    single-source index)."""
    names = art.table_names
    by_score = np.lexsort((np.arange(len(names)), -scores))
    src_ids, src_names = art.table_sources
    if len(src_names) <= 1:
        return by_score, 0.0
    ordered_src = src_ids[by_score]
    lead_n = min(len(ordered_src), config.route_lead_per_source * len(src_names) + config.route_lead_extra)
    src_score = group_scores(
        ordered_src[:lead_n], scores[by_score[:lead_n]], len(src_names), config.route_second_weight
    )
    if coverage is not None and config.route_coverage > 0:
        src_score = src_score * np.maximum(coverage, 1e-6) ** config.route_coverage
    src_order = np.lexsort((-np.arange(len(src_names)), -src_score))
    top_src = int(src_order[0])
    top_score = float(src_score[top_src])
    margin = float(src_score[int(src_order[1])]) / top_score if top_score > 0 else 1.0
    lead = by_score[ordered_src == top_src]
    taken = ordered_src == top_src
    hedge = config.route_hedge
    runners: list[np.ndarray] = []
    if hedge is not None and hedge.runners > 0:
        for s in src_order[1 : 1 + hedge.runners].tolist():
            if src_score[s] < hedge.ratio * src_score[top_src] or src_score[s] <= 0:
                break
            positions = np.flatnonzero(ordered_src == s)[: hedge.share]
            runners.append(by_score[positions])
            taken[positions] = True
    if runners:
        k = hedge.lead if hedge is not None else 0
        lead = np.concatenate([lead[:k], *runners, lead[k:]])
    return np.concatenate([lead, by_score[~taken]]), margin


def sibling_prior(c: Candidates, config: RankingConfig) -> None:
    """Tables of a worse-fitting sibling schema at ``sibling_prior`` of their score (1: off)."""
    if config.sibling_prior >= 1.0 or not c.single or not c.scores.size:
        return
    groups = sibling_groups(c.art, config.family_column_overlap)
    c.scores = fitted_scores(c.scores, groups, c.question, config.sibling_prior)


def year_prior(c: Candidates, config: RankingConfig) -> None:
    """Tables of a dated group covering none of the question's years, where another member covers
    one, at ``year_prior`` of their score (1: off): ``vehicle_2016`` for "accidents in 2015"; any
    other table of years none of the question's, where a table of the database covers one, at
    ``year_prior_wide`` (``icoads_core_2005_2017`` for "weather in 2019"; 1: off)."""
    if (config.year_prior >= 1.0 and config.year_prior_wide >= 1.0) or not c.scores.size:
        return
    years = question_years(c.question, config.year_span_max)
    if years:
        groups = dated_groups(c.art, config.family_column_overlap)
        spans = table_spans(c.art) if config.year_prior_wide < 1.0 else None
        c.scores = dated_scores(c.scores, groups, years, config.year_prior, spans, config.year_prior_wide)


def schema_order(c: Candidates, config: RankingConfig) -> None:
    """In one database of several schemas: the schema prior, then schema hedging."""
    if not c.single or (config.schema_hedge is None and config.schema_prior >= 1.0):
        return
    schema_ids, schemas = table_schemas(c.art)
    n, second = len(schemas), config.route_second_weight
    order = schema_prior_order(c.order, c.scores, schema_ids, n, config.schema_prior, c.keep_score, second)
    if config.schema_hedge is not None:
        order = hedge_order(order, c.scores, schema_ids, n, config.schema_hedge, second)
    c.order = order
