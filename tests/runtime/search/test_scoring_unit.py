"""Scoring on hand-made inputs: the calibrated blend, mention boost and lexical coverage."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_support import SHOP, in_memory_artifact

from schemarag.runtime.search.chunk_scores import question_windows, score_window
from schemarag.runtime.search.query_terms import bm25_raw, lexical_coverage, query_terms
from schemarag.runtime.search.scoring import (
    DEFAULT_CALIBRATION,
    Calibration,
    boost_mentions,
    dense_normalised,
    fuse,
)

CAL = Calibration(cos_floor=0.2, cos_full=0.7, w_dense=0.6, lexical_alone=0.65, mention_floor=0.7)


@pytest.mark.parametrize(("cos", "expected"), [(-0.5, 0.0), (0.2, 0.0), (0.45, 0.5), (0.7, 1.0), (0.95, 1.0)])
def test_dense_normalised_maps_floor_to_0_and_full_to_1(cos: float, expected: float) -> None:
    assert dense_normalised(np.array([cos], dtype=np.float32), CAL)[0] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("dense", "lexical", "expected"),
    [
        (1.0, 0.0, 0.6),  # dense alone: its weight
        (0.0, 1.0, 0.65),  # lexical alone stands on its own at LEXICAL_ALONE
        (0.5, 0.5, 0.5),  # blended 0.5 beats lexical-led 0.5 * (0.65 + 0.35 * 0.5) = 0.4125
        (1.0, 1.0, 1.0),
        (0.0, 0.0, 0.0),
    ],
)
def test_fuse(dense: float, lexical: float, expected: float) -> None:
    out = fuse(np.array([dense], dtype=np.float32), np.array([lexical], dtype=np.float32), CAL)
    assert out[0] == pytest.approx(expected)


def test_boost_mentions_lifts_named_columns_to_the_floor_in_place() -> None:
    rel = np.array([0.1, 0.5, 0.9], dtype=np.float32)
    boost_mentions(rel, np.array([0, 1]), CAL)
    assert rel.tolist() == pytest.approx([0.73, 0.85, 0.9])
    boost_mentions(rel, np.array([], dtype=np.int64), CAL)  # nothing named: unchanged
    assert rel.tolist() == pytest.approx([0.73, 0.85, 0.9])


def _art():
    # chunk 0: customers table, 1: orders table, 2: orders.total_amount column
    return in_memory_artifact(
        SHOP,
        [("customers", "table", None), ("orders", "table", None), ("orders", "column", "total_amount")],
        vocab=["order", "total"],
        postings={"order": {1: 1.5, 2: 0.5}, "total": {2: 2.0}},
        idf=[1.0, 2.0],
    )


def test_lexical_coverage_is_the_idf_weighted_share_of_question_words() -> None:
    art = _art()
    qt = query_terms(art, "order total", DEFAULT_CALIBRATION)
    assert qt.tokens == ["order", "total"] and qt.denominator == pytest.approx(3.0)
    # chunk 1: min(1.5, idf 1) = 1 of 3; chunk 2: min(0.5, 1) + min(2, 2) = 2.5 of 3
    assert lexical_coverage(art, qt).tolist() == pytest.approx([0.0, 1 / 3, 2.5 / 3])


def test_unknown_question_words_count_at_the_largest_idf() -> None:
    art = _art()
    qt = query_terms(art, "order zebra", Calibration(oov_weight=1.0))
    assert qt.denominator == pytest.approx(1.0 + 2.0)  # 'zebra' is unknown: max idf
    assert lexical_coverage(art, qt).tolist() == pytest.approx([0.0, 1 / 3, 0.5 / 3])


def test_bm25_raw_sums_weights_scaled_by_k1_plus_1() -> None:
    from schemarag.runtime.core.bm25 import K1

    art = _art()
    raw = bm25_raw(art, query_terms(art, "order total", DEFAULT_CALIBRATION))
    assert raw.tolist() == pytest.approx([0.0, 1.5 / (K1 + 1), 2.5 / (K1 + 1)])


def test_score_window_bm25_method_rescales_by_the_best_hit() -> None:
    art = _art()
    rel, lex, cos = score_window(art, "order total", None, "bm25", DEFAULT_CALIBRATION)
    assert cos.tolist() == [0.0, 0.0, 0.0]
    assert rel.tolist() == pytest.approx([0.0, 1.5 / 2.5, 1.0])  # max lexical 0.83: no damping
    assert lex.tolist() == pytest.approx([0.0, 1 / 3, 2.5 / 3])


def test_question_windows_split_long_questions_only() -> None:
    assert question_windows("orders last month") == ("orders last month",)
    long = "Some context about the business here. " * 20 + "Which customers are gold tier?"
    windows = question_windows(long)
    assert len(windows) > 1 and windows[-1].endswith("gold tier?")
    assert all(len(w.split()) <= 40 for w in windows)
