"""Question -> validated SQL: strategy, schema context, prompt, model, validation, one repair.

The model's SQL is never trusted: it is validated against the authoritative schema and, when it
fails, sent back once with the exact errors (a second failure is reported, not hidden).
Confidence starts from the model's own estimate and is only ever lowered: to ``low`` when the
SQL is still invalid, to at most ``medium`` after a repair or when validation was *unchecked*,
and one level when the retrieved context had an average relevance under 0.4 (QG-RAG-03).

An *unchecked* result (``validation.valid`` null: no error found, but DuckDB could not bind the
query, see :mod:`.sql_validation`) is reported as not validated, never as valid, and gets no
repair round-trip: a repair sends the model the errors to fix, and there are none; the reason is
a limit of the checker (a dialect or function DuckDB cannot emulate), so asking the model to
rewrite the SQL would trade it for other SQL no better verified.

Token counts are estimates (``schemarag.runtime.artifact.chunk_model.estimate_tokens``,
~4 characters per token),
the same estimator the retriever's budget uses, so full and focused prompts compare fairly.

Example (no model needed):
    >>> from schemarag.app.querygen.strategy import StrategyConfig
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "s", "tables": [
    ...     {"name": "users", "columns": [{"name": "id", "type": "INTEGER"}]}]})
    >>> p = prepare_prompt("How many users?", db, config=StrategyConfig())
    >>> p.metadata["strategy"], p.messages[1]["content"].count("CREATE TABLE")
    ('full', 1)
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from schemarag.app.querygen.context import SchemaContext, build_context
from schemarag.app.querygen.llm_client import ChatClient
from schemarag.app.querygen.prompt import build_messages, build_repair_messages
from schemarag.app.querygen.sql_validation import ValidationReport, validate_sql
from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.core.errors import LLMError, QuestionError
from schemarag.runtime.core.schema import Database

log = logging.getLogger(__name__)

LOW_RELEVANCE = 0.4
LEVELS = ("low", "medium", "high")
TOKEN_ESTIMATOR = "chars/4"


@dataclass
class PreparedPrompt:
    """The exact messages for the model, plus how the schema context was chosen."""

    messages: list[dict[str, str]]
    context: SchemaContext
    usage: dict[str, Any]

    @property
    def metadata(self) -> dict[str, Any]:
        return self.context.metadata

    def to_dict(self) -> dict[str, Any]:
        return {"messages": self.messages, "retrieval_metadata": self.metadata, "usage": self.usage}


def prepare_prompt(question: str, db: Database, **context_options: Any) -> PreparedPrompt:
    """Build the messages for ``question``; ``context_options`` go to :func:`build_context`."""
    if not question or not question.strip():
        raise QuestionError("the question is empty; pass a natural-language question")
    context = build_context(question, db, **context_options)
    messages = build_messages(question, context.text, db.dialect, db.name, context.examples_text)
    usage = {
        "prompt_tokens": sum(estimate_tokens(m["content"]) for m in messages),
        "schema_tokens": estimate_tokens(context.text),
        "token_estimator": TOKEN_ESTIMATOR,
    }
    if context.examples_text:  # only then: a prompt without examples reports what it always did
        usage["examples_tokens"] = estimate_tokens(context.examples_text)
    return PreparedPrompt(messages, context, usage)


def generate(question: str, db: Database, client: ChatClient, **context_options: Any) -> dict[str, Any]:
    """Generate SQL for ``question``; returns the query-generator spec's output, snake_case keys
    (the same as HTTP and MCP).

    Raises :class:`LLMError` when the endpoint fails or its first answer is not the JSON asked for.
    """
    prepared = prepare_prompt(question, db, **context_options)
    answer, response = client.complete_json(prepared.messages)
    llm_usage = dict(response.usage)
    report = validate_sql(answer["query"], db)
    initial_errors: list[str] = []
    repaired = False
    if report.valid is False:  # unchecked (None) has no errors to repair; see the module docstring
        initial_errors = list(report.errors)
        log.info("query generator: SQL failed validation, asking for one repair: %s", report.errors)
        repair = build_repair_messages(prepared.messages, response.content, report.errors, db.dialect)
        try:
            fixed, response2 = client.complete_json(repair)
        except LLMError as exc:
            report.errors.append(f"repair attempt failed: {exc}")
        else:
            for k, v in response2.usage.items():
                llm_usage[k] = llm_usage.get(k, 0) + v
            answer, report, repaired = fixed, validate_sql(fixed["query"], db), True
    confidence, factors = compute_confidence(
        answer.get("confidence"), report, repaired, prepared.context.metadata
    )
    usage = dict(prepared.usage)
    if llm_usage.get("prompt_tokens") is not None:
        usage["llm_prompt_tokens"] = llm_usage["prompt_tokens"]
    if llm_usage.get("completion_tokens") is not None:
        usage["llm_completion_tokens"] = llm_usage["completion_tokens"]
    validation: dict[str, Any] = {
        "valid": report.valid,
        "errors": report.errors,
        "warnings": report.warnings,
        "bind_checked": report.bind_checked,
        "unchecked_reason": report.unchecked_reason,
        "repaired": repaired,
    }
    if initial_errors:
        validation["initial_errors"] = initial_errors
    return {
        "query": answer["query"].strip(),
        "explanation": str(answer.get("explanation") or ""),
        "confidence": confidence,
        "confidence_factors": factors,
        "tables_used": report.tables or _str_list(answer.get("tables_used")),
        "assumptions": _str_list(answer.get("assumptions")),
        "retrieval_metadata": prepared.context.metadata,
        "validation": validation,
        "usage": usage,
    }


def compute_confidence(
    model_confidence: Any, report: ValidationReport, repaired: bool, metadata: dict[str, Any]
) -> tuple[str, list[str]]:
    """The final confidence level and the reasons it was lowered (see the module docstring)."""
    factors: list[str] = []
    level = str(model_confidence).lower() if model_confidence is not None else ""
    if level not in LEVELS:
        level = "medium"
        factors.append("model gave no valid confidence; assumed medium")
    if report.valid is False:
        return "low", [*factors, "SQL failed validation"]
    rank = LEVELS.index(level)
    if repaired and rank > 1:
        rank = 1
        factors.append("SQL needed a repair round-trip")
    if report.valid is None:
        rank = min(rank, 1)
        factors.append(f"SQL not validated (unchecked: {report.unchecked_reason})")
    avg = metadata.get("avg_relevance_score")
    if metadata.get("strategy") == "rag" and avg is not None and avg < LOW_RELEVANCE:
        rank = max(0, rank - 1)
        factors.append(f"low retrieval relevance (avg {avg:.2f} < {LOW_RELEVANCE})")
    return LEVELS[rank], factors


def _str_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []
