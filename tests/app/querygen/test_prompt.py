"""The prompt: research-grounded system text, dialect named, JSON answer, deterministic."""

from __future__ import annotations

from schemarag.app.querygen.prompt import build_messages, build_repair_messages, system_prompt
from schemarag.runtime.formatting import format_full_schema


def test_messages_hold_system_prompt_schema_and_question(shop) -> None:
    schema = format_full_schema(shop)
    msgs = build_messages("Total revenue per user?", schema, shop.dialect, shop.name)
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert schema.strip() in user
    assert user.endswith("Question: Total revenue per user?")
    assert "Database: shop" in user and "Dialect: SQLite" in user
    assert user.count("CREATE TABLE") == 3


def test_system_prompt_names_dialect_and_json_answer() -> None:
    text = system_prompt("postgres")
    assert "PostgreSQL" in text
    assert "CREATE TABLE" in text
    for key in ('"query"', '"explanation"', '"confidence"', '"tables_used"', '"assumptions"'):
        assert key in text
    assert "read-only" in text and "foreign keys" in text


def test_unknown_dialect_is_shown_verbatim() -> None:
    assert "exotic SQL" in system_prompt("exotic")


def test_deterministic_for_the_same_inputs(shop) -> None:
    schema = format_full_schema(shop)
    first = build_messages("q?", schema, "sqlite", "shop")
    second = build_messages("q?", format_full_schema(shop), "sqlite", "shop")
    assert first == second
    assert build_messages("other?", schema, "sqlite", "shop") != first


def test_repair_messages_carry_previous_answer_and_exact_errors() -> None:
    base = build_messages("q?", "CREATE TABLE t (id INT);", "duckdb")
    errors = ["unknown column 'nme'; did you mean t.name?"]
    repair = build_repair_messages(base, '{"query": "SELECT nme FROM t"}', errors, "duckdb")
    assert repair[:2] == base
    assert repair[2] == {"role": "assistant", "content": '{"query": "SELECT nme FROM t"}'}
    assert repair[3]["role"] == "user"
    assert "- unknown column 'nme'; did you mean t.name?" in repair[3]["content"]
    assert "DuckDB" in repair[3]["content"]
