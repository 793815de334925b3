"""Build the BM25 arrays the runtime memory-maps (bm25s' eager layout, see
:mod:`schemarag.runtime.search.bm25` for the reading side).

All arithmetic happens here, once per build, so a query only sums a few precomputed slices.

>>> arrays = build_bm25([["order", "status"], ["user", "email"]])
>>> sorted(arrays.vocab)
['email', 'order', 'status', 'user']
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from schemarag.assets.lib.typo import build_typo_index
from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.search.bm25 import K1, B, BM25Arrays
from schemarag.runtime.search.text_tokens import tokenize


@dataclass
class BM25Statistics:
    """Everything the lexical side of an index needs: BM25 arrays plus the typo index."""

    arrays: BM25Arrays
    typo_keys: np.ndarray
    typo_terms: np.ndarray


def index_text(chunk: Chunk) -> str:
    """What BM25 sees: the text plus title and keywords (identifiers in every form)."""
    return f"{chunk.title}\n{chunk.text}\n{' '.join(chunk.keywords)}"


def compute_bm25(chunks: list[Chunk]) -> BM25Statistics:
    """The lexical statistics of a chunk set: the one function the asset and benchmarks call."""
    arrays = build_bm25([tokenize(index_text(c)) for c in chunks])
    keys, terms = build_typo_index(list(arrays.vocab))
    return BM25Statistics(arrays=arrays, typo_keys=keys, typo_terms=terms)


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
