"""The schema context of a prompt: full schema, or focused schema from retrieval, with metadata.

Documentation goes into every prompt: a database below the table threshold is sent whole, *and*
followed by the docs retrieved for the question (``docs_included`` says how many fit the
``token_budget``; a doc that defines "overdue" must reach the model on a 3-table database too).
A larger one gets the focused schema (the table ranking every surface serves) with its docs.

DDL comes pre-rendered from the pinned index version (``ddl``, the artifact's
``tables.parquet`` pieces), so a request only joins strings: no SQL parsing per request.
Retrieval is injected as a plain callable ``(question, top_k, threshold) -> RetrievalResult``
(by default the real :class:`schemarag.runtime.search.retriever.Retriever`), so the generator never cares
whether chunks come from a local artifact, a tenant's live index or a service. Any failure or
an empty result falls back to the full schema, is logged, and is recorded as
``fallback_reason`` (QG-RAG-01): a generator that answers from the whole schema beats one that
answers nothing.

Past queries as examples (issue 38, item 4): given the pinned version (``artifact``) and a query
history in it, the ``examples`` best past queries for the question's table ranking
(:mod:`schemarag.runtime.search.history_examples`) go into ``SchemaContext.examples_text``, which
the prompt puts after the schema. They take what the schema leaves of ``token_budget`` (the
schema is never thinned for them), or at most ``EXAMPLES_TOKEN_ALLOWANCE`` without a budget. No
history, no ranking (retrieval off or failed) or ``examples=0``: no examples, and the context,
its metadata and the prompt are exactly what they were before examples existed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from schemarag.app.querygen.strategy import StrategyConfig, StrategyDecision, choose_strategy
from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.core.schema import Database
from schemarag.runtime.search.history_examples import (
    DEFAULT_EXAMPLES,
    EXAMPLES_TOKEN_ALLOWANCE,
    HistoryExample,
    examples_section,
    history_has_placeholders,
    select_examples,
)

log = logging.getLogger(__name__)

RetrieveFn = Callable[[str, "int | None", "float | None"], Any]
FullFormatter = Callable[[Database], str]
FocusedFormatter = Callable[[Database, Any, "int | None"], str]


@dataclass
class SchemaContext:
    """What goes into the prompt and the ``retrieval_metadata`` describing how it was chosen."""

    text: str
    metadata: dict[str, Any]
    decision: StrategyDecision
    result: Any | None = None  # the RetrievalResult when RAG was used
    examples: list[HistoryExample] = field(default_factory=list)  # past queries chosen for the prompt
    examples_text: str = ""  # their prompt section ("" without examples)

    @property
    def strategy(self) -> str:
        return self.metadata["strategy"]


def default_retrieve(
    db: Database,
    artifacts: Any = None,
    tenant: str | None = None,
    table_budget: int | None = None,
    focus: str | None = None,
) -> RetrieveFn:
    """A retrieve callable backed by the published artifact of ``db`` (opened on first use).

    ``table_budget`` switches the focused schema to the budgeted table ranking (the selection
    ``schemarag eval`` measures) instead of retrieved tables plus all FK neighbours; ``focus``
    (``"default"`` or ``"compact"``, see ``Retriever.search``) says what each table shows.
    """

    def retrieve(question: str, top_k: int | None, threshold: float | None) -> Any:
        from schemarag.runtime.search.retriever import Retriever

        retriever = Retriever.open(db.name, artifacts, tenant if tenant is not None else db.tenant)
        return retriever.search(
            question, top_k=top_k, relevance_threshold=threshold, table_budget=table_budget, focus=focus
        )

    return retrieve


def build_context(
    question: str,
    db: Database,
    *,
    retrieve: RetrieveFn | None = None,
    use_retrieval: bool | None = None,
    top_k: int | None = None,
    relevance_threshold: float | None = None,
    config: StrategyConfig | None = None,
    token_budget: int | None = None,
    format_full: FullFormatter | None = None,
    format_focused: FocusedFormatter | None = None,
    ddl: dict[str, Any] | None = None,
    artifact: Any = None,
    examples: int | None = None,
) -> SchemaContext:
    """Choose the strategy for ``db`` and render the schema context (see the module docstring).

    ``ddl``: the pinned index version's pre-rendered DDL pieces for ``db`` (None renders with
    sqlglot, for a schema that has no index). ``artifact``: that pinned version, whose query
    history the ``examples`` past queries come from (None: ``DEFAULT_EXAMPLES``).
    """
    context = _schema_context(
        question, db, retrieve, use_retrieval, top_k, relevance_threshold, config, token_budget,
        format_full, format_focused, ddl,
    )  # fmt: skip
    attach_examples(context, artifact, examples, token_budget)
    return context


def attach_examples(
    context: SchemaContext, artifact: Any, examples: int | None, token_budget: int | None
) -> None:
    """Add the past queries for ``context``'s table ranking (see the module docstring).

    Metadata gains ``examples`` (what was chosen) only when the version has a history and
    examples were wanted; a caller who asked for examples explicitly and got none because there
    is no history or no ranking is told why in ``examples_missing_reason``."""
    ranking = getattr(context.result, "ranking", None)
    chosen = past_queries(artifact, ranking, examples, context.text, token_budget)
    if chosen is None:
        reason = missing_examples_reason(artifact, examples)
        if reason:
            context.metadata["examples_missing_reason"] = reason
        return
    context.examples = chosen
    context.examples_text = examples_section(chosen, history_has_placeholders(artifact))
    context.metadata["examples"] = [ex.to_dict() for ex in chosen]


def past_queries(
    artifact: Any, ranking: Any, examples: int | None, text: str, token_budget: int | None
) -> list[HistoryExample] | None:
    """The past queries to show after ``text`` (the schema context) for ``ranking``, or None when
    examples do not apply: ``examples`` (None: ``DEFAULT_EXAMPLES``) is 0, the version has no
    query history, or there is no table ranking. They get what ``text`` left of
    ``token_budget``, or ``EXAMPLES_TOKEN_ALLOWANCE`` without one (HTTP ``/v1/schema`` and MCP
    ``get_schema`` use this too, so every surface chooses the same examples)."""
    k = DEFAULT_EXAMPLES if examples is None else examples
    history = getattr(artifact, "history", None)
    if k <= 0 or history is None or not history.present or ranking is None:
        return None
    allowance = EXAMPLES_TOKEN_ALLOWANCE
    if token_budget is not None:  # what the schema left of the budget; the schema is never cut
        allowance = token_budget - estimate_tokens(text)
    return select_examples(artifact, ranking, k, max_tokens=max(0, allowance))


def missing_examples_reason(artifact: Any, examples: int | None) -> str | None:
    """Why a caller who asked for ``examples`` explicitly gets none (None: nothing to explain)."""
    if not examples or examples <= 0:
        return None
    if artifact is None:
        return "no index version to read a query history from (schemarag build)"
    history = getattr(artifact, "history", None)
    if history is None or not history.present:
        return "the index has no query history (schemarag import queries, then build)"
    return "examples follow the question's table ranking, and there is none (retrieval was off or failed)"


def _schema_context(
    question: str,
    db: Database,
    retrieve: RetrieveFn | None,
    use_retrieval: bool | None,
    top_k: int | None,
    relevance_threshold: float | None,
    config: StrategyConfig | None,
    token_budget: int | None,
    format_full: FullFormatter | None,
    format_focused: FocusedFormatter | None,
    ddl: dict[str, Any] | None,
) -> SchemaContext:
    """The schema context without examples: the strategy and the schema text it chose."""
    config = config if config is not None else StrategyConfig.from_env()
    decision = choose_strategy(len(db.tables), config, use_retrieval)
    if format_full is None or format_focused is None:
        from schemarag.runtime import formatting

        def full_from_pieces(schema: Database) -> str:
            return formatting.format_full_schema(schema, ddl=ddl)

        format_full = format_full or full_from_pieces
        format_focused = format_focused or formatting.format_focused_schema
    retrieve = retrieve or default_retrieve(db)
    k = top_k if top_k is not None else config.top_k
    threshold = relevance_threshold if relevance_threshold is not None else config.relevance_threshold
    if decision.strategy == "full":
        log.info("query generator: full schema for %s (%s)", db.name, decision.reason)
        # Small enough to send whole, but what the docs say still belongs in the prompt. A
        # caller that turned retrieval off (flag or ENABLE_DOC_RETRIEVAL) gets the schema alone.
        wants_docs = use_retrieval is None and config.enable_doc_retrieval
        if not wants_docs:
            return SchemaContext(format_full(db), _full_metadata(db, decision), decision)
        try:
            found = retrieve(question, k, threshold)
        except Exception as exc:
            log.debug("retrieval failure details", exc_info=True)
            meta = _full_metadata(db, decision)
            meta["docs_missing_reason"] = f"Retrieval failed: {type(exc).__name__}: {exc}"
            return SchemaContext(format_full(db), meta, decision)
        return _full_with_docs(db, decision, found, token_budget, format_full)
    try:
        result = retrieve(question, k, threshold)
        if not result.chunks:
            return _fallback(db, decision, "No relevant documentation found", format_full)
        text = format_focused(db, result, token_budget)
    except Exception as exc:
        log.debug("retrieval failure details", exc_info=True)
        return _fallback(db, decision, f"Retrieval failed: {type(exc).__name__}: {exc}", format_full)
    if use_retrieval is None:
        # RAG exists to shrink the context; when the focused schema (tables + docs) is not
        # smaller than the whole schema, the complete schema with the same docs is the better prompt.
        full_text = format_full(db)
        if estimate_tokens(text) >= estimate_tokens(full_text):
            ctx = _full_with_docs(db, decision, result, token_budget, format_full)
            ctx.metadata["fallback_reason"] = "Focused schema was not smaller than the full schema"
            return ctx
    meta = _rag_metadata(result, decision)
    log.info(
        "query generator: RAG for %s (%s): %d chunks, tables %s, avg relevance %.3f",
        db.name, decision.reason, meta["chunks_retrieved"], meta["tables_included"],
        meta["avg_relevance_score"],
    )  # fmt: skip
    return SchemaContext(text, meta, decision, result)


def _fallback(
    db: Database, decision: StrategyDecision, reason: str, format_full: FullFormatter
) -> SchemaContext:
    log.warning("query generator: RAG for %s fell back to the full schema: %s", db.name, reason)
    meta = _full_metadata(db, decision)
    meta["fallback_reason"] = reason
    return SchemaContext(format_full(db), meta, decision)


def _full_with_docs(
    db: Database,
    decision: StrategyDecision,
    result: Any,
    token_budget: int | None,
    format_full: FullFormatter,
) -> SchemaContext:
    """The whole schema and, after it, the docs retrieved for the question (lowest-scoring dropped
    first under ``token_budget``; the schema is never cut)."""
    from schemarag.runtime import formatting

    schema = format_full(db)
    chunks = sorted(result.chunks, key=lambda sc: (-sc.score, sc.chunk.chunk_id))
    tables = [t.name for t in db.tables]
    text = schema + formatting.docs_section(db, chunks, tables)
    while token_budget is not None and chunks and estimate_tokens(text) > token_budget:
        chunks = chunks[:-1]
        text = schema + formatting.docs_section(db, chunks, tables)
    meta = _full_metadata(db, decision)
    meta["chunks_retrieved"] = len(result.chunks)
    meta["docs_included"] = len(chunks)
    key = getattr(getattr(result, "metadata", None), "artifact_key", None)
    if key:
        meta["artifact_key"] = key
    log.info("query generator: full schema for %s with %d retrieved doc chunk(s)", db.name, len(chunks))
    return SchemaContext(text, meta, decision, result)


def _full_metadata(db: Database, decision: StrategyDecision) -> dict[str, Any]:
    return {
        "strategy": "full",
        "tables_included": [t.name for t in db.tables],
        "strategy_reason": decision.reason,
    }


def _rag_metadata(result: Any, decision: StrategyDecision) -> dict[str, Any]:
    md = getattr(result, "metadata", None)
    # The tables actually rendered into the focused schema: the budgeted ranking when there is
    # one, else retrieved tables then FK neighbours.
    ranking = getattr(result, "ranking", None)
    tables = (
        list(ranking.tables)
        if ranking is not None
        else list(dict.fromkeys([*result.tables, *result.expanded_tables]))
    )
    scores = [float(sc.score) for sc in result.chunks]
    avg = getattr(md, "avg_relevance_score", None)
    avg = float(avg) if avg is not None else (sum(scores) / len(scores) if scores else 0.0)
    meta: dict[str, Any] = {
        "strategy": "rag",
        "tables_included": tables,
        "chunks_retrieved": len(result.chunks),
        "avg_relevance_score": round(avg, 4),
        "retrieved_tables": list(result.tables),
        "expanded_tables": list(result.expanded_tables),
        "strategy_reason": decision.reason,
    }
    if ranking is not None:  # what each table shows, and the size cap of the "compact" focus
        meta["focus"] = ranking.focus
        meta["focus_token_budget"] = ranking.token_budget
        meta["adaptive_table_budget"] = ranking.adaptive
    key = getattr(md, "artifact_key", None)
    if key:
        meta["artifact_key"] = key
    return meta
