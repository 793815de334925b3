"""Question -> weighted BM25 terms, exactly as the build tokenized, plus typo candidates."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.bm25 import K1
from schemarag.runtime.core.text_tokens import adjacent_word_pairs, tokenize
from schemarag.runtime.search.abbreviations import abbreviation_map
from schemarag.runtime.search.acronyms import acronym_tokens
from schemarag.runtime.search.scoring import Calibration
from schemarag.runtime.search.typo import lookup_candidates


@dataclass
class QueryTerms:
    term_ids: list[int]
    weights: list[float]  # multiplier per term (1.0 exact, < 1 typo match)
    denominator: float  # sum of idf over the question's content tokens (OOV at max idf)
    tokens: list[str]
    corrections: dict[str, str]


def query_terms(art: IndexArtifact, question: str, cal: Calibration) -> QueryTerms:
    optional: set[str] = set()
    tokens = list(dict.fromkeys(tokenize(question, optional)))
    idf = art.bm25_idf
    max_idf = float(idf.max()) if idf.size else 1.0
    ids: list[int] = []
    weights: list[float] = []
    denom = 0.0
    corrections: dict[str, str] = {}
    for tok in tokens:
        tid = art.vocab.get(tok)
        if tid is not None:
            ids.append(tid)
            weights.append(1.0)
            denom += float(idf[tid])
            continue
        max_d = 2 if len(tok) >= cal.typo_long_word else 1
        cands = lookup_candidates(art.typo_keys, art.typo_terms, art.vocab_terms, tok, max_distance=max_d)
        if not cands:
            if not tok.isdigit() and tok not in optional:
                denom += cal.oov_weight * max_idf
            continue
        best = min(cands.items(), key=lambda kv: (kv[1], idf[art.vocab[kv[0]]], kv[0]))
        corrections[tok] = best[0]
        w = cal.typo_weight_d1 if best[1] == 1 else cal.typo_weight_d2
        tid = art.vocab[best[0]]
        ids.append(tid)
        weights.append(w)
        denom += float(idf[tid])
    if cal.abbreviation_weight > 0:  # warehouse abbreviations: adds postings, not coverage owed
        abbr = abbreviation_map(art)
        short_forms = (tid for tok in tokens for tid in abbr.get(tok, ()))
        _add_postings(ids, weights, short_forms, cal.abbreviation_weight)
    if cal.compound_weight > 0:  # "census tract" also finds CENSUSTRACT_2018: adds postings only
        _add_postings(ids, weights, compound_term_ids(art, question), cal.compound_weight)
    if cal.acronym_weight > 0:  # "Genomic Data Commons" also finds CLINICAL_GDC_R39
        found = (art.vocab.get(tok) for tok in acronym_tokens(question))
        _add_postings(ids, weights, (tid for tid in found if tid is not None), cal.acronym_weight)
    return QueryTerms(ids, weights, denom, tokens, corrections)


def _add_postings(ids: list[int], weights: list[float], extra: Iterable[int], weight: float) -> None:
    """Append each term of ``extra`` not in ``ids`` yet at ``weight``: an expansion adds postings
    without raising what the question must cover (``denom`` is left alone)."""
    have = set(ids)
    for tid in extra:
        if tid not in have:
            have.add(tid)
            ids.append(tid)
            weights.append(weight)


def compound_term_ids(art: IndexArtifact, question: str) -> list[int]:
    """Index terms spelled by two adjacent question words written as one (``census tract`` ->
    ``censustract``, ``zip code`` -> ``zipcode``): warehouses glue words that questions keep
    apart. Linear in the question's words; each pair costs one stem and one vocabulary lookup.

    Runs of letters only (``5-year`` is no pair); a pair with a stopword is skipped. A term
    found only where both words are also found apart is no glued word but the whole form of a
    split identifier (``FirstName`` indexes ``first``, ``name`` and ``firstname``): the words
    already match there, so it is skipped rather than counted twice.
    """
    out: list[int] = []
    for a, b in adjacent_word_pairs(question):
        for tok in tokenize(a + b):
            tid = art.vocab.get(tok)
            if tid is not None and _glued_somewhere(art, tid, a, b):
                out.append(tid)
    return out


def _postings(art: IndexArtifact, tid: int | None) -> np.ndarray:
    if tid is None:
        return np.empty(0, dtype=np.int64)
    return art.bm25_indices[int(art.bm25_indptr[tid]) : int(art.bm25_indptr[tid + 1])]


def _glued_somewhere(art: IndexArtifact, tid: int, a: str, b: str) -> bool:
    """True when some chunk holding term ``tid`` lacks word ``a`` or word ``b`` on its own."""
    parts = [art.vocab.get(t[0]) if (t := tokenize(w)) else None for w in (a, b)]
    both = np.intersect1d(_postings(art, parts[0]), _postings(art, parts[1]))
    return bool(np.setdiff1d(_postings(art, tid), both).size)


def lexical_coverage(art: IndexArtifact, qt: QueryTerms) -> np.ndarray:
    """Per chunk: idf-weighted share of question tokens matched (each capped at one full match)."""
    out = np.zeros(art.n_chunks, dtype=np.float32)
    if qt.denominator <= 0:
        return out
    for tid, w in zip(qt.term_ids, qt.weights, strict=True):
        s, e = int(art.bm25_indptr[tid]), int(art.bm25_indptr[tid + 1])
        if e <= s:
            continue
        idf_t = art.bm25_idf[tid]
        # data = idf * tf(k1+1)/(tf+norm); a single mention in an average-length chunk gives idf.
        contrib = np.minimum(art.bm25_data[s:e], idf_t)
        out[art.bm25_indices[s:e]] += contrib * np.float32(w)
    out /= np.float32(qt.denominator)
    return out


def bm25_raw(art: IndexArtifact, qt: QueryTerms) -> np.ndarray:
    """Plain BM25 (for the BM25-only baseline), typo terms down-weighted."""
    out = np.zeros(art.n_chunks, dtype=np.float32)
    for tid, w in zip(qt.term_ids, qt.weights, strict=True):
        s, e = int(art.bm25_indptr[tid]), int(art.bm25_indptr[tid + 1])
        out[art.bm25_indices[s:e]] += art.bm25_data[s:e] * np.float32(w)
    return out / np.float32(K1 + 1)
