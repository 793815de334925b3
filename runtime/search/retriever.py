"""The query-time retriever: memory-mapped hybrid search, FK expansion, table ranking.

Example:
    >>> r = Retriever.open("ecommerce")                          # doctest: +SKIP
    >>> res = r.search("Show me all orders from last month")     # doctest: +SKIP
    >>> res.chunks[0].chunk.table, res.metadata.tables_included  # doctest: +SKIP
    ('orders', ['orders'])

``Retriever.open`` returns one cached instance per (artifact folder, tenant, database, model)
from a bounded LRU registry (``$SCHEMARAG_MAX_OPEN_INDEXES``, default 32); an evicted index is
unmapped when the last request still using it finishes.

**One request, one snapshot.** A request pins one immutable :class:`IndexArtifact` (an index
version and everything derived from it) once, at its start, and hands it down to scoring,
ranking, FK expansion and formatting; ``metadata.artifact_key`` names that version. Noticing
a rebuild costs one ``stat`` of ``CURRENT``, at most every ``refresh_seconds``
(``$SCHEMARAG_REFRESH_SECONDS``, default 2). A changed ``CURRENT`` is opened and fully verified
(manifest, checksums) on a background thread while requests keep using the version they
have, then swapped in by one reference assignment: a long-running service picks up rebuilds
without a restart, and no request thread ever hashes a file or sees half of two versions.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, NamedTuple

import numpy as np

from schemarag.runtime.artifact.ddl import TableDDL
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.artifact.remote import fetch_if_remote, local_database_root
from schemarag.runtime.core.config import RetrievalSettings, runtime_settings
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec
from schemarag.runtime.core.errors import ArtifactNotFoundError, ConfigError, QuestionError
from schemarag.runtime.core.schema import Database
from schemarag.runtime.ranking.candidates import RankingRequest
from schemarag.runtime.ranking.config import (
    SHIPPED,
    AdaptiveBudget,
    ColumnPolicy,
    RankingConfig,
    resolve_focus,
)
from schemarag.runtime.ranking.pipeline import neighbour_picks, rank
from schemarag.runtime.search.chunk_scores import METHODS, question_windows, score_windows
from schemarag.runtime.search.index_model import calibration_for, index_model_spec
from schemarag.runtime.search.lru import LRU
from schemarag.runtime.search.results import RetrievalMetadata, RetrievalResult, ScoredChunk, TableRanking
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION, Calibration
from schemarag.runtime.search.value_mentions import MentionHit, mention_hits, mention_spans
from schemarag.runtime.search.versions import ServedVersion

__all__ = ["PinnedIndex", "Retriever", "question_windows"]

log = logging.getLogger(__name__)
QUERY_CACHE_SIZE = 2048


def max_open_indexes() -> int:
    """``$SCHEMARAG_MAX_OPEN_INDEXES`` (default 32): open indexes kept mapped per process."""
    return runtime_settings().schemarag_max_open_indexes


def not_found(db: str, tenant: str | None) -> ArtifactNotFoundError:
    """The same words whether the database does not exist or belongs to another tenant."""
    where = f"tenant {tenant!r}, " if tenant else ""
    fix = f"schemarag build --db {db}" + (f" --tenant {tenant}" if tenant else "")
    return ArtifactNotFoundError(f"no published index for {where}database {db!r}; run `{fix}`")


class SearchAsk(NamedTuple):
    """What one search asks of the table ranking (``Retriever._ask``)."""

    budget: int  # tables at most (0: no ranking, the chunks and their FK neighbours)
    policy: ColumnPolicy | None  # what each table shows (None: the config's default focus)
    rule: AdaptiveBudget | None  # a per-question number of tables
    # the caller named a budget, focus or adaptive rule: the ranking runs even when no chunk
    # passes the relevance threshold (a plain search then returns no tables, as it always did)
    requested: bool = False


class Retriever:
    """Hybrid retrieval over one database's published index."""

    _registry: ClassVar[LRU[tuple, Retriever]] = LRU(32)
    _open_lock = threading.Lock()  # serialises cold opens only; lookups of open indexes never wait
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
        limit = runtime_settings().schemarag_blas_threads
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
        self.embedder = Embedder.get(index_model_spec(root, model))  # the index's own encoder
        self._limit_blas_threads()
        self.config: RankingConfig = SHIPPED  # the ranking knobs every request of this retriever uses
        # the default calibration means the config's, else the model's own (a static model's
        # cosines sit higher)
        own = self.config.calibration or calibration_for(self.embedder.spec.name)
        self.calibration = own if calibration is DEFAULT_CALIBRATION else calibration
        self._qcache: LRU[str, np.ndarray] = LRU(QUERY_CACHE_SIZE)  # query vectors: model-only, any version
        # Called with True/False on every query-vector cache lookup (a server's hit-ratio metric).
        self.on_query_cache: Callable[[bool], None] | None = None
        # No callback refers back to self: a Retriever dropped from the registry is freed (and
        # its maps closed) by reference counting, not at some later garbage collection.
        opener = functools.partial(
            IndexArtifact.open, expected_model=self.embedder.identity, database=db, tenant=tenant
        )
        self._version = ServedVersion(root, opener, refresh_seconds, functools.partial(not_found, db, tenant))

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
        """The cached retriever for ``db`` (of ``tenant``), opened and verified on first use.

        A tenant's request resolves only inside ``<artifacts>/_tenants/<tenant>/``; an index
        that is not there fails exactly like a database that does not exist.
        """
        root = local_database_root(artifacts, db, tenant).resolve()  # s3://: the local cache copy
        spec = model or ModelSpec()
        refresh = refresh_seconds
        if refresh is None:
            refresh = runtime_settings().schemarag_refresh_seconds
        key = (str(root), spec)
        inst = cls._registry.get(key)
        if inst is None:
            with cls._open_lock:
                inst = cls._registry.get(key)
                if inst is None:
                    fetch_if_remote(artifacts, db, tenant)  # one download per version, never per request
                    inst = cls(root, db, tenant, spec, refresh)
                    cls._registry.maxsize = max_open_indexes()
                    for gone in cls._registry.put(key, inst):
                        log.info("closing index %s (open-index limit %d)", gone.root, cls._registry.maxsize)
        inst.refresh_seconds = refresh
        return inst

    @classmethod
    def clear_cache(cls) -> None:
        cls._registry.clear()

    @classmethod
    def open_count(cls) -> int:
        return len(cls._registry)

    @property
    def refresh_seconds(self) -> float:
        return self._version.refresh_seconds

    @refresh_seconds.setter
    def refresh_seconds(self, value: float) -> None:
        self._version.refresh_seconds = value

    @property
    def last_error(self) -> Exception | None:
        """Why the latest published version is not being served (None when it is)."""
        return self._version.last_error

    def refresh(self) -> str:
        """Check ``CURRENT`` now and switch before returning; the key being served."""
        return self._version.refresh()

    def snapshot(self) -> IndexArtifact:
        """The index version a request pins (call once per request; at most one ``stat``)."""
        return self._version.snapshot()

    def pin(self) -> PinnedIndex:
        """One version for a whole multi-step request (retrieve, render, validate)."""
        return PinnedIndex(self, self.snapshot())

    @property
    def artifact(self) -> IndexArtifact:
        return self.snapshot()

    @property
    def schema(self) -> Database:
        return self.snapshot().schema

    # ---------------------------------------------------------------- scoring
    @property
    def query_cache_size(self) -> int:
        """Question vectors kept (LRU); repeated questions skip the model. 0 disables (benchmarks)."""
        return self._qcache.maxsize

    @query_cache_size.setter
    def query_cache_size(self, value: int) -> None:
        self._qcache.maxsize = value
        if value <= 0:
            self._qcache.clear()

    def _embed(self, windows: tuple[str, ...]) -> np.ndarray:
        """Query vectors, one per window; LRU-cached per question."""
        key = "\x1e".join(windows)
        hit = self._qcache.get(key)
        if self.on_query_cache is not None:
            self.on_query_cache(hit is not None)
        if hit is not None:
            return hit
        vecs = self.embedder.query_embed(list(windows))
        self._qcache.put(key, vecs)
        return vecs

    def clear_query_cache(self) -> None:
        self._qcache.clear()

    def score_chunks(
        self,
        question: str,
        method: str = "hybrid",
        timings: dict[str, float] | None = None,
        snapshot: IndexArtifact | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(relevance, lexical, cosine)`` for every chunk of ``snapshot`` (default: pin the
        current version). ``method``: hybrid, bm25 or dense. Long questions are scored window
        by window (see :func:`~schemarag.runtime.search.chunk_scores.score_windows`)."""
        if method not in METHODS:
            raise ConfigError(f"unknown method {method!r}; use hybrid, bm25 or dense")
        if not isinstance(question, str) or not question.strip():
            raise QuestionError("the question is empty; pass a non-empty question")
        art = snapshot if snapshot is not None else self.snapshot()
        t0 = time.perf_counter()
        windows = question_windows(question)
        t1 = time.perf_counter()
        vecs = self._embed(windows) if method != "bm25" else None
        t2 = time.perf_counter()
        scores = score_windows(art, windows, vecs, method, self.calibration)
        if timings is not None:
            timings["tokenize"] = (t1 - t0) * 1000
            timings["embed"] = (t2 - t1) * 1000
            timings["search"] = (time.perf_counter() - t2) * 1000
        return scores

    def mention_hits(self, question: str, art: IndexArtifact) -> list[MentionHit]:
        """The question's value mentions and their best tables (:mod:`.value_mentions`); empty for a
        union (routing decides there) or when mentions are off (``config.mention_lead`` None).
        Each mention is embedded alone; the vectors share the question LRU cache."""
        if self.config.mention_lead is None or len(art.table_sources[1]) > 1 or self.embedder is None:
            return []
        spans = mention_spans(art, question, self.embedder.word_pieces, self.config.mention_rare_pieces)
        if not spans:
            return []
        key = "\x1fmentions\x1e" + "\x1e".join(spans)
        vecs = self._qcache.get(key)
        if vecs is None:
            vecs = self.embedder.query_embed(spans)
            self._qcache.put(key, vecs)
        return mention_hits(art, spans, vecs)

    # ---------------------------------------------------------------- public API
    def search(
        self,
        question: str,
        top_k: int | None = None,
        relevance_threshold: float | None = None,
        debug: bool = False,
        table_budget: int | None = None,
        focus: str | ColumnPolicy | None = None,
        adaptive: bool | AdaptiveBudget = False,
    ) -> RetrievalResult:
        """The focused tables for ``question`` (the table ranking), with the top-k chunks at or
        above the threshold as their evidence.

        By default the result carries the budgeted table ranking (``result.ranking``: at most
        ``table_budget`` tables, default ``config.table_budget`` = 15, ranked from all
        evidence; the selection ``schemarag eval`` measures and the focused-schema formatter
        renders). ``result.tables`` are the tables ranked on their own score and
        ``result.expanded_tables`` the foreign-key neighbours the ranking took with them (see
        ``ranking.pipeline.neighbour_picks``), both in rank order. ``focus`` says what each ranked table
        shows: ``"default"`` (focused columns as DDL with descriptions), ``"compact"`` (the
        focused schema capped at 30 % of the full one and never above the default focus; see
        ``ranking.config.focus_policies``) or a :class:`ColumnPolicy`. ``adaptive`` (``True`` for
        the shipped ``config.adaptive``, or an :class:`AdaptiveBudget`) makes the number of
        tables per question: the table budget becomes a ceiling, and a question whose evidence
        and routing are clear keeps fewer.

        ``table_budget=0`` skips the ranking: the chunks, the tables they name and every FK
        neighbour of those (the raw evidence; what a chunk-search benchmark times).

        When no chunk reaches the relevance threshold, a search that names ``table_budget``,
        ``focus`` or ``adaptive`` still gets its ranking (tables are ranked from every chunk's
        relevance; the threshold decides only which chunks are shown as documentation, and
        ``metadata.nothing_relevant`` still says none was); a plain search returns no tables.
        """
        t0 = time.perf_counter()
        ask = self._ask(table_budget, focus, adaptive)  # a bad focus or budget fails before any scoring
        settings = RetrievalSettings.resolve(top_k, relevance_threshold)
        return self._search(self.snapshot(), question, settings, ask, debug, t0)

    def _ask(
        self, table_budget: int | None, focus: str | ColumnPolicy | None, adaptive: bool | AdaptiveBudget
    ) -> SearchAsk:
        """What a search asks of the table ranking, checked."""
        policy = resolve_focus(focus, self.config)
        rule = self.config.adaptive if adaptive is True else adaptive or None
        budget = self.config.table_budget if table_budget is None else table_budget
        if budget < 0 or (budget == 0 and (policy is not None or rule is not None)):
            raise ConfigError(
                f"table_budget {budget}: use a whole number >= 1 (0, chunks only, takes no focus "
                "or adaptive budget)"
            )
        requested = table_budget is not None or policy is not None or rule is not None
        return SearchAsk(budget, policy, rule, requested)

    def _search(
        self,
        art: IndexArtifact,
        question: str,
        settings: RetrievalSettings,
        ask: SearchAsk,
        debug: bool,
        t0: float,
    ) -> RetrievalResult:
        timings: dict[str, float] = {"load": (time.perf_counter() - t0) * 1000}
        rel, lex, cos = self.score_chunks(question, "hybrid", timings, snapshot=art)
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
        result = RetrievalResult(
            question=question,
            chunks=chunks,
            tables=tables,
            expanded_tables=expanded,
            metadata=_metadata(art, chunks, tables, expanded, settings),
            ddl=art.ddl,
            schema=art.schema,
        )
        budget, policy, rule, requested = ask
        # An asked-for ranking runs even when no chunk passes the threshold: table evidence is
        # every chunk's relevance, and the threshold only says which chunks are shown as docs
        # (51 of 1,534 BIRD dev questions got no table at all under --focus before).
        if budget and (chunks or requested):
            hits = self.mention_hits(question, art)
            request = RankingRequest(question, budget, policy, rule, hits, True, self.calibration)
            result.ranking = rank(art, rel, request, self.config)
            picks = neighbour_picks(result.ranking)
            result.tables = [t for t in result.ranking.tables if t not in picks]
            result.expanded_tables = picks
            result.metadata.tables_included, result.metadata.expanded_tables = result.tables, picks
        timings["format"] = (time.perf_counter() - t3) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        if debug:
            result.metadata.timings_ms = {k: round(v, 3) for k, v in timings.items()}
        return result

    def rank_tables(
        self,
        question: str,
        budget: int,
        method: str = "hybrid",
        fk_expand: bool = True,
        policy: str | ColumnPolicy | None = None,
    ) -> TableRanking:
        """Tables for a focused schema of at most ``budget`` tables (after FK expansion);
        ``policy`` says what each table shows (e.g. ``ColumnPolicy(context_share=0.3)`` caps
        the focused schema at 30 % of the full one). One index version throughout."""
        art = self.snapshot()
        resolved = resolve_focus(policy, self.config)
        rel, _, _ = self.score_chunks(question, method, snapshot=art)
        # the lexical-only method embeds nothing, mentions included (as the evaluation does)
        hits = self.mention_hits(question, art) if method != "bm25" else ()
        ask = RankingRequest(question, budget, resolved, None, hits, fk_expand, self.calibration)
        return rank(art, rel, ask, self.config)


def _metadata(
    art: IndexArtifact,
    chunks: list[ScoredChunk],
    tables: list[str],
    expanded: list[str],
    settings: RetrievalSettings,
) -> RetrievalMetadata:
    """What a search looked at and returned (before the table ranking replaces the tables)."""
    nothing = not chunks
    return RetrievalMetadata(
        total_chunks_searched=art.n_chunks,
        chunks_returned=len(chunks),
        avg_relevance_score=float(np.mean([c.score for c in chunks])) if chunks else 0.0,
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


@dataclass(frozen=True)
class PinnedIndex:
    """A retriever held to one index version: every call reads the same snapshot, so the
    chunks retrieved, the DDL rendered and the schema SQL is validated against agree.

    >>> pinned = Retriever.open("ecommerce").pin()                 # doctest: +SKIP
    >>> pinned.search("orders").metadata.artifact_key == pinned.key  # doctest: +SKIP
    True
    """

    retriever: Retriever
    artifact: IndexArtifact

    @property
    def key(self) -> str:
        return self.artifact.key

    @property
    def schema(self) -> Database:
        return self.artifact.schema

    @property
    def ddl(self) -> dict[str, TableDDL]:
        return self.artifact.ddl

    def search(
        self,
        question: str,
        top_k: int | None = None,
        relevance_threshold: float | None = None,
        debug: bool = False,
        table_budget: int | None = None,
        focus: str | ColumnPolicy | None = None,
        adaptive: bool | AdaptiveBudget = False,
    ) -> RetrievalResult:
        t0 = time.perf_counter()
        ask = self.retriever._ask(table_budget, focus, adaptive)
        settings = RetrievalSettings.resolve(top_k, relevance_threshold)
        return self.retriever._search(self.artifact, question, settings, ask, debug, t0)
