"""Build the typo index (SymSpell delete-1 neighbourhoods of the BM25 vocabulary) that
:mod:`schemarag.runtime.search.typo` looks up at query time.

>>> keys, terms = build_typo_index(["order", "month"])
>>> len(keys) == len(terms) > 0
True
"""

from __future__ import annotations

import numpy as np

from schemarag.runtime.search.typo import MIN_TERM_LENGTH, _h, _variants


def build_typo_index(vocab_terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, term_ids)``: sorted uint64 hashes of variants and the term each came from."""
    pairs: list[tuple[int, int]] = []
    for tid, term in enumerate(vocab_terms):
        if len(term) < MIN_TERM_LENGTH or not term.isalpha():
            continue
        pairs.extend((_h(v), tid) for v in _variants(term))
    if not pairs:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32)
    arr = np.array(pairs, dtype=np.uint64)
    order = np.lexsort((arr[:, 1], arr[:, 0]))
    return arr[order, 0].astype(np.uint64), arr[order, 1].astype(np.int32)
