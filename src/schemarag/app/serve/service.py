"""What the server does, once for both front doors (HTTP routes and MCP tools).

Every operation takes the caller's :class:`~schemarag.app.serve.keys.Principal` and only
ever resolves databases inside that principal's namespace (``artifacts/<db>/`` for the default
namespace, ``artifacts/_tenants/<tenant>/<db>/`` for a tenant). A database of another tenant
and a database that does not exist raise the same :class:`DatabaseNotFoundError` with the same
message, so a caller cannot probe for other tenants' names.

The methods are synchronous and CPU-bound; the app runs them in its thread pool. Hot swap is
the retriever's: it re-stats ``CURRENT`` and maps a newly published version, while a request
that already holds the previous :class:`IndexArtifact` finishes on it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemarag.app.serve.keys import Principal
from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec
from schemarag.runtime.core.errors import ConfigError, InvalidNameError, SchemaragError
from schemarag.runtime.core.names import is_reserved
from schemarag.runtime.core.paths import database_artifacts, did_you_mean
from schemarag.runtime.ranking.config import TableFocus
from schemarag.runtime.search.history_examples import examples_section, history_has_placeholders
from schemarag.runtime.search.lru import LRU
from schemarag.runtime.search.results import RetrievalMetadata, RetrievalResult
from schemarag.runtime.search.retriever import PinnedIndex, Retriever, max_open_indexes

log = logging.getLogger(__name__)

LLM_SETTING = "SCHEMARAG_LLM_BASE_URL"


class DatabaseNotFoundError(SchemaragError, LookupError):
    """No database of that name in the caller's namespace (HTTP 404)."""


class InputTooLargeError(SchemaragError, ValueError):
    """A question, SQL text or table list over the server's limit (HTTP 422)."""


class NotConfiguredError(SchemaragError):
    """A capability whose setting is missing, e.g. no LLM endpoint for generation (HTTP 503)."""


@dataclass
class Observer:
    """Hooks the HTTP app points at its metrics (the stdio MCP server leaves them empty)."""

    cache_lookup: Callable[[bool], None] | None = None  # True = the question's embedding was cached
    index_served: Callable[[str | None, str, str], None] | None = None  # tenant, database, version


def llm_configured() -> bool:
    return bool(os.environ.get(LLM_SETTING, "").strip())


def table_hint(name: str, tables: list[str]) -> str:
    """``" (did you mean 'SALES.ORDERS'?)"`` for a table name as the CLI's validator suggests it:
    the qualified names that end with what was written first, else the closest name."""
    ending = "." + name.lower()
    hits = [t for t in tables if t.lower().endswith(ending)]
    if hits:
        return f" (did you mean {' or '.join(map(repr, hits[:3]))}?)"
    close = did_you_mean(name, tables)
    return f" ({close.removeprefix('; ')})" if close else ""


class SchemaService:
    """Tenant-scoped retrieval, focused schemas, validation and generation over one artifacts folder."""

    def __init__(self, artifacts: Path, refresh_seconds: float = 2.0, query_cache: bool = True) -> None:
        self.artifacts = artifacts
        self.refresh_seconds = refresh_seconds
        self.query_cache = query_cache
        # one ONNX thread per call: the thread pool supplies the parallelism, and two-thread
        # calls from several pool threads would oversubscribe the cores
        self.model = ModelSpec(threads=1)
        self.observer = Observer()
        self._open: LRU[tuple[str | None, str], Retriever] = LRU(max_open_indexes())

    # ------------------------------------------------------------------ namespace
    def _root(self, principal: Principal) -> Path:
        if principal.tenant is None:
            return self.artifacts
        return self.artifacts / "_tenants" / principal.tenant

    def database_names(self, principal: Principal) -> list[str]:
        """Databases with a published index in the caller's namespace, sorted."""
        root = self._root(principal)
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if not is_reserved(p.name) and (p / CURRENT).is_file())

    def retriever(self, principal: Principal, db: str) -> Retriever:
        """The retriever for ``db`` in the caller's namespace, or DatabaseNotFoundError.

        Kept in a bounded LRU (the retriever registry's size) so a request skips the path
        checks and ``resolve()`` system calls of :meth:`Retriever.open`; the retriever itself
        notices newly published versions.
        """
        ident = (principal.tenant, db)
        r = self._open.get(ident)
        if r is None:
            r = self._open_retriever(principal, db)
            self._open.maxsize = max_open_indexes()
            self._open.put(ident, r)
        if self.observer.index_served is not None:
            self.observer.index_served(principal.tenant, db, r.artifact.key)
        return r

    def _open_retriever(self, principal: Principal, db: str) -> Retriever:
        # the suggestion comes from the caller's own namespace only (tenancy is a boundary)
        hint = did_you_mean(db, self.database_names(principal))
        not_found = DatabaseNotFoundError(
            f"database {db!r} not found{hint + ' ' if hint else '; '}"
            "list_databases (GET /v1/databases) shows yours"
        )
        try:
            folder = database_artifacts(self.artifacts, db, principal.tenant)
        except InvalidNameError:
            raise not_found from None
        if not (folder / CURRENT).is_file():
            raise not_found
        r = Retriever.open(
            db,
            artifacts=self.artifacts,
            tenant=principal.tenant,
            model=self.model,
            refresh_seconds=self.refresh_seconds,
        )
        if not self.query_cache:
            r.query_cache_size = 0
        r.on_query_cache = self.observer.cache_lookup
        return r

    def warm(
        self, tenants: list[str | None], only: set[tuple[str | None, str]] | None = None
    ) -> tuple[list[tuple[str | None, str, str]], dict[tuple[str | None, str], str]]:
        """Open every database of ``tenants`` (or just ``only``) and embed one question.

        Returns ``(opened as (tenant, db, version), failures by (tenant, db))``: one broken
        index does not keep the others down, but readiness reports it.
        """
        opened, failed = [], {}
        encoders: dict[int, Embedder] = {}
        for tenant in tenants:
            principal = Principal(tenant)
            for db in self.database_names(principal):
                if only is not None and (tenant, db) not in only:
                    continue
                try:
                    r = self.retriever(principal, db)
                    opened.append((tenant, db, r.artifact.key))
                    encoders.setdefault(id(r.embedder), r.embedder)
                except SchemaragError as exc:
                    log.error("cannot open %s/%s: %s", tenant or "-", db, exc)
                    failed[(tenant, db)] = str(exc)
        # load each index's own encoder now (an index may name a model other than the default),
        # not on the first request; with nothing opened, the default one
        for embedder in encoders.values() or [Embedder.get(self.model)]:
            embedder.query_embed(["warm up"])
        return opened, failed

    # ------------------------------------------------------------------ operations
    def databases(self, principal: Principal) -> list[dict[str, Any]]:
        out = []
        for db in self.database_names(principal):
            try:
                art = self.retriever(principal, db).snapshot()
            except SchemaragError as exc:
                log.warning("database %s listed but not servable: %s", db, exc)
                continue
            out.append({"database": db, "artifact_key": art.key, "tables": len(art.schema.tables)})
        return out

    def _search(
        self,
        pinned: PinnedIndex,
        question: str,
        top_k: int | None,
        threshold: float | None,
        ranking: TableFocus | None = None,
    ) -> RetrievalResult:
        """Search one pinned version (chunks, DDL and schema of a response always agree)."""
        extra = ranking.search_kwargs() if ranking is not None else {}
        return pinned.search(question, top_k=top_k, relevance_threshold=threshold, debug=True, **extra)

    def retrieve(
        self,
        principal: Principal,
        db: str,
        question: str,
        top_k: int | None,
        threshold: float | None,
        ranking: TableFocus | None = None,
    ) -> dict[str, Any]:
        """The focused tables for ``question`` and the chunks behind them (``retrieve --json``)."""
        result = self._search(self.retriever(principal, db).pin(), question, top_k, threshold, ranking)
        return {"database": db, **result.to_dict()}

    def schema(
        self,
        principal: Principal,
        db: str,
        question: str | None,
        tables: list[str] | None,
        token_budget: int | None,
        top_k: int | None = None,
        ranking: TableFocus | None = None,
        examples: int | None = None,
    ) -> dict[str, Any]:
        """The focused schema for ``question``, or for ``tables`` (+ FK neighbours).

        ``ranking`` (question only) switches to the budgeted table ranking: at most its table
        budget, each table showing what its focus says (``Retriever.search``). ``examples``
        (question only; None: the default) past queries of the version's query history follow
        the schema, chosen as ``generate`` chooses them (``querygen.context.past_queries``)."""
        from schemarag.app.querygen.context import missing_examples_reason, past_queries
        from schemarag.runtime.artifact.ddl import statement_head
        from schemarag.runtime.formatting import format_focused_schema

        pinned = self.retriever(principal, db).pin()
        result = self._search(pinned, question, top_k, None, ranking) if question else None
        art = pinned.artifact
        schema = art.schema
        if tables:
            result = self._pinned(art, tables, result)
        assert result is not None
        text = format_focused_schema(schema, result, token_budget=token_budget, ddl=art.ddl)
        meta: dict[str, Any] = result.metadata.to_dict()
        chosen = past_queries(art, result.ranking if question else None, examples, text, token_budget)
        if chosen is not None:  # a version without a history answers exactly as before
            section = examples_section(chosen, history_has_placeholders(art))
            if section:
                text = f"{text.rstrip()}\n\n{section}" + ("\n" if text.endswith("\n") else "")
            meta["examples"] = [ex.to_dict() for ex in chosen]
        elif reason := missing_examples_reason(art, examples):
            meta["examples_missing_reason"] = reason
        if result.ranking is not None:  # every ranked table is shown, thinned under a budget
            meta["tables_shown"] = list(result.ranking.tables)
            meta["ranking"] = result.ranking.to_dict()
        else:
            shown = [
                t
                for t in [*result.tables, *result.expanded_tables]
                if t in art.ddl and statement_head(art.ddl[t]) in text
            ]
            meta["tables_shown"] = shown or [*result.tables, *result.expanded_tables]
        meta["token_estimate"] = estimate_tokens(text)
        meta["token_budget"] = token_budget
        return {"database": db, "schema": text, "metadata": meta}

    @staticmethod
    def _pinned(art: Any, tables: list[str], found: RetrievalResult | None) -> RetrievalResult:
        schema = art.schema
        canon, unknown = [], []
        for name in tables:
            t = schema.table(name)
            (canon if t is not None else unknown).append(t.name if t is not None else name)
        if unknown:
            named = ", ".join(
                f"{name!r}{table_hint(name, [t.name for t in schema.tables])}" for name in unknown
            )
            raise InputTooLargeError(
                f"unknown table(s) {named} in database {schema.name!r}; "
                "POST /v1/schema with a question lists the relevant ones"
            )
        canon = list(dict.fromkeys(canon))
        expanded = sorted({n for t in canon for n in schema.neighbours(t)} - set(canon))
        chunks = [sc for sc in (found.chunks if found else []) if sc.chunk.table in canon]
        meta = RetrievalMetadata(
            total_chunks_searched=art.n_chunks if found else 0,
            chunks_returned=len(chunks),
            avg_relevance_score=sum(c.score for c in chunks) / len(chunks) if chunks else 0.0,
            tables_included=canon,
            expanded_tables=expanded,
            artifact_key=art.key,
            top_k=found.metadata.top_k if found else 0,
            relevance_threshold=found.metadata.relevance_threshold if found else 0.0,
            nothing_relevant=False,
        )
        return RetrievalResult("", chunks, canon, expanded, meta, ddl=art.ddl)

    def validate(self, principal: Principal, db: str, sql: str) -> dict[str, Any]:
        from schemarag.app.querygen.sql_validation import validate_sql

        art = self.retriever(principal, db).pin().artifact
        report = validate_sql(sql, art.schema)
        return {"database": db, "artifact_key": art.key, **report.to_dict()}

    def generate(
        self,
        principal: Principal,
        db: str,
        question: str,
        ranking: TableFocus | None = None,
        examples: int | None = None,
    ) -> dict[str, Any]:
        if not llm_configured():
            raise NotConfiguredError(
                f"SQL generation needs an LLM endpoint: set {LLM_SETTING} (and SCHEMARAG_LLM_MODEL) "
                "before starting the server"
            )
        from schemarag.app.querygen.generator import generate
        from schemarag.app.querygen.llm_client import ChatClient
        from schemarag.app.querygen.strategy import StrategyConfig

        try:
            client = ChatClient.from_env()
        except ConfigError as exc:
            raise NotConfiguredError(str(exc)) from None
        pinned = self.retriever(principal, db).pin()
        art = pinned.artifact

        def retrieve(q: str, top_k: int | None, threshold: float | None) -> RetrievalResult:
            extra = ranking.search_kwargs() if ranking is not None else {}
            return pinned.search(q, top_k=top_k, relevance_threshold=threshold, **extra)

        out = generate(
            question,
            art.schema,
            client,
            retrieve=retrieve,
            config=StrategyConfig.from_env(),
            ddl=art.ddl,
            use_retrieval=True if ranking is not None and ranking.requested else None,  # a focus asks for RAG
            artifact=art,
            examples=examples,
        )
        return {"database": db, "artifact_key": art.key, **out}
