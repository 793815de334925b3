"""Relevance in [0, 1]: a calibrated blend of dense similarity and lexical coverage.

``relevance = max(W_DENSE * dense_n + (1 - W_DENSE) * lexical, LEXICAL_ALONE * lexical)``, where

* ``dense_n = clip((cos - COS_FLOOR) / (COS_FULL - COS_FLOOR), 0, 1)``: the cosine between the
  question and the chunk (all-MiniLM-L6-v2, L2-normalised), rescaled so that the cosine of
  unrelated text (COS_FLOOR, about the 95th percentile of off-topic pairs) maps to 0 and a
  clear paraphrase (COS_FULL) maps to 1;
* ``lexical = sum_i min(w_i(chunk), idf_i) / sum_i idf_i`` over the question's content tokens:
  the idf-weighted share of the question's words the chunk contains (BM25 term saturation,
  capped at one full match per word). Question words absent from the index count with the
  largest idf, so a question about things the docs never mention scores near 0. Typo matches
  count at TYPO_WEIGHT. Whole-identifier forms are optional: unmatched, they cost nothing.

``lexical_led = lexical * (LEXICAL_ALONE + (1 - LEXICAL_ALONE) * dense_n)`` lets strong lexical
evidence stand on its own, and a column the question names as an identifier (snake_case,
camelCase, backticked or ``table.column``) is lifted to at least ``MENTION_FLOOR``.

Both parts are absolute (no per-query min-max), so a score means the same on every question
and database and one threshold (0.3) works everywhere. README "Relevance score" shows the
calibration measurements.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Calibration:
    cos_floor: float = 0.15
    cos_full: float = 0.70
    w_dense: float = 0.6
    typo_weight_d1: float = 0.8
    typo_weight_d2: float = 0.5
    lexical_alone: float = 0.65  # lexical evidence alone counts at least this much
    mention_floor: float = 0.7  # a column named verbatim as an identifier
    oov_weight: float = 1.0  # multiple of the index's max idf given to unknown question words
    # weight of a question word's abbreviations in the index (``customer`` -> ``cust``;
    # runtime/search/abbreviations.py); 0 = off, the default: on BirdUnion (descriptions) 0.8
    # cost 0.0013 CR@15 and 0.005 CR@10 (docs/ranking.md), and Spider 2.0-lite names rarely
    # abbreviate
    abbreviation_weight: float = 0.0
    # weight of an index term two adjacent question words spell as one ("census tract" ->
    # ``censustract``; query_terms.compound_term_ids); 0 = off. On: Spider 2.0-lite nontrivial
    # CR@20 0.845 -> 0.861 (leave-one-database-out), BirdUnion with descriptions unchanged,
    # schema-only CR@15 0.9452 -> 0.9446 (one question; docs/ranking.md)
    compound_weight: float = 1.0
    # weight of an index term a run of capitalised question words abbreviates ("Genomic Data
    # Commons" -> ``gdc``; acronyms.py); adds postings without raising what the question must
    # cover; 0 = off
    acronym_weight: float = 0.0
    # a question word of this many letters may match an index term two edits away (typo.py);
    # a shorter one only one edit away
    typo_long_word: int = 8


DEFAULT_CALIBRATION = Calibration()


def dense_normalised(cos: np.ndarray, cal: Calibration = DEFAULT_CALIBRATION) -> np.ndarray:
    return np.clip((cos - cal.cos_floor) / (cal.cos_full - cal.cos_floor), 0.0, 1.0)


def fuse(dense_n: np.ndarray, lexical: np.ndarray, cal: Calibration = DEFAULT_CALIBRATION) -> np.ndarray:
    blended = cal.w_dense * dense_n + (1.0 - cal.w_dense) * lexical
    # A chunk holding most of the question's rare words is relevant even when the model sees
    # little similarity (a sampled value: "schools in Alameda" -> schools.city); dense
    # similarity still orders such chunks among themselves.
    lexical_led = lexical * (cal.lexical_alone + (1.0 - cal.lexical_alone) * dense_n)
    return np.clip(np.maximum(blended, lexical_led), 0.0, 1.0)


def boost_mentions(rel: np.ndarray, chunk_ids: np.ndarray, cal: Calibration = DEFAULT_CALIBRATION) -> None:
    """Column chunks of a column the question names as an identifier (``created_at``,
    ``createdAt``, `` `Free Meal Count` ``) score at least MENTION_FLOOR, in place."""
    if chunk_ids.size:
        rel[chunk_ids] = np.maximum(
            rel[chunk_ids], cal.mention_floor + (1.0 - cal.mention_floor) * rel[chunk_ids]
        )
