"""Acronyms a question spells out: "Genomic Data Commons" -> ``gdc``.

Warehouses name datasets and tables by acronym (``CLINICAL_GDC_R39``, ``census_bureau_acs``,
``fec``, ``bls``) while questions write the proper name in full, capitalised ("clinical data from
the Genomic Data Commons", "American Community Survey"). Capitalisation marks the proper name, so
only runs of capitalised words count: a run is two or more words starting with a capital letter
(``of``, ``and``, ``for``, ``the`` may sit inside and give no letter: "Bureau of Labor
Statistics" -> ``bls``); every contiguous piece of two to six capitalised words gives the
lower-cased initials, three letters or more. General English, nothing learned from a benchmark;
a candidate matters only where the index holds it (a vocabulary lookup each).

Example:
    >>> question_acronyms("Use clinical data from the Genomic Data Commons Release 39")
    ['gdc', 'gdcr', 'dcr']
    >>> question_acronyms("Bureau of Labor Statistics data")
    ['bls']
    >>> question_acronyms("how many orders in Ohio")
    []
"""

from __future__ import annotations

import re

from schemarag.runtime.core.text_tokens import tokenize

_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*|[^\sA-Za-z]+")
_INSIDE = frozenset({"of", "and", "for", "the", "&"})
MIN_LETTERS = 3
MAX_WORDS = 6


def _capitalised(word: str) -> bool:
    """A proper-name word: a capital, then at least one lower-case letter (``TCGA`` and ``I`` are
    acronyms or pronouns already, not words to abbreviate)."""
    return word[0].isupper() and any(c.islower() for c in word[1:])


def question_acronyms(question: str) -> list[str]:
    """Initials of each piece (2..MAX_WORDS words) of each run of capitalised words, at least
    MIN_LETTERS long, in order of appearance, without repeats. Linear in the question's words
    (pieces per run are capped by MAX_WORDS)."""
    runs: list[list[str]] = []
    run: list[str] = []
    for word in _WORD.findall(question):
        if word[0].isalpha() and _capitalised(word):
            run.append(word[0].lower())
        elif not (run and word.lower() in _INSIDE):  # a small word inside a run gives no letter
            if len(run) >= 2:
                runs.append(run)
            run = []
    if len(run) >= 2:
        runs.append(run)
    out: dict[str, None] = {}
    for letters in runs:
        for start in range(len(letters)):
            for end in range(start + MIN_LETTERS, min(len(letters), start + MAX_WORDS) + 1):
                out.setdefault("".join(letters[start:end]), None)
    return list(out)


def acronym_tokens(question: str) -> list[str]:
    """:func:`question_acronyms` stemmed as the index stems (``acs`` -> ``ac``), in order: what
    chunk scoring (``Calibration.acronym_weight``) and table naming look up.

    >>> acronym_tokens("the American Community Survey")
    ['ac']
    """
    return [tok for acronym in question_acronyms(question) for tok in tokenize(acronym)]
