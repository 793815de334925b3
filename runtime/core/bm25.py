"""BM25 as precomputed per-(term, chunk) weights in CSC arrays (the bm25s "eager" layout).

Build time does all the arithmetic: ``data[indptr[t]:indptr[t+1]]`` holds the BM25 weight of
term ``t`` in each chunk ``indices[...]``. A query only sums a few slices, so scoring 100,000
chunks takes well under a millisecond and needs no fitting. The vocabulary is stored with the
index, so query tokens map exactly to build tokens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

K1 = 1.5
B = 0.75


@dataclass
class BM25Arrays:
    """The memory-mappable BM25 index plus its vocabulary."""

    indptr: np.ndarray  # int64, V+1
    indices: np.ndarray  # int32, nnz: chunk ids
    data: np.ndarray  # float32, nnz: BM25 weight of the term in that chunk
    idf: np.ndarray  # float32, V
    vocab: dict[str, int]


def score(
    arrays_indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    n_docs: int,
    term_ids: list[int],
    weights: list[float] | None = None,
) -> np.ndarray:
    """Sum the precomputed weights of ``term_ids`` (with optional per-term weights)."""
    out = np.zeros(n_docs, dtype=np.float32)
    for i, t in enumerate(term_ids):
        s, e = int(arrays_indptr[t]), int(arrays_indptr[t + 1])
        if e > s:
            w = data[s:e] if weights is None or weights[i] == 1.0 else data[s:e] * np.float32(weights[i])
            out[indices[s:e]] += w
    return out
