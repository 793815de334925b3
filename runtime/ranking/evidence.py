"""Stages 1-3: from chunk relevance to a score per table.

* :func:`evidence`: a table's score is its best chunk plus a little of its next two (several
  chunks agreeing beat one lucky match), times its dbt layer's weight (marts before staging).
* :func:`coverage`: in one database, tables are ordered by that score times their coverage of
  the question's words (:func:`table_coverage`) to a small power, so a table holding several
  of the question's rarer words comes before one matching a single word strongly. Not in a
  union, which routes by its databases' coverage instead (:func:`source_coverage`).
* :func:`name_boost`: a table whose name's every word is in the question gets a constant added,
  so it is not lost among hundreds of tables sharing the question's other words.

The reported scores stay the calibrated evidence (``Candidates.calibrated``): coverage and the
boost only order.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import RankingConfig
from schemarag.runtime.search.layer_prior import apply_layer_prior, consumer_layer
from schemarag.runtime.search.named_tables import NameMatch, named_tables
from schemarag.runtime.search.query_terms import query_terms
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION, Calibration


def table_scores(art: IndexArtifact, rel: np.ndarray, second_weight: float) -> np.ndarray:
    """Per table: best chunk + ``second_weight`` x mean of the next two, rescaled to [0, 1]."""
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
    for k, weight in ((0, 1.0), (1, second_weight / 2), (2, second_weight / 2)):
        present = (starts + k) < ends
        out += np.where(present, padded[np.minimum(starts + k, len(vals))], 0.0).astype(np.float32) * weight
    return out / np.float32(1.0 + second_weight)


def evidence(c: Candidates, config: RankingConfig) -> None:
    """Table scores from chunk relevances, times the dbt layer prior; reported as they are."""
    c.scores = apply_layer_prior(c.art, table_scores(c.art, c.rel, config.second_weight), config.layer_prior)
    c.calibrated = c.scores


def coverage(c: Candidates, config: RankingConfig) -> None:
    """Scores times ``max(coverage, coverage_floor) ** coverage_power`` in one database."""
    if config.coverage_power <= 0 or not c.question or not c.single:
        return
    cov = table_coverage(c.art, c.question, c.ask.calibration)
    if cov is not None:
        factor = np.maximum(cov, config.coverage_floor) ** config.coverage_power
        c.scores = c.scores * factor.astype(np.float32)


def name_boost(c: Candidates, config: RankingConfig) -> None:
    """Finds the tables the question names (also for the structure stage) and adds the boost to
    those of the consumer layer (a dbt project repeats a name in every layer: only the mart is
    lifted, as the layer prior wants)."""
    wanted = config.name_boost > 0 or config.named_exempt or config.structure_slots is not None
    if not c.question or not wanted:
        return
    c.named = named_tables(c.art, c.question, NameMatch.of(config))
    if config.name_boost > 0:
        consumer = consumer_layer(c.art, config.layer_prior)
        c.scores = c.scores + np.float32(config.name_boost) * (c.named & consumer)
    if config.named_exempt:
        c.keep_score = c.named


def source_coverage(
    art: IndexArtifact, question: str, cal: Calibration = DEFAULT_CALIBRATION
) -> np.ndarray | None:
    """Per source database of a union: the share of the question's indexed words found in any
    of its chunks, each word weighted by its inverse *source* frequency (BM25's idf over
    databases instead of chunks). ``None`` for a single-source index or no indexed word.

    Reads the postings the build stored (no per-request scanning of docs): linear in the
    postings of the question's words. Compound words and acronyms count in the chunk scores
    but not here: a database that glues two of the question's words (``zipcode``) covers them
    no better than one that keeps them apart (on BirdUnion counting them moved two questions to
    the wrong database).
    """
    n_src = len(art.table_sources[1])
    if n_src <= 1 or not question:
        return None
    return _coverage(art, question, cal, art.chunk_sources, n_src)


def table_coverage(
    art: IndexArtifact, question: str, cal: Calibration = DEFAULT_CALIBRATION
) -> np.ndarray | None:
    """Per table: :func:`source_coverage` one level down (words weighted by inverse *table*
    frequency). ``None`` for an empty question or no indexed word."""
    if not question:
        return None
    return _coverage(art, question, cal, art.chunk_table, len(art.table_names))


def _coverage(
    art: IndexArtifact,
    question: str,
    cal: Calibration,
    chunk_group: np.ndarray,
    n_groups: int,
) -> np.ndarray | None:
    """Per group (a chunk's source database or table, ``chunk_group``; -1: none): the idf-over-
    groups weighted share of the question's indexed words found in any of its chunks (compound
    words and acronyms left out); ``None`` when no question word is indexed."""
    qt = query_terms(art, question, replace(cal, compound_weight=0.0, acronym_weight=0.0))
    group = np.asarray(chunk_group) + 1  # 0 = chunk in no group
    cov = np.zeros(n_groups, dtype=np.float64)
    total = 0.0
    for tid, weight in zip(qt.term_ids, qt.weights, strict=True):
        start, end = int(art.bm25_indptr[tid]), int(art.bm25_indptr[tid + 1])
        present = np.bincount(group[art.bm25_indices[start:end]], minlength=n_groups + 1)[1:] > 0
        n = int(present.sum())
        if n == 0:
            continue
        w = weight * math.log(1.0 + (n_groups - n + 0.5) / (n + 0.5))
        cov[present] += w
        total += w
    return cov / total if total > 0 else None
