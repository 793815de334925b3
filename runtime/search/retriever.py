"""The query-time retriever: memory-mapped hybrid search, FK expansion, table ranking.

Example:
    >>> r = Retriever.open("ecommerce")                          # doctest: +SKIP
    >>> res = r.search("Show me all orders from last month")     # doctest: +SKIP
    >>> res.chunks[0].chunk.table, res.metadata.tables_included  # doctest: +SKIP
    ('orders', ['orders'])

``Retriever.open`` returns one cached instance per (artifact folder, tenant, database, model).
A request touches no file: it re-reads ``CURRENT`` at most every ``refresh_seconds``
(``$SCHEMARAG_REFRESH_SECONDS``, default 2) by ``stat`` and maps a newly published version
when it changed, so a long-running service picks up rebuilds without a restart.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar

import numpy as np

from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.config import RetrievalSettings
from schemarag.runtime.errors import ArtifactNotFoundError, QuestionError
from schemarag.runtime.paths import artifacts_dir, database_artifacts
from schemarag.runtime.search.embedding import Embedder, ModelSpec
from schemarag.runtime.search.query_terms import bm25_raw, lexical_coverage, query_terms
from schemarag.runtime.search.results import RetrievalMetadata, RetrievalResult, ScoredChunk, TableRanking
from schemarag.runtime.search.scoring import (
    DEFAULT_CALIBRATION,
    Calibration,
    boost_mentions,
    dense_normalised,
    fuse,
)
from schemarag.runtime.search.table_ranking import rank_tables_from_scores
from schemarag.runtime.search.text_tokens import identifier_mentions

log = logging.getLogger(__name__)

WINDOW_WORDS = 40  # longer questions are scored sentence by sentence (see score_chunks)
LONG_QUESTION_WORDS = 64
PARALLEL_DOT_CHUNKS = 32_768
_WORKERS = min(4, os.cpu_count() or 1)


@functools.cache
def _dot_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="schemarag-dot")


_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")


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


class Retriever:
    """Hybrid retrieval over one database's published index."""

    _registry: ClassVar[dict[tuple, Retriever]] = {}
    _registry_lock = threading.Lock()

    _blas_limited = False

    @classmethod
    def _limit_blas_threads(cls) -> None:
        """Cap OpenBLAS at ``$SCHEMARAG_BLAS_THREADS`` (default 1; 0 = leave it alone), once per process.

        A request's matrix-vector product is memory-bound and gains nothing from BLAS threads,
        while those threads keep spinning after each call and starve the ONNX Runtime threads
        that embed the next question: on 2 cores, BirdUnion p50 fell from 11 to 6 ms.
        """
        if cls._blas_limited:
            return
        cls._blas_limited = True
        limit = int(os.environ.get("SCHEMARAG_BLAS_THREADS", "1") or 0)
        if limit > 0:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=limit, user_api="blas")

    def __init__(
        self,
        root: Path,
        db: str,
        tenant: str | None,
        model: ModelSpec,
        refresh_seconds: float,
        calibration: Calibration = DEFAULT_CALIBRATION,
    ) -> None:
        self.root = root
        self.db = db
        self.tenant = tenant
        self.embedder = Embedder.get(model)
        self._limit_blas_threads()
        self.refresh_seconds = refresh_seconds
        self.calibration = calibration
        self._lock = threading.Lock()
        self._artifacts: dict[str, IndexArtifact] = {}
        self._artifact: IndexArtifact | None = None
        self._stat: tuple | None = None
        self._checked = 0.0
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.query_cache_size = 2048  # repeated questions skip the model; 0 disables (benchmarks)
        self._ensure_current(force=True)

    # ---------------------------------------------------------------- opening and refresh
    @classmethod
    def open(
        cls,
        db: str,
        artifacts: str | Path | None = None,
        tenant: str | None = None,
        model: ModelSpec | None = None,
        refresh_seconds: float | None = None,
    ) -> Retriever:
        """The cached retriever for ``db`` (opened and validated on first use)."""
        root = database_artifacts(artifacts_dir(artifacts), db, tenant).resolve()
        spec = model or ModelSpec()
        refresh = (
            refresh_seconds
            if refresh_seconds is not None
            else float(os.environ.get("SCHEMARAG_REFRESH_SECONDS", "2"))
        )
        key = (str(root), spec)
        with cls._registry_lock:
            inst = cls._registry.get(key)
            if inst is None:
                inst = cls._registry[key] = cls(root, db, tenant, spec, refresh)
            inst.refresh_seconds = refresh
            return inst

    @classmethod
    def clear_cache(cls) -> None:
        with cls._registry_lock:
            cls._registry.clear()

    def _ensure_current(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < self.refresh_seconds:
            return
        with self._lock:
            self._checked = now
            pointer = self.root / CURRENT
            try:
                st = pointer.stat()
            except FileNotFoundError:
                if self._artifact is not None:
                    return  # keep serving what we have
                where = f"tenant {self.tenant!r}, " if self.tenant else ""
                raise ArtifactNotFoundError(
                    f"no published index for {where}database {self.db!r} at {self.root}; "
                    f"run `schemarag build --db {self.db}`"
                ) from None
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            if stamp == self._stat and self._artifact is not None:
                return
            key = pointer.read_text(encoding="utf-8").strip()
            art = self._artifacts.get(key)
            if art is None:
                art = IndexArtifact.open(self.root / key, expected_model=self.embedder.identity)
                art.warm()
                self._artifacts = {key: art}  # drop older versions; mapped pages go with them
                self._qcache.clear()
            self._artifact, self._stat = art, stamp

    @property
    def artifact(self) -> IndexArtifact:
        self._ensure_current()
        assert self._artifact is not None
        return self._artifact

    @property
    def schema(self):
        return self.artifact.schema

    # ---------------------------------------------------------------- scoring
    def _embed(self, windows: tuple[str, ...]) -> np.ndarray:
        """Query vectors, one per window; LRU-cached per question."""
        key = "\x1e".join(windows)
        hit = self._qcache.get(key)
        if hit is not None:
            self._qcache.move_to_end(key)
            return hit
        vecs = self.embedder.query_embed(list(windows))
        if self.query_cache_size > 0:
            self._qcache[key] = vecs
            if len(self._qcache) > self.query_cache_size:
                self._qcache.popitem(last=False)
        return vecs

    def clear_query_cache(self) -> None:
        self._qcache.clear()

    @staticmethod
    def _cosines(art: IndexArtifact, vec: np.ndarray) -> np.ndarray:
        """Exact dot products with every chunk vector (all L2-normalised: cosines).

        From PARALLEL_DOT_CHUNKS rows on, the rows are split over a small thread pool (numpy
        releases the GIL); BLAS itself stays single-threaded, because its worker threads keep
        spinning after each call and starve the ONNX threads of the next query embedding.
        """
        emb = art.embeddings
        n = emb.shape[0]
        if n < PARALLEL_DOT_CHUNKS or _WORKERS < 2:
            return np.asarray(emb @ vec)
        out = np.empty(n, dtype=np.float32)
        bounds = np.linspace(0, n, _WORKERS + 1, dtype=np.int64).tolist()

        def part(i: int) -> None:
            np.matmul(emb[bounds[i] : bounds[i + 1]], vec, out=out[bounds[i] : bounds[i + 1]])

        list(_dot_pool().map(part, range(_WORKERS)))
        return out

    def _score_window(self, text: str, vec: np.ndarray | None, method: str) -> tuple[np.ndarray, ...]:
        art = self.artifact
        qt = query_terms(art, text, self.calibration)
        cos = self._cosines(art, vec) if vec is not None else np.zeros(art.n_chunks, dtype=np.float32)
        lex = lexical_coverage(art, qt) if method != "dense" else np.zeros(art.n_chunks, dtype=np.float32)
        if method == "hybrid":
            rel = fuse(dense_normalised(cos, self.calibration), lex, self.calibration)
            named = [art.column_chunks[m] for m in identifier_mentions(text) if m in art.column_chunks]
            if named:
                boost_mentions(rel, np.concatenate(named), self.calibration)
        elif method == "dense":
            rel = dense_normalised(cos, self.calibration)
        else:  # bm25: raw BM25 rescaled by its best hit, damped when little of the question matched
            raw = bm25_raw(art, qt)
            rel = raw / np.float32(max(float(raw.max()), 1e-6)) * np.float32(min(1.0, float(lex.max()) * 2))
        return rel, lex, cos

    def score_chunks(
        self, question: str, method: str = "hybrid", timings: dict[str, float] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(relevance, lexical, cosine)`` for every chunk. ``method``: hybrid, bm25 or dense.

        A long question is scored window by window (sentences packed into windows of at most
        WINDOW_WORDS words) and each chunk keeps its best window, so one relevant sentence at
        the end of a long message is neither truncated by the model nor drowned by the rest.
        """
        if method not in ("hybrid", "bm25", "dense"):
            raise ValueError(f"unknown method {method!r}; use hybrid, bm25 or dense")
        if not isinstance(question, str) or not question.strip():
            raise QuestionError("the question is empty; pass a non-empty question")
        _ = self.artifact
        t0 = time.perf_counter()
        windows = question_windows(question)
        t1 = time.perf_counter()
        vecs = self._embed(windows) if method != "bm25" else None
        t2 = time.perf_counter()
        best: tuple[np.ndarray, ...] | None = None
        for i, text in enumerate(windows):
            scored = self._score_window(text, None if vecs is None else vecs[i], method)
            best = (
                scored if best is None else tuple(np.maximum(a, b) for a, b in zip(best, scored, strict=True))
            )
        assert best is not None
        t3 = time.perf_counter()
        if timings is not None:
            timings["tokenize"] = (t1 - t0) * 1000
            timings["embed"] = (t2 - t1) * 1000
            timings["search"] = (t3 - t2) * 1000
        return best[0], best[1], best[2]

    # ---------------------------------------------------------------- public API
    def search(
        self,
        question: str,
        top_k: int | None = None,
        relevance_threshold: float | None = None,
        debug: bool = False,
        table_budget: int | None = None,
    ) -> RetrievalResult:
        """Top-k chunks at or above the threshold, descending score, plus FK expansion.

        With ``table_budget``, the result also carries the budgeted table ranking (the
        selection ``schemarag eval`` measures), which the focused-schema formatter then uses.
        """
        settings = RetrievalSettings.resolve(top_k, relevance_threshold)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        art = self.artifact
        timings["load"] = (time.perf_counter() - t0) * 1000
        rel, lex, cos = self.score_chunks(question, "hybrid", timings)
        t1 = time.perf_counter()
        eligible = np.flatnonzero(rel >= settings.relevance_threshold)
        if eligible.size > settings.top_k:
            part = np.argpartition(-rel[eligible], settings.top_k - 1)[: settings.top_k]
            eligible = eligible[part]
        order = eligible[np.lexsort((eligible, -rel[eligible]))]
        t2 = time.perf_counter()
        chunks = [ScoredChunk(art.chunk(int(i)), float(rel[i]), float(lex[i]), float(cos[i])) for i in order]
        tables = list(dict.fromkeys(c.chunk.table for c in chunks if c.chunk.table))
        expanded = sorted({n for t in tables for n in art.schema.neighbours(t)} - set(tables))
        t3 = time.perf_counter()
        timings["rank"] = (t2 - t1) * 1000
        timings["expand"] = (t3 - t2) * 1000
        avg = float(np.mean([c.score for c in chunks])) if chunks else 0.0
        nothing = not chunks
        meta = RetrievalMetadata(
            total_chunks_searched=art.n_chunks,
            chunks_returned=len(chunks),
            avg_relevance_score=avg,
            tables_included=tables,
            expanded_tables=expanded,
            artifact_key=art.key,
            top_k=settings.top_k,
            relevance_threshold=settings.relevance_threshold,
            nothing_relevant=nothing,
            message=(f"no relevant documentation found (no chunk scored >= {settings.relevance_threshold})")
            if nothing
            else "",
        )
        result = RetrievalResult(
            question=question,
            chunks=chunks,
            tables=tables,
            expanded_tables=expanded,
            metadata=meta,
            ddl=art.ddl,
        )
        if table_budget is not None and chunks:
            result.ranking = rank_tables_from_scores(art, rel, table_budget, question=question)
        timings["format"] = (time.perf_counter() - t3) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        if debug:
            meta.timings_ms = {k: round(v, 3) for k, v in timings.items()}
        return result

    def rank_tables(
        self, question: str, budget: int, method: str = "hybrid", fk_expand: bool = True
    ) -> TableRanking:
        """Tables for a focused schema of at most ``budget`` tables (after FK expansion)."""
        rel, _, _ = self.score_chunks(question, method)
        art = self.artifact
        return rank_tables_from_scores(art, rel, budget, fk_expand=fk_expand, question=question)
