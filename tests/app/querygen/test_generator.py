"""The generator end to end: strategy, context, prompt, LLM (real local server), validation."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from schemarag.app.querygen.context import default_retrieve
from schemarag.app.querygen.generator import generate, prepare_prompt
from schemarag.app.querygen.llm_client import ChatClient
from schemarag.app.querygen.strategy import StrategyConfig
from schemarag.runtime.artifact.chunk_model import Chunk, make_chunk_id
from schemarag.runtime.core.errors import ArtifactNotFoundError, LLMError, QuestionError
from schemarag.runtime.core.schema import Database
from schemarag.runtime.search.results import RetrievalMetadata, RetrievalResult, ScoredChunk

QUESTION = "What is the total of orders per user?"


def result_for(db: Database, scored: dict[str, float], expanded: list[str] | None = None) -> RetrievalResult:
    """A retrieval result with one overview chunk per table in ``scored`` (rank order)."""
    chunks = []
    for table, score in scored.items():
        text = f"{table} documentation: what one row of {table} means."
        cid = make_chunk_id(db.name, table, "overview", None, text)
        chunk = Chunk(cid, db.name, table, "overview", None, text, title=f"{table} overview")
        chunks.append(ScoredChunk(chunk, score))
    tables = list(scored)
    expanded = (
        expanded
        if expanded is not None
        else sorted({n for t in tables for n in db.neighbours(t)} - set(tables))
    )
    avg = sum(scored.values()) / len(scored) if scored else 0.0
    meta = RetrievalMetadata(
        len(chunks) * 10, len(chunks), avg, tables, expanded, "key123", 5, 0.3, not chunks
    )
    return RetrievalResult(QUESTION, chunks, tables, expanded, meta)


class Recorder:
    """A retrieve callable that records its calls and returns (or raises) what it was given."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.calls: list[tuple[str, Any, Any]] = []

    def __call__(self, question: str, top_k: Any, threshold: Any) -> RetrievalResult:
        self.calls.append((question, top_k, threshold))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def created_tables(prompt_text: str) -> list[str]:
    """Table names of the CREATE TABLE statements in a prompt, in order, unquoted."""
    found = re.findall(r"^CREATE TABLE (.+) \($", prompt_text, flags=re.MULTILINE)
    return [name.strip('"`') for name in found]


# --- strategy scenarios (QG-RAG-01, QG-RAG-04) ---------------------------------------------


def test_25_tables_with_rag_enabled_retrieves_focused_context(make_db) -> None:
    db = make_db(25)
    retrieve = Recorder(result_for(db, {"t12": 0.9, "t13": 0.7}))
    cfg = StrategyConfig.from_env({"ENABLE_DOC_RETRIEVAL": "true", "DOC_RETRIEVAL_TOP_K": "6"})
    p = prepare_prompt(QUESTION, db, retrieve=retrieve, config=cfg)
    assert retrieve.calls == [(QUESTION, 6, None)]
    assert p.metadata == {
        "strategy": "rag", "tables_included": ["t12", "t13", "t11", "t14"], "chunks_retrieved": 2,
        "avg_relevance_score": 0.8, "retrieved_tables": ["t12", "t13"], "expanded_tables": ["t11", "t14"],
        "strategy_reason": "25 tables >= RETRIEVAL_TABLE_THRESHOLD 10", "artifact_key": "key123",
    }  # fmt: skip
    assert created_tables(p.messages[1]["content"]) == ["t12", "t13", "t11", "t14"]
    full = prepare_prompt(QUESTION, db, retrieve=retrieve, config=cfg, use_retrieval=False)
    assert p.usage["prompt_tokens"] < full.usage["prompt_tokens"] / 2
    assert p.usage["schema_tokens"] < p.usage["prompt_tokens"]


def test_5_tables_use_full_schema_with_the_retrieved_docs(make_db) -> None:
    """Small enough to send whole, but the docs for the question still go in (issue 26)."""
    db = make_db(5)
    retrieve = Recorder(result_for(db, {"t3": 0.8, "t1": 0.5}))
    p = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig())
    assert retrieve.calls == [(QUESTION, None, None)]
    assert p.metadata == {"strategy": "full", "tables_included": ["t1", "t2", "t3", "t4", "t5"],
                          "strategy_reason": "5 tables < RETRIEVAL_TABLE_THRESHOLD 10",
                          "chunks_retrieved": 2, "docs_included": 2, "artifact_key": "key123"}  # fmt: skip
    user = p.messages[1]["content"]
    assert created_tables(user) == ["t1", "t2", "t3", "t4", "t5"]
    docs = user.split("-- Retrieved documentation", 1)[1]
    assert docs.index("t1 documentation") < docs.index("t3 documentation")  # tables in schema order


def test_small_database_docs_respect_the_token_budget_never_the_schema(make_db) -> None:
    db = make_db(5)
    retrieve = Recorder(result_for(db, {"t3": 0.8, "t1": 0.5}))
    whole = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig())
    schema_only = prepare_prompt(
        QUESTION, db, retrieve=retrieve, config=StrategyConfig(), use_retrieval=False
    )
    budget = schema_only.usage["schema_tokens"] + 35  # room for one short doc, not two
    tight = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig(), token_budget=budget)
    assert tight.metadata["docs_included"] == 1 and whole.metadata["docs_included"] == 2
    assert "t3 documentation" in tight.context.text and "t1 documentation" not in tight.context.text
    none = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig(), token_budget=10)
    assert none.metadata["docs_included"] == 0
    assert created_tables(none.context.text) == ["t1", "t2", "t3", "t4", "t5"]
    assert "docs_included" not in schema_only.metadata  # --no-retrieval: the schema alone


def test_small_database_without_an_index_sends_the_schema_and_says_why(make_db) -> None:
    retrieve = Recorder(ArtifactNotFoundError("artifacts/synthetic: no published index"))
    p = prepare_prompt(QUESTION, make_db(5), retrieve=retrieve, config=StrategyConfig())
    assert p.metadata["strategy"] == "full" and len(created_tables(p.context.text)) == 5
    assert p.metadata["docs_missing_reason"].startswith("Retrieval failed: ArtifactNotFoundError")


def test_disabled_retrieval_uses_full_schema_for_a_large_database(make_db) -> None:
    retrieve = Recorder(AssertionError("must not be called"))
    cfg = StrategyConfig.from_env({"ENABLE_DOC_RETRIEVAL": "false"})
    p = prepare_prompt(QUESTION, make_db(25), retrieve=retrieve, config=cfg)
    assert (p.metadata["strategy"], len(p.metadata["tables_included"]), retrieve.calls) == ("full", 25, [])


def test_threshold_15_with_12_tables_uses_full_schema(make_db) -> None:
    db = make_db(12)
    retrieve = Recorder(result_for(db, {"t2": 0.6}))
    cfg = StrategyConfig.from_env({"RETRIEVAL_TABLE_THRESHOLD": "15"})
    p = prepare_prompt(QUESTION, db, retrieve=retrieve, config=cfg)
    assert p.metadata["strategy"] == "full" and len(created_tables(p.context.text)) == 12
    assert p.metadata["docs_included"] == 1


def test_flag_forces_rag_on_3_tables(make_db) -> None:
    db = make_db(3)
    retrieve = Recorder(result_for(db, {"t1": 0.8}))
    p = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig(), use_retrieval=True,
                       top_k=3, relevance_threshold=0.2)  # fmt: skip
    assert retrieve.calls == [(QUESTION, 3, 0.2)]
    assert p.metadata["strategy"] == "rag"
    assert p.metadata["strategy_reason"] == "retrieval forced on by the caller"


# --- fallback --------------------------------------------------------------------------------


def test_retrieval_error_falls_back_with_reason_and_log(make_db, caplog) -> None:
    db = make_db(25)
    retrieve = Recorder(ArtifactNotFoundError("artifacts/synthetic: no published index"))
    with caplog.at_level(logging.WARNING, logger="schemarag.app.querygen.context"):
        p = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig())
    assert p.metadata["strategy"] == "full"
    assert p.metadata["fallback_reason"] == (
        "Retrieval failed: ArtifactNotFoundError: artifacts/synthetic: no published index"
    )
    assert len(p.metadata["tables_included"]) == 25
    assert len(created_tables(p.messages[1]["content"])) == 25
    assert "fell back to the full schema" in caplog.text


def test_real_retriever_on_an_empty_artifacts_dir_falls_back(make_db, tmp_path) -> None:
    db = make_db(25)
    retrieve = default_retrieve(db, artifacts=tmp_path)
    p = prepare_prompt(QUESTION, db, retrieve=retrieve, config=StrategyConfig())
    assert p.metadata["strategy"] == "full"
    assert p.metadata["fallback_reason"].startswith("Retrieval failed: ArtifactNotFoundError")


def test_empty_retrieval_falls_back_with_reason(make_db, caplog) -> None:
    db = make_db(25)
    with caplog.at_level(logging.WARNING, logger="schemarag.app.querygen.context"):
        p = prepare_prompt(QUESTION, db, retrieve=Recorder(result_for(db, {})), config=StrategyConfig())
    assert p.metadata["strategy"] == "full"
    assert p.metadata["fallback_reason"] == "No relevant documentation found"
    assert "No relevant documentation found" in caplog.text


# --- focused formatting (QG-RAG-02, QG-CORE-02) -------------------------------------------------


def test_focused_schema_holds_retrieved_tables_fk_neighbours_and_docs(shop) -> None:
    result = result_for(shop, {"orders": 0.9})  # users (FK target) and Order Items (FK source) expand
    p = prepare_prompt(QUESTION, shop, retrieve=Recorder(result), use_retrieval=True, config=StrategyConfig())
    user = p.messages[1]["content"]
    assert created_tables(user) == ["orders", "Order Items", "users"]
    assert p.metadata["tables_included"] == ["orders", "Order Items", "users"]
    assert "orders documentation: what one row of orders means." in user
    assert p.metadata["expanded_tables"] == ["Order Items", "users"]


def test_focused_schema_excludes_unrelated_tables(make_db) -> None:
    db = make_db(25)
    p = prepare_prompt(QUESTION, db, retrieve=Recorder(result_for(db, {"t1": 0.7})), config=StrategyConfig())
    assert created_tables(p.messages[1]["content"]) == ["t1", "t2"]  # t2 references t1


def test_token_budget_is_passed_to_the_formatter(make_db) -> None:
    db = make_db(25)
    result = result_for(db, {"t5": 0.9, "t9": 0.5})
    big = prepare_prompt(QUESTION, db, retrieve=Recorder(result), config=StrategyConfig())
    small = prepare_prompt(QUESTION, db, retrieve=Recorder(result), config=StrategyConfig(), token_budget=60)
    assert small.usage["schema_tokens"] < big.usage["schema_tokens"]
    assert {"t5", "t9"} <= set(created_tables(small.messages[1]["content"]))


def test_create_table_format_in_both_modes(make_db) -> None:
    db = make_db(12)
    for use in (True, False):
        p = prepare_prompt(QUESTION, db, retrieve=Recorder(result_for(db, {"t3": 0.6})), use_retrieval=use,
                           config=StrategyConfig())  # fmt: skip
        user = p.messages[1]["content"]
        assert "CREATE TABLE" in user and "PRIMARY KEY (id)" in user and "REFERENCES" in user


def test_prompt_is_deterministic(make_db) -> None:
    db = make_db(25)
    runs = [prepare_prompt(QUESTION, db, retrieve=Recorder(result_for(db, {"t7": 0.6, "t2": 0.5})),
                           config=StrategyConfig()).to_dict() for _ in range(2)]  # fmt: skip
    assert runs[0] == runs[1]


def test_empty_question_is_rejected(shop) -> None:
    with pytest.raises(QuestionError):
        prepare_prompt("  ", shop, config=StrategyConfig())


# --- LLM round trips (real local chat-completions server) ---------------------------------------


def client(llm) -> ChatClient:
    return ChatClient(llm.base_url, "m", api_key="sk-k", timeout=5, max_retries=1, backoff=0.01)


def test_valid_sql_output_shape(llm_server, shop) -> None:
    llm_server.answer_sql("SELECT u.name, SUM(o.total) FROM orders o JOIN users u ON u.id = o.user_id "
                          "GROUP BY u.name", "high")  # fmt: skip
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    assert set(out) == {"query", "explanation", "confidence", "confidence_factors", "tables_used",
                        "assumptions",
                        "retrieval_metadata", "validation", "usage"}  # fmt: skip
    assert out["confidence"] == "high" and out["confidence_factors"] == []
    assert out["tables_used"] == ["orders", "users"]
    assert out["assumptions"] == ["scripted assumption"]
    assert out["validation"] == {"valid": True, "errors": [], "warnings": [], "bind_checked": True,
                                 "unchecked_reason": None, "repaired": False}  # fmt: skip
    assert out["retrieval_metadata"]["strategy"] == "full"
    assert out["usage"]["llm_prompt_tokens"] == 100 and out["usage"]["token_estimator"] == "chars/4"
    assert len(llm_server.requests) == 1


def test_missing_column_gets_one_repair_with_the_exact_error(llm_server, shop) -> None:
    llm_server.answer_sql("SELECT o.totl FROM orders o", "high").answer_sql(
        "SELECT o.total FROM orders o", "high"
    )
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    assert out["query"] == "SELECT o.total FROM orders o"
    assert out["validation"]["valid"] and out["validation"]["repaired"]
    assert "did you mean orders.total" in out["validation"]["initial_errors"][0]
    repair_request = llm_server.requests[1].body["messages"]
    assert repair_request[2]["role"] == "assistant" and "o.totl" in repair_request[2]["content"]
    assert out["validation"]["initial_errors"][0] in repair_request[3]["content"]
    assert out["confidence"] == "medium"  # capped after a repair


def test_delete_that_stays_invalid_is_reported_with_low_confidence(llm_server, shop) -> None:
    llm_server.answer_sql("DELETE FROM orders", "high").answer_sql("DELETE FROM orders WHERE 1=1", "high")
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    assert out["validation"]["valid"] is False
    assert out["validation"]["errors"] == ["not read-only: DELETE statement; only SELECT queries are allowed"]
    assert out["confidence"] == "low" and "SQL failed validation" in out["confidence_factors"]
    assert len(llm_server.requests) == 2  # exactly one repair round trip


def test_unchecked_sql_is_not_validated_and_gets_no_repair(llm_server, shop) -> None:
    """DuckDB has no julianday(): the SQL is unchecked, reported as not validated (valid null), its
    confidence capped at medium with the reason, and no repair is asked for (nothing to fix)."""
    llm_server.answer_sql("SELECT julianday(created_at) FROM users", "high")
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    validation = out["validation"]
    assert (validation["valid"], validation["errors"], validation["repaired"]) == (None, [], False)
    assert "julianday does not exist" in validation["unchecked_reason"]
    assert out["confidence"] == "medium"
    assert out["confidence_factors"] == [f"SQL not validated (unchecked: {validation['unchecked_reason']})"]
    assert len(llm_server.requests) == 1


def test_a_repair_that_comes_back_unchecked_stays_not_validated(llm_server, shop) -> None:
    llm_server.answer_sql("SELECT julianday(nope) FROM users", "high").answer_sql(
        "SELECT julianday(created_at) FROM users", "high"
    )
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    assert out["validation"]["valid"] is None and out["validation"]["repaired"]
    assert out["confidence"] == "medium" and len(llm_server.requests) == 2


def test_an_executable_comment_from_the_model_is_invalid_and_repaired(llm_server, shop_in) -> None:
    llm_server.answer_sql("SELECT id FROM users /*! INTO OUTFILE '/tmp/x' */", "high").answer_sql(
        "SELECT id FROM users", "high"
    )
    out = generate(QUESTION, shop_in("mysql"), client(llm_server), config=StrategyConfig())
    assert out["query"] == "SELECT id FROM users" and out["validation"]["valid"] is True
    assert "executable comment" in out["validation"]["initial_errors"][0]


def test_non_json_answer_raises_a_clear_error(llm_server, shop) -> None:
    llm_server.answer("I think you want SELECT * FROM orders.")
    with pytest.raises(LLMError, match="not the expected JSON object"):
        generate(QUESTION, shop, client(llm_server), config=StrategyConfig())


def test_non_json_repair_keeps_the_invalid_first_answer(llm_server, shop) -> None:
    llm_server.answer_sql("SELECT nope FROM users").answer("sorry")
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    assert out["query"] == "SELECT nope FROM users" and out["confidence"] == "low"
    assert out["validation"]["errors"][-1].startswith("repair attempt failed:")


def test_500_then_success(llm_server, shop) -> None:
    llm_server.status(500).answer_sql("SELECT id FROM users", "medium")
    out = generate(QUESTION, shop, client(llm_server), config=StrategyConfig())
    assert out["validation"]["valid"] and out["confidence"] == "medium"


def test_timeout_raises_llm_error(llm_server, shop) -> None:
    llm_server.sleep(1.5)
    slow = ChatClient(llm_server.base_url, "m", timeout=0.2, max_retries=0)
    with pytest.raises(LLMError, match="timed out"):
        generate(QUESTION, shop, slow, config=StrategyConfig())


# --- confidence from retrieval quality (QG-RAG-03) -------------------------------------------------


@pytest.mark.parametrize(("scores", "expected"), [({"t3": 0.35, "t4": 0.3}, "medium"), ({"t3": 0.9}, "high")])
def test_low_relevance_lowers_confidence(llm_server, make_db, scores, expected) -> None:
    db = make_db(25)
    llm_server.answer_sql("SELECT t3.name FROM t3", "high")
    out = generate(QUESTION, db, client(llm_server), retrieve=Recorder(result_for(db, scores)),
                   config=StrategyConfig())  # fmt: skip
    meta = out["retrieval_metadata"]
    assert meta["strategy"] == "rag" and meta["chunks_retrieved"] == len(scores)
    assert out["confidence"] == expected
    if expected == "medium":
        assert out["confidence_factors"] == [
            f"low retrieval relevance (avg {meta['avg_relevance_score']:.2f} < 0.4)"
        ]


def test_metadata_in_both_modes(llm_server, make_db) -> None:
    db = make_db(25)
    llm_server.answer_sql("SELECT t3.name FROM t3").answer_sql("SELECT t3.name FROM t3")
    rag = generate(QUESTION, db, client(llm_server), retrieve=Recorder(result_for(db, {"t3": 0.7})),
                   config=StrategyConfig())["retrieval_metadata"]  # fmt: skip
    full = generate(QUESTION, db, client(llm_server), use_retrieval=False, config=StrategyConfig())
    assert {"strategy", "tables_included", "chunks_retrieved", "avg_relevance_score"} <= set(rag)
    assert rag["strategy"] == "rag" and rag["tables_included"] == ["t3", "t2", "t4"]
    meta = full["retrieval_metadata"]
    assert meta["strategy"] == "full" and len(meta["tables_included"]) == 25
    assert not {"chunks_retrieved", "avg_relevance_score", "fallback_reason"} & set(meta)


# --- the real retriever on the lead's built artifacts --------------------------------------------


@pytest.fixture
def real_artifacts(request: pytest.FixtureRequest) -> Any:
    """The session's built artifacts (tests/conftest.py ``built_artifacts``)."""
    try:
        return request.getfixturevalue("built_artifacts")
    except pytest.FixtureLookupError:  # pragma: no cover - only before tests/conftest.py provides it
        pytest.skip("tests/conftest.py does not provide built_artifacts yet")


def test_real_rag_focused_schema_is_retrieved_tables_plus_fk_neighbours(real_artifacts) -> None:
    from schemarag.runtime.search.retriever import Retriever

    retriever = Retriever.open("ecommerce", real_artifacts)
    db = retriever.schema
    calls: list[Any] = []

    def retrieve(question: str, top_k: Any, threshold: Any) -> Any:
        calls.append(retriever.search(question, top_k=top_k, relevance_threshold=threshold))
        return calls[-1]

    p = prepare_prompt("Which users placed orders last month?", db, retrieve=retrieve, use_retrieval=True,
                       config=StrategyConfig())  # fmt: skip
    (result,) = calls
    assert p.metadata["strategy"] == "rag" and result.chunks
    allowed = set(result.tables) | {n for t in result.tables for n in db.neighbours(t)}
    included = created_tables(p.messages[1]["content"])
    assert set(result.tables) <= set(included) <= allowed
    assert p.metadata["tables_included"] == included
    assert p.metadata["chunks_retrieved"] == len(result.chunks)
    assert 0.0 <= p.metadata["avg_relevance_score"] <= 1.0


def test_auto_rag_falls_back_when_the_focused_schema_is_not_smaller(make_db) -> None:
    """RAG exists to shrink the prompt: on 12 tables where the retrieved docs outweigh the
    tables left out, the automatic strategy uses the full schema and says why; an explicit
    --use-retrieval still gets the focused schema."""
    db = make_db(12)
    bulky = result_for(db, {"t5": 0.9})
    long_text = "t5 documentation. " + "Detailed explanation of every code value. " * 400
    chunk = bulky.chunks[0].chunk
    bulky.chunks[0] = ScoredChunk(Chunk(chunk.chunk_id, db.name, "t5", "overview", None, long_text), 0.9)
    retrieve = Recorder(bulky)
    cfg = StrategyConfig.from_env({"ENABLE_DOC_RETRIEVAL": "true"})
    auto = prepare_prompt(QUESTION, db, retrieve=retrieve, config=cfg)
    assert auto.metadata["strategy"] == "full"
    assert auto.metadata["fallback_reason"] == "Focused schema was not smaller than the full schema"
    forced = prepare_prompt(QUESTION, db, retrieve=retrieve, config=cfg, use_retrieval=True)
    assert forced.metadata["strategy"] == "rag"
