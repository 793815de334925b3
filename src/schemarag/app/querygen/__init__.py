"""Query generation: question -> focused or full schema prompt -> model -> validated SQL.

Heavy libraries (sqlglot, duckdb) are imported lazily inside the functions that need them, so
importing this package is cheap. Public API:

- :func:`generate` / :func:`prepare_prompt` (``generator``)
- :class:`StrategyConfig`, :func:`choose_strategy` (``strategy``)
- :func:`build_messages`, :func:`system_prompt` (``prompt``)
- :class:`ChatClient` (``llm_client``)
- :func:`validate_sql`, :class:`ValidationReport` (``sql_validation``); :class:`CommentPolicy`
  (``comment_policy``: the optimizer hints a deployment allows)
"""

from __future__ import annotations

from schemarag.app.querygen.comment_policy import CommentPolicy
from schemarag.app.querygen.context import SchemaContext, build_context
from schemarag.app.querygen.generator import PreparedPrompt, compute_confidence, generate, prepare_prompt
from schemarag.app.querygen.llm_client import ChatClient, ChatResponse, parse_json_answer
from schemarag.app.querygen.prompt import build_messages, build_repair_messages, system_prompt
from schemarag.app.querygen.sql_validation import ValidationReport, validate_sql
from schemarag.app.querygen.strategy import StrategyConfig, StrategyDecision, choose_strategy

__all__ = [
    "ChatClient", "ChatResponse", "CommentPolicy", "PreparedPrompt", "SchemaContext", "StrategyConfig",
    "StrategyDecision", "ValidationReport", "build_context", "build_messages", "build_repair_messages",
    "choose_strategy", "compute_confidence", "generate", "parse_json_answer", "prepare_prompt",
    "system_prompt", "validate_sql",
]  # fmt: skip
