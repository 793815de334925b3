"""The JSON documents of ``generate --json`` (prompt-only and with a model) and ``validate --json``:
exact key sets, all snake_case, the same names the HTTP API and MCP tools use."""

from __future__ import annotations

import json
from pathlib import Path

from json_shape import field_names, not_snake_case

from schemarag.cli import main

VALIDATION = {"valid", "errors", "warnings", "bind_checked", "unchecked_reason", "repaired"}
GENERATED = {
    "query", "explanation", "confidence", "confidence_factors", "tables_used", "assumptions",
    "retrieval_metadata", "validation", "usage",
}  # fmt: skip
USAGE = {"prompt_tokens", "schema_tokens", "token_estimator"}
REPORT = {"database", "tenant", "dialect", "valid", "errors", "warnings", "tables", "bind_checked",
          "unchecked_reason"}  # fmt: skip


def _cli(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


def test_generate_prompt_only_keys(tiny: tuple[Path, Path], capsys) -> None:
    data, artifacts = tiny
    code, doc = _cli(capsys, "generate", "--data", str(data), "--artifacts", str(artifacts), "--db", "shop",
                     "--prompt-only", "--json", "orders of gold-tier customers")  # fmt: skip
    assert code == 0
    assert set(doc) == {"messages", "retrieval_metadata", "usage"}
    assert set(doc["usage"]) == USAGE
    assert {"strategy", "tables_included", "strategy_reason"} <= set(doc["retrieval_metadata"])
    assert not_snake_case(doc) == []


def test_generate_keys_with_a_model(tiny: tuple[Path, Path], capsys, llm_server, monkeypatch) -> None:
    data, artifacts = tiny
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    llm_server.answer_sql("SELECT COUNT(*) FROM orders", "high")
    code, doc = _cli(capsys, "generate", "--data", str(data), "--artifacts", str(artifacts), "--db", "shop",
                     "--json", "How many orders?")  # fmt: skip
    assert code == 0
    assert set(doc) == GENERATED
    assert set(doc["validation"]) == VALIDATION
    assert set(doc["usage"]) == USAGE | {"llm_prompt_tokens", "llm_completion_tokens"}
    assert not_snake_case(doc) == []


def test_generate_keys_after_a_repair(tiny: tuple[Path, Path], capsys, llm_server, monkeypatch) -> None:
    data, artifacts = tiny
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    llm_server.answer_sql("SELECT nope FROM orders").answer_sql("SELECT id FROM orders")
    code, doc = _cli(capsys, "generate", "--data", str(data), "--artifacts", str(artifacts), "--db", "shop",
                     "--json", "order ids")  # fmt: skip
    assert code == 0 and doc["validation"]["repaired"] is True
    assert set(doc["validation"]) == VALIDATION | {"initial_errors"}
    assert not_snake_case(doc) == []


def test_validate_keys(tiny: tuple[Path, Path], capsys) -> None:
    data, artifacts = tiny
    for sql in ("SELECT id FROM orders", "SELECT nope FROM orders", "SELECT * FROM orders WHERE id = $1"):
        _, doc = _cli(capsys, "validate", "--data", str(data), "--artifacts", str(artifacts), "--db", "shop",
                      "--json", sql)  # fmt: skip
        assert set(doc) == REPORT, sql
        assert not_snake_case(doc) == [], sql


def test_the_checker_sees_nested_camel_case() -> None:
    doc = {"ok_key": [{"inner": {"badKey": 1}}], "timings_ms": {"AnyName": 1.0}}
    assert not_snake_case(doc) == ["ok_key[].inner.badKey"]
    assert "timings_ms.AnyName" not in field_names(doc)
