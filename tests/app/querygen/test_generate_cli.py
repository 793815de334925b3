"""``schemarag generate`` through the real CLI entry point, with a real local LLM server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schemarag.cli import main

ENV_VARS = ("ENABLE_DOC_RETRIEVAL", "RETRIEVAL_TABLE_THRESHOLD", "DOC_RETRIEVAL_TOP_K",
            "DOC_RELEVANCE_THRESHOLD", "SCHEMARAG_LLM_BASE_URL", "SCHEMARAG_LLM_MODEL",
            "SCHEMARAG_LLM_API_KEY", "SCHEMARAG_LLM_JSON_MODE",
            "SCHEMARAG_LLM_TIMEOUT", "SCHEMARAG_LLM_MAX_RETRIES")  # fmt: skip


@pytest.fixture
def dirs(tmp_path: Path, shop, monkeypatch) -> list[str]:
    """A data dir holding shop.json, an empty artifacts dir, and a clean environment."""
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "data"
    data.mkdir()
    (data / "shop.json").write_text(shop.model_dump_json())
    (tmp_path / "artifacts").mkdir()
    return ["--data", str(data), "--artifacts", str(tmp_path / "artifacts")]


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["generate", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prompt_only_json_needs_no_llm(dirs, capsys) -> None:
    code, out, _ = run_cli(capsys, *dirs, "--db", "shop", "How many orders?", "--prompt-only", "--json")
    assert code == 0
    data = json.loads(out)
    assert [m["role"] for m in data["messages"]] == ["system", "user"]
    assert data["messages"][1]["content"].endswith("Question: How many orders?")
    assert data["retrieval_metadata"]["strategy"] == "full"
    assert data["retrieval_metadata"]["tables_included"] == ["users", "orders", "Order Items"]
    assert data["usage"]["prompt_tokens"] > data["usage"]["schema_tokens"] > 0


def test_prompt_only_text(dirs, capsys) -> None:
    code, out, _ = run_cli(capsys, *dirs, "--db", "shop", "How many orders?", "--prompt-only")
    assert code == 0
    assert (
        "===== system =====" in out and "===== user =====" in out and "===== retrieval_metadata =====" in out
    )
    user_part = out.split("===== user =====", 1)[1].split("===== retrieval_metadata =====", 1)[0]
    assert user_part.count("CREATE TABLE") == 3  # one per table of shop


def test_forced_rag_without_an_index_falls_back_with_reason(dirs, capsys) -> None:
    code, out, _ = run_cli(capsys, *dirs, "--db", "shop", "q?", "--prompt-only", "--json", "--use-retrieval")
    meta = json.loads(out)["retrieval_metadata"]
    assert code == 0 and meta["strategy"] == "full"
    assert meta["fallback_reason"].startswith("Retrieval failed: ArtifactNotFoundError")


def test_without_base_url_says_to_set_it_or_use_prompt_only(dirs, capsys) -> None:
    code, _, err = run_cli(capsys, *dirs, "--db", "shop", "How many orders?")
    assert code == 2
    assert "SCHEMARAG_LLM_BASE_URL is not set" in err and "--prompt-only" in err


def test_generate_json_against_local_llm(dirs, capsys, llm_server, monkeypatch) -> None:
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    monkeypatch.setenv("SCHEMARAG_LLM_API_KEY", "sk-cli-secret-key")
    llm_server.answer_sql("SELECT COUNT(*) FROM orders", "high")
    code, out, err = run_cli(capsys, *dirs, "--db", "shop", "How many orders?", "--json", "--no-retrieval")
    data: dict[str, Any] = json.loads(out)
    assert code == 0
    assert data["query"] == "SELECT COUNT(*) FROM orders"
    assert data["validation"]["valid"] and data["tables_used"] == ["orders"]
    assert llm_server.requests[0].headers["Authorization"] == "Bearer sk-cli-secret-key"
    assert "sk-cli-secret-key" not in out + err


def test_generate_text_reports_failed_validation_with_exit_1(dirs, capsys, llm_server, monkeypatch) -> None:
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    llm_server.answer_sql("DROP TABLE orders").answer_sql("DROP TABLE orders")
    code, out, _ = run_cli(capsys, *dirs, "--db", "shop", "Remove orders")
    assert code == 1
    assert "-- validation: FAILED" in out and "not read-only: DROP statement" in out
    assert "-- confidence: low" in out


def test_generate_reports_unchecked_sql_with_exit_3(dirs, capsys, llm_server, monkeypatch) -> None:
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    llm_server.answer_sql("SELECT total(total) FROM orders", "high")  # SQLite's total(): not in DuckDB
    code, out, _ = run_cli(capsys, *dirs, "--db", "shop", "Sum of all orders", "--no-retrieval")
    assert code == 3  # the exit codes of `schemarag validate`: unchecked is not validated
    assert "-- validation: UNCHECKED, not validated (DuckDB could not bind the query: " in out
    assert "-- confidence: medium (SQL not validated (unchecked: " in out


def test_llm_error_is_one_line_exit_2(dirs, capsys, llm_server, monkeypatch) -> None:
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    llm_server.answer("not json at all")
    code, _, err = run_cli(capsys, *dirs, "--db", "shop", "q?")
    assert code == 2 and err.startswith(
        "schemarag generate: error: the model's answer is not the expected JSON"
    )


@pytest.mark.parametrize(
    ("extra", "fragment"), [(["--threshold", "2"], "--threshold 2.0"), (["--top-k", "0"], "--top-k 0")]
)
def test_bad_options(dirs, capsys, extra: list[str], fragment: str) -> None:
    code, _, err = run_cli(capsys, *dirs, "--db", "shop", "q?", "--prompt-only", *extra)
    assert code == 2 and fragment in err


def test_retrieval_flags_are_exclusive(dirs, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["generate", *dirs, "--db", "shop", "q?", "--use-retrieval", "--no-retrieval"])
    assert info.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_unknown_database_names_both_sources(dirs, capsys) -> None:
    code, _, err = run_cli(capsys, *dirs, "--db", "nosuch", "q?", "--prompt-only")
    assert code == 2
    assert "no index for 'nosuch'" in err and "no schema file" in err and "nosuch.json" in err
    assert "known databases: shop" in err  # the fix: a name that exists


def test_generate_with_compact_focus_sends_the_capped_schema(
    built_artifacts: Path, capsys, llm_server, monkeypatch
) -> None:
    """--focus compact: the model gets every ranked table within 30 % of the full schema."""
    from schemarag.runtime.formatting import estimate_tokens

    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    llm_server.answer_sql("SELECT name FROM plans", "high")
    samples = Path(__file__).resolve().parents[3] / "data" / "schemas"
    base = ["--data", str(samples), "--artifacts", str(built_artifacts), "--db", "b2b_saas", "--json"]
    question = "Which plans have the most churned subscriptions?"
    code, out, _ = run_cli(capsys, *base, "--focus", "compact", question)
    assert code == 0
    meta = json.loads(out)["retrieval_metadata"]
    assert meta["strategy"] == "rag" and meta["focus"] == "compact" and len(meta["tables_included"]) == 15
    schema = llm_server.requests[0].body["messages"][1]["content"]
    for table in meta["tables_included"]:  # thinned or not, every ranked table reaches the model
        assert f"CREATE TABLE {table} (" in schema or f"-- table {table}:" in schema
    code, full, _ = run_cli(capsys, *base, "--no-retrieval", "--prompt-only", question)
    full_schema = json.loads(full)["messages"][1]["content"]
    assert estimate_tokens(schema) <= 0.3 * estimate_tokens(full_schema) + 50  # + the question text


def test_a_focus_asks_for_retrieval_even_on_a_small_database(
    built_artifacts: Path, capsys, monkeypatch
) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    samples = Path(__file__).resolve().parents[3] / "data" / "schemas"
    base = ["--data", str(samples), "--artifacts", str(built_artifacts), "--db", "ecommerce", "--prompt-only"]
    code, out, _ = run_cli(capsys, *base, "--json", "orders last month")
    assert code == 0 and json.loads(out)["retrieval_metadata"]["strategy"] == "full"  # 3 tables: all of it
    code, out, _ = run_cli(capsys, *base, "--json", "--adaptive", "orders last month")
    meta = json.loads(out)["retrieval_metadata"]
    assert code == 0 and meta["strategy"] == "rag" and meta["adaptive_table_budget"] is True
    code, _, err = run_cli(capsys, *base, "--no-retrieval", "--focus", "compact", "orders last month")
    assert code == 2 and "drop --no-retrieval" in err
