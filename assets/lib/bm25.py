"""Build the BM25 arrays the runtime memory-maps (bm25s' eager layout, see
:mod:`schemarag.runtime.core.bm25` for the reading side).

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
from schemarag.runtime.core.bm25 import K1, B, BM25Arrays
from schemarag.runtime.core.text_tokens import tokenize


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
    """Precompute BM25 weights (Lucene idf, which is never negative).

    Term ids are assigned in first-seen order (each document's distinct terms sorted); the
    postings of a term list its documents in order. Only the counting is per document in
    Python; the weights and the CSC layout are whole-array numpy (a stable sort by term keeps
    the document order), with the same float64 operations, in the same order, as one posting
    at a time, so the arrays are bit-identical to that.
    """
    n_docs = len(docs_tokens)
    vocab: dict[str, int] = {}
    counts = [Counter(toks) for toks in docs_tokens]
    for c in counts:
        for term in sorted(c):
            vocab.setdefault(term, len(vocab))
    lengths = np.array([len(t) for t in docs_tokens], dtype=np.float64)
    avgdl = float(lengths.mean()) if n_docs and lengths.sum() else 1.0
    sizes = np.fromiter((len(c) for c in counts), dtype=np.int64, count=n_docs)
    total = int(sizes.sum())
    term_ids = np.fromiter((vocab[t] for c in counts for t in c), dtype=np.int64, count=total)
    tfs = np.fromiter((tf for c in counts for tf in c.values()), dtype=np.float64, count=total)
    doc_ids = np.repeat(np.arange(n_docs, dtype=np.int64), sizes)
    norm = k1 * (1 - b + b * lengths[doc_ids] / avgdl)
    weights = tfs * (k1 + 1) / (tfs + norm)
    df_int = np.bincount(term_ids, minlength=len(vocab))
    df = df_int.astype(np.float64)
    idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    order = np.argsort(term_ids, kind="stable")
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(df_int)
    indices = doc_ids[order].astype(np.int32)
    data = (weights[order] * idf[term_ids[order]]).astype(np.float32)
    return BM25Arrays(indptr=indptr, indices=indices, data=data, idf=idf.astype(np.float32), vocab=vocab)
