"""Scoring every chunk of one pinned index version against a question (pure functions).

Everything here takes the :class:`IndexArtifact` it scores as an argument and reads nothing
else: a request pins one version and hands it down, so the vocabulary, BM25 arrays, vectors
and chunk ids it combines always come from the same version.
"""

from __future__ import annotations

import functools
import os
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.text_tokens import identifier_mentions
from schemarag.runtime.search.query_terms import bm25_raw, lexical_coverage, query_terms
from schemarag.runtime.search.scoring import Calibration, boost_mentions, dense_normalised, fuse

WINDOW_WORDS = 40  # longer questions are scored sentence by sentence (see score_windows)
LONG_QUESTION_WORDS = 64
PARALLEL_DOT_CHUNKS = 32_768
METHODS = ("hybrid", "bm25", "dense")
_WORKERS = min(4, os.cpu_count() or 1)
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")


@functools.cache
def _dot_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="schemarag-dot")


def question_windows(question: str) -> tuple[str, ...]:
    """The question itself if short, else one window per sentence (very short sentences join
    the next; sentences over WINDOW_WORDS words are cut into overlapping pieces).

    >>> question_windows("orders last month")
    ('orders last month',)
    >>> question_windows("filler words here. " * 40 + "Show me orders.")[-1]
    'Show me orders.'
    """
    words = question.split()
    if len(words) <= LONG_QUESTION_WORDS:
        return (question,)
    windows: list[str] = []
    pending: list[str] = []
    for sentence in _SENTENCE_END.split(question):
        sw = pending + sentence.split()
        pending = []
        if len(sw) < 3:
            pending = sw
            continue
        while len(sw) > WINDOW_WORDS:
            windows.append(" ".join(sw[:WINDOW_WORDS]))
            sw = sw[WINDOW_WORDS // 2 :]
        windows.append(" ".join(sw))
    if pending:
        windows.append(" ".join(pending))
    return tuple(w for w in windows if w.strip()) or (question,)


def cosines(art: IndexArtifact, vec: np.ndarray) -> np.ndarray:
    """Exact dot products with every chunk vector (all L2-normalised: cosines).

    From PARALLEL_DOT_CHUNKS rows on, the rows are split over a small thread pool (numpy
    releases the GIL); BLAS itself stays single-threaded, because its worker threads keep
    spinning after each call and starve the ONNX threads of the next query embedding.
    """
    emb = art.embeddings
    n = emb.shape[0]
    sparse = art.dense_rows  # most rows zero (a warehouse's sparse embedding plan): score the rest
    if sparse is not None:
        rows, vectors = sparse
        out = np.zeros(n, dtype=np.float32)
        out[rows] = vectors @ vec
        return out
    if n < PARALLEL_DOT_CHUNKS or _WORKERS < 2:
        return np.asarray(emb @ vec)
    out = np.empty(n, dtype=np.float32)
    bounds = np.linspace(0, n, _WORKERS + 1, dtype=np.int64).tolist()

    def part(i: int) -> None:
        np.matmul(emb[bounds[i] : bounds[i + 1]], vec, out=out[bounds[i] : bounds[i + 1]])

    list(_dot_pool().map(part, range(_WORKERS)))
    return out


def score_window(
    art: IndexArtifact, text: str, vec: np.ndarray | None, method: str, cal: Calibration
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(relevance, lexical, cosine)`` of every chunk of ``art`` for one question window."""
    qt = query_terms(art, text, cal)
    cos = cosines(art, vec) if vec is not None else np.zeros(art.n_chunks, dtype=np.float32)
    lex = lexical_coverage(art, qt) if method != "dense" else np.zeros(art.n_chunks, dtype=np.float32)
    if method == "hybrid":
        rel = fuse(dense_normalised(cos, cal), lex, cal)
        named = [art.column_chunks[m] for m in identifier_mentions(text) if m in art.column_chunks]
        if named:
            boost_mentions(rel, np.concatenate(named), cal)
    elif method == "dense":
        rel = dense_normalised(cos, cal)
    else:  # bm25: raw BM25 rescaled by its best hit, damped when little of the question matched
        raw = bm25_raw(art, qt)
        rel = raw / np.float32(max(float(raw.max()), 1e-6)) * np.float32(min(1.0, float(lex.max()) * 2))
    return rel, lex, cos


def score_windows(
    art: IndexArtifact,
    windows: tuple[str, ...],
    vecs: np.ndarray | None,
    method: str,
    cal: Calibration,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each chunk's best ``(relevance, lexical, cosine)`` over the windows, so one relevant
    sentence at the end of a long message is neither truncated by the model nor drowned."""
    best: tuple[np.ndarray, ...] | None = None
    for i, text in enumerate(windows):
        scored = score_window(art, text, None if vecs is None else vecs[i], method, cal)
        best = scored if best is None else tuple(np.maximum(a, b) for a, b in zip(best, scored, strict=True))
    assert best is not None
    return best[0], best[1], best[2]
