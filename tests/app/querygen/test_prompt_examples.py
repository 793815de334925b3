"""Past queries in the prompt (issue 38, item 4): ``prepare_prompt`` and ``schemarag generate --examples``.

Real indexes of the sample ``ecommerce`` database, built without and with an imported query
history (``tests/history_support.py``); the model is the real local chat server of this folder's
conftest. Without a history, or with ``--examples 0``, every prompt is byte-identical to one built
before examples existed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from history_support import DB, SPEND, HistoryIndexes, build_history_indexes

from schemarag.app.querygen.generator import prepare_prompt
from schemarag.app.querygen.prompt import build_messages
from schemarag.app.querygen.strategy import StrategyConfig
from schemarag.cli import main
from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.search.history_examples import DEFAULT_EXAMPLES, SECTION_TITLE
from schemarag.runtime.search.retriever import Retriever

ENV_VARS = ("ENABLE_DOC_RETRIEVAL", "RETRIEVAL_TABLE_THRESHOLD", "DOC_RETRIEVAL_TOP_K",
            "DOC_RELEVANCE_THRESHOLD", "SCHEMARAG_LLM_BASE_URL", "SCHEMARAG_LLM_MODEL",
            "SCHEMARAG_LLM_API_KEY")  # fmt: skip


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> HistoryIndexes:
    return build_history_indexes(tmp_path_factory.mktemp("prompt_examples"))


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def _prompt(artifacts, question: str = SPEND, with_artifact: bool = True, **options: Any):
    """``prepare_prompt`` as ``generate`` calls it on the pinned version of ``artifacts``."""
    pinned = Retriever.open(DB, artifacts=artifacts).pin()

    def retrieve(q: str, top_k: int | None, threshold: float | None):
        return pinned.search(q, top_k=top_k, relevance_threshold=threshold)

    extra = {"artifact": pinned.artifact} if with_artifact else {}
    return prepare_prompt(question, pinned.schema, retrieve=retrieve, config=StrategyConfig(),
                          ddl=pinned.ddl, **extra, **options)  # fmt: skip


def test_build_messages_without_examples_is_todays_message() -> None:
    today = build_messages("How many users?", "CREATE TABLE users (id INT);", "sqlite", "s")
    assert build_messages("How many users?", "CREATE TABLE users (id INT);", "sqlite", "s", "") == today
    assert today[1]["content"] == (
        "Database: s\nDialect: SQLite\n\nCREATE TABLE users (id INT);\n\nQuestion: How many users?"
    )
    with_examples = build_messages("How many users?", "CREATE TABLE users (id INT);", "sqlite", "s", "EX")
    assert with_examples[1]["content"] == (
        "Database: s\nDialect: SQLite\n\nCREATE TABLE users (id INT);\n\nEX\n\nQuestion: How many users?"
    )
    assert with_examples[0] == today[0], "the system prompt does not change"


def test_examples_sit_between_the_schema_and_the_question(indexes: HistoryIndexes) -> None:
    prompt = _prompt(indexes.artifacts, examples=2)
    user = prompt.messages[1]["content"]
    schema_end = user.index(prompt.context.text.strip()) + len(prompt.context.text.strip())
    section = user.index(SECTION_TITLE)
    assert schema_end < section < user.index(f"Question: {SPEND}")
    assert user.endswith(f"{prompt.context.examples_text}\n\nQuestion: {SPEND}")
    chosen = prompt.metadata["examples"]
    assert [e["tables"] for e in chosen] == [["orders", "users"], ["orders", "users"]]
    assert f"-- question: {SPEND}\nSELECT" in user
    assert prompt.usage["examples_tokens"] == estimate_tokens(prompt.context.examples_text)
    plain = _prompt(indexes.artifacts, examples=0)
    assert prompt.usage["prompt_tokens"] > plain.usage["prompt_tokens"]
    default = _prompt(indexes.artifacts)
    assert len(default.metadata["examples"]) == DEFAULT_EXAMPLES


def test_no_history_or_zero_examples_leave_the_prompt_byte_identical(indexes: HistoryIndexes) -> None:
    for artifacts in (indexes.plain, indexes.artifacts):
        today = _prompt(artifacts, with_artifact=False)
        assert "examples" not in today.metadata and "examples_tokens" not in today.usage
        assert SECTION_TITLE not in today.messages[1]["content"]
        off = _prompt(artifacts, examples=0)
        assert off.to_dict() == today.to_dict()
    no_history = _prompt(indexes.plain)  # the default asks for examples; there is no history
    assert no_history.to_dict() == _prompt(indexes.plain, with_artifact=False).to_dict()
    asked = _prompt(indexes.plain, examples=3)
    assert asked.messages == no_history.messages
    assert asked.metadata.pop("examples_missing_reason").startswith("the index has no query history")
    assert asked.to_dict() == no_history.to_dict()


def test_examples_only_take_what_the_token_budget_leaves(indexes: HistoryIndexes) -> None:
    roomy = _prompt(indexes.artifacts, examples=2, token_budget=100_000)
    assert len(roomy.metadata["examples"]) == 2
    schema_tokens = roomy.usage["schema_tokens"]
    tight = _prompt(indexes.artifacts, examples=2, token_budget=schema_tokens)
    assert tight.metadata["examples"] == [] and SECTION_TITLE not in tight.messages[1]["content"]
    assert tight.context.text == roomy.context.text, "the schema is never cut for examples"
    one = roomy.metadata["examples"][0]["tokens"]
    room = _prompt(indexes.artifacts, examples=2, token_budget=schema_tokens + one)
    assert sum(e["tokens"] for e in room.metadata["examples"]) <= one


def test_retrieval_off_has_no_ranking_and_says_so(indexes: HistoryIndexes) -> None:
    off = _prompt(indexes.artifacts, examples=2, use_retrieval=False)
    assert SECTION_TITLE not in off.messages[1]["content"]
    assert "table ranking" in off.metadata["examples_missing_reason"]


def _cli(capsys, indexes: HistoryIndexes, artifacts, *argv: str) -> tuple[int, str, str]:
    code = main(["generate", "--data", str(indexes.data), "--artifacts", str(artifacts), "--db", DB, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_generate_cli_examples_flag(indexes: HistoryIndexes, capsys) -> None:
    code, out, _ = _cli(
        capsys, indexes, indexes.artifacts, SPEND, "--prompt-only", "--json", "--examples", "1"
    )
    data = json.loads(out)
    assert code == 0 and len(data["retrieval_metadata"]["examples"]) == 1
    assert SECTION_TITLE in data["messages"][1]["content"] and data["usage"]["examples_tokens"] > 0
    code, out, _ = _cli(
        capsys, indexes, indexes.artifacts, SPEND, "--prompt-only", "--json", "--examples", "0"
    )
    assert code == 0 and SECTION_TITLE not in json.loads(out)["messages"][1]["content"]
    code, plain_default, _ = _cli(capsys, indexes, indexes.plain, SPEND, "--prompt-only", "--json")
    _, plain_zero, _ = _cli(
        capsys, indexes, indexes.plain, SPEND, "--prompt-only", "--json", "--examples", "0"
    )
    assert code == 0 and plain_default == plain_zero, "no history: the default output is today's"
    code, _, err = _cli(capsys, indexes, indexes.artifacts, SPEND, "--prompt-only", "--examples", "-1")
    assert code == 2 and "--examples -1" in err


def test_generate_cli_sends_the_examples_to_the_model(
    indexes: HistoryIndexes, capsys, llm_server, monkeypatch
) -> None:
    monkeypatch.setenv("SCHEMARAG_LLM_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("SCHEMARAG_LLM_MODEL", "scripted")
    sql = "SELECT u.full_name, SUM(o.total_amount) FROM orders o JOIN users u ON o.user_id = u.id GROUP BY 1"
    llm_server.answer_sql(sql, "high")
    code, out, _ = _cli(capsys, indexes, indexes.artifacts, SPEND, "--examples", "2")
    assert code == 0, out
    sent = llm_server.requests[0].body["messages"][1]["content"]
    assert SECTION_TITLE in sent and sent.index(SECTION_TITLE) < sent.index("Question:")
    assert "2 past queries" in out
