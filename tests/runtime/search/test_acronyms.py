"""Acronyms a question spells out in capitalised words ("Genomic Data Commons" -> gdc)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tiny_support import SHOP, in_memory_artifact

from schemarag.runtime.search.acronyms import question_acronyms
from schemarag.runtime.search.query_terms import lexical_coverage, query_terms
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION


def test_runs_of_capitalised_words_give_their_initials() -> None:
    assert question_acronyms("clinical data of the Genomic Data Commons") == ["gdc"]
    # small words inside a run give no letter; every piece of 3+ words counts
    assert question_acronyms("the Bureau of Labor Statistics") == ["bls"]
    assert question_acronyms("American Community Survey and Federal Election Commission (FEC)") == [
        "acs", "acsf", "acsfe", "acsfec", "csf", "csfe", "csfec", "sfe", "sfec", "fec",
    ]  # fmt: skip


def test_lower_case_words_acronyms_and_two_letter_pieces_give_nothing() -> None:
    assert question_acronyms("genomic data commons release") == []
    assert question_acronyms("TCGA BRCA cases") == []  # already acronyms
    assert question_acronyms("New York") == []  # two letters: too short to trust
    assert question_acronyms("") == []


def _art():
    # chunk 0: CLINICAL_GDC_R39 (keyed by gdc), chunk 1: an unrelated genomic data table
    return in_memory_artifact(
        SHOP,
        [("customers", "table", None), ("orders", "table", None)],
        vocab=["clinic", "gdc", "genom", "data", "common"],
        postings={"clinic": {0: 1.0}, "gdc": {0: 2.0}, "genom": {1: 1.0}, "data": {1: 1.0}},
        idf=[1.0, 2.0, 1.0, 1.0, 1.0],
    )


def test_an_acronym_adds_its_postings_and_owes_no_coverage() -> None:
    art = _art()
    question = "clinical data from the Genomic Data Commons"
    off = query_terms(art, question, DEFAULT_CALIBRATION)  # off by default
    on = query_terms(art, question, replace(DEFAULT_CALIBRATION, acronym_weight=1.0))
    assert on.denominator == pytest.approx(off.denominator)
    before, after = lexical_coverage(art, off).tolist(), lexical_coverage(art, on).tolist()
    assert after[0] > before[0] and after[1] == pytest.approx(before[1])
