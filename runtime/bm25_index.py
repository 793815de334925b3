"""BM25 as precomputed per-(term, chunk) weights in CSC arrays (the bm25s "eager" layout).

Build time does all the arithmetic: ``data[indptr[t]:indptr[t+1]]`` holds the BM25 weight of
term ``t`` in each chunk ``indices[...]``. A query only sums a few slices, so scoring 100,000
chunks takes well under a millisecond and needs no fitting. The vocabulary is stored with the
index, so query tokens map exactly to build tokens.
"""

from __future__ import annotations

from collections import Counter
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


def build_bm25(docs_tokens: list[list[str]], k1: float = K1, b: float = B) -> BM25Arrays:
    """Precompute BM25 weights (Lucene idf, which is never negative)."""
    n_docs = len(docs_tokens)
    vocab: dict[str, int] = {}
    counts = [Counter(toks) for toks in docs_tokens]
    for c in counts:
        for term in sorted(c):
            vocab.setdefault(term, len(vocab))
    lengths = np.array([len(t) for t in docs_tokens], dtype=np.float64)
    avgdl = float(lengths.mean()) if n_docs and lengths.sum() else 1.0
    postings: list[list[tuple[int, float]]] = [[] for _ in vocab]
    for doc_id, c in enumerate(counts):
        norm = k1 * (1 - b + b * lengths[doc_id] / avgdl)
        for term, tf in c.items():
            postings[vocab[term]].append((doc_id, tf * (k1 + 1) / (tf + norm)))
    df = np.array([len(p) for p in postings], dtype=np.float64)
    idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(df).astype(np.int64)
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    data = np.empty(int(indptr[-1]), dtype=np.float32)
    for t, plist in enumerate(postings):
        s = indptr[t]
        for j, (doc_id, w) in enumerate(plist):
            indices[s + j] = doc_id
            data[s + j] = w * idf[t]
    return BM25Arrays(indptr=indptr, indices=indices, data=data, idf=idf.astype(np.float32), vocab=vocab)


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
