"""Question -> BM25 terms: compound words a warehouse glues together ("census tract")."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tiny_support import SHOP, in_memory_artifact

from schemarag.runtime.search.query_terms import compound_term_ids, lexical_coverage, query_terms
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION


def _art():
    # chunk 0 says "census tract", 1 is keyed by CENSUSTRACT, 2 is a zipcode column
    return in_memory_artifact(
        SHOP,
        [("customers", "table", None), ("orders", "table", None), ("orders", "column", "total_amount")],
        vocab=["census", "tract", "censustract", "zipcod", "first", "name", "firstnam"],
        postings={
            "census": {0: 1.0},
            "tract": {0: 1.0},
            "censustract": {1: 2.0},
            "zipcod": {2: 2.0},
            # customers.FirstName: the split words and the whole form in the same chunk
            **{t: {0: 1.0} for t in ("first", "name", "firstnam")},
        },
        idf=[1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0],
    )


def test_adjacent_words_find_the_term_they_spell_as_one() -> None:
    art = _art()
    vocab = {t: i for i, t in enumerate(["census", "tract", "censustract", "zipcod"])}
    assert compound_term_ids(art, "Population per census tracts by zip code") == [
        vocab["censustract"],  # 'census tracts' -> censustracts -> stemmed like the index
        vocab["zipcod"],
    ]
    assert compound_term_ids(art, "census of the tract") == []  # not adjacent: a stopword between
    assert compound_term_ids(art, "5-year census") == []  # "yearcensus" is no index term
    # 'firstnam' is only the whole form of FirstName, whose words already match: not a compound
    assert compound_term_ids(art, "the first name of customers") == []


def test_compounds_add_postings_but_owe_no_coverage() -> None:
    art = _art()
    off = query_terms(art, "census tract", replace(DEFAULT_CALIBRATION, compound_weight=0.0))
    on = query_terms(art, "census tract", DEFAULT_CALIBRATION)  # on by default
    assert on.denominator == pytest.approx(off.denominator)  # what the question must cover is unchanged
    assert lexical_coverage(art, off).tolist()[1] == 0.0
    # the CENSUSTRACT chunk now matches: min(2, idf 2) * 1.0 of the 2.0 the question's words weigh
    assert lexical_coverage(art, on).tolist()[1] == pytest.approx(1.0)
    assert lexical_coverage(art, on).tolist()[0] == pytest.approx(1.0)  # the split form still matches
