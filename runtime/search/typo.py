"""Typo tolerance: a precomputed delete-neighbourhood index over the BM25 vocabulary.

SymSpell's idea at edit distance 1 per side: every vocabulary term of length >= 4 is stored
under itself and each string obtained by deleting one character. A misspelt query token
("ordres" -> stem "ordr") is looked up by itself and its own single deletions; any term met
that way is within one substitution, insertion, deletion or transposition. The build computes
the key hashes; a query does ~10 binary searches, no scan of the vocabulary.

>>> from schemarag.assets.lib.typo import build_typo_index
>>> idx = build_typo_index(["order", "month", "last"])
>>> sorted(lookup_candidates(idx[0], idx[1], ["order", "month", "last"], "lsat"))
['last']
"""

from __future__ import annotations

import hashlib

import numpy as np

MIN_TERM_LENGTH = 4


def _h(s: str) -> int:
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


def _variants(term: str) -> set[str]:
    return {term} | {term[:i] + term[i + 1 :] for i in range(len(term))}


def osa_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance (Levenshtein plus adjacent transpositions)."""
    if abs(len(a) - len(b)) > 2:
        return 3
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def lookup_candidates(
    keys: np.ndarray, term_ids: np.ndarray, vocab_terms: list[str], token: str, max_distance: int = 2
) -> dict[str, int]:
    """Vocabulary terms within ``max_distance`` (OSA) of ``token``: ``{term: distance}``."""
    if len(token) < MIN_TERM_LENGTH or not token.isalpha() or keys.size == 0:
        return {}
    probes = np.array([_h(v) for v in _variants(token)], dtype=np.uint64)
    lo = np.searchsorted(keys, probes, side="left")
    hi = np.searchsorted(keys, probes, side="right")
    out: dict[str, int] = {}
    for s, e in zip(lo.tolist(), hi.tolist(), strict=True):
        for tid in term_ids[s:e].tolist():
            term = vocab_terms[tid]
            if term == token or term in out:
                continue
            d = osa_distance(token, term)
            if d <= max_distance:
                out[term] = d
    return out
