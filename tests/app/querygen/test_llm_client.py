"""The chat-completions client against a real local HTTP server (no patching)."""

from __future__ import annotations

import email.utils
import json
import logging
import time
import tracemalloc

import pytest

from schemarag.app.querygen.llm_client import ChatClient, parse_json_answer
from schemarag.runtime.core.errors import ConfigError, LLMError

API_KEY = "sk-test-SECRET-0123456789"
MESSAGES = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]


def client_for(llm, **kw) -> ChatClient:
    opts = {"api_key": API_KEY, "timeout": 5.0, "max_retries": 2, "backoff": 0.01, **kw}
    return ChatClient(llm.base_url, "test-model", **opts)


def test_valid_answer_and_request_shape(llm_server) -> None:
    llm_server.answer_sql("SELECT 1")
    answer, response = client_for(llm_server).complete_json(MESSAGES)
    assert answer["query"] == "SELECT 1"
    assert response.usage == {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    (req,) = llm_server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {API_KEY}"
    assert req.body == {"model": "test-model", "messages": MESSAGES, "temperature": 0.0}


def test_full_endpoint_url_is_used_as_is_and_json_mode(llm_server) -> None:
    llm_server.answer_sql("SELECT 2")
    client = ChatClient(llm_server.base_url + "/chat/completions", "m", json_mode=True)
    assert client.chat(MESSAGES).content.startswith("{")
    req = llm_server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert "Authorization" not in req.headers
    assert req.body["response_format"] == {"type": "json_object"}


def test_500_then_success_is_retried(llm_server, caplog) -> None:
    llm_server.status(500, '{"error": "overloaded"}').answer_sql("SELECT 3")
    with caplog.at_level(logging.WARNING, logger="schemarag.app.querygen.llm_client"):
        response = client_for(llm_server).chat(MESSAGES)
    assert json.loads(response.content)["query"] == "SELECT 3"
    assert response.attempts == 2
    assert len(llm_server.requests) == 2
    assert "HTTP 500" in caplog.text and "retry 1/2" in caplog.text


def test_429_honours_retry_after_then_succeeds(llm_server) -> None:
    llm_server.status(429, "slow down", **{"Retry-After": "0"}).answer_sql("SELECT 4")
    assert client_for(llm_server).chat(MESSAGES).attempts == 2


def test_retries_are_bounded(llm_server) -> None:
    for _ in range(5):
        llm_server.status(503, "down")
    with pytest.raises(LLMError, match=r"HTTP 503.*gave up after 3 attempt"):
        client_for(llm_server, max_retries=2).chat(MESSAGES)
    assert len(llm_server.requests) == 3


def test_400_is_not_retried(llm_server) -> None:
    llm_server.status(400, '{"error": "bad model"}')
    with pytest.raises(LLMError, match=r"HTTP 400.*bad model"):
        client_for(llm_server).chat(MESSAGES)
    assert len(llm_server.requests) == 1


def test_timeout_gives_a_clear_error(llm_server) -> None:
    llm_server.sleep(1.5)
    with pytest.raises(LLMError, match=r"timed out after 0.2s \(gave up after 1 attempt"):
        client_for(llm_server, timeout=0.2, max_retries=0, deadline=30).chat(MESSAGES)


def test_timeout_then_success_is_retried(llm_server) -> None:
    llm_server.sleep(1.5).answer_sql("SELECT 5")
    # an explicit deadline: the default (timeout x 3 = 0.9 s) is too tight on a loaded machine
    response = client_for(llm_server, timeout=0.3, max_retries=1, deadline=30).chat(MESSAGES)
    assert response.attempts == 2


def test_non_json_answer_is_a_clear_error(llm_server) -> None:
    llm_server.answer("Sure! Here is your query: SELECT * FROM users")
    with pytest.raises(LLMError, match="not the expected JSON object with a 'query' key"):
        client_for(llm_server).complete_json(MESSAGES)


def test_not_a_chat_completions_envelope(llm_server) -> None:
    llm_server.raw("<html>proxy error</html>")
    with pytest.raises(LLMError, match="not a chat-completions response"):
        client_for(llm_server).chat(MESSAGES)


def test_unreachable_endpoint(llm_server) -> None:
    port = llm_server.server.server_address[1]
    llm_server.server.server_close()  # nothing listens there any more
    client = ChatClient(f"http://127.0.0.1:{port}/v1", "m", timeout=1, max_retries=0)
    with pytest.raises(LLMError, match=r"cannot connect|connection failed"):
        client.chat(MESSAGES)


def test_api_key_never_leaks(llm_server, caplog) -> None:
    """Not in repr, not in logs, not in errors, even when the server echoes the header back."""
    llm_server.status(500, f"echo {API_KEY}").echo_auth(401)
    client = client_for(llm_server)
    with caplog.at_level(logging.DEBUG), pytest.raises(LLMError) as info:
        client.chat(MESSAGES)
    assert llm_server.requests[1].headers["Authorization"] == f"Bearer {API_KEY}"  # it was sent
    message = str(info.value)
    assert "HTTP 401" in message and "check SCHEMARAG_LLM_API_KEY" in message and "***" in message
    for text in (message, repr(info.value), caplog.text, repr(client), str(vars(client))):
        assert API_KEY not in text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_from_env_requires_base_url_and_reads_settings() -> None:
    with pytest.raises(ConfigError, match=r"SCHEMARAG_LLM_BASE_URL is not set.*--prompt-only"):
        ChatClient.from_env({})
    client = ChatClient.from_env({
        "SCHEMARAG_LLM_BASE_URL": "http://127.0.0.1:11434/v1/", "SCHEMARAG_LLM_MODEL": "qwen2.5-coder",
        "SCHEMARAG_LLM_API_KEY": API_KEY, "SCHEMARAG_LLM_TIMEOUT": "12", "SCHEMARAG_LLM_MAX_RETRIES": "4",
    })  # fmt: skip
    assert (client.url, client.model, client.timeout, client.max_retries) == (
        "http://127.0.0.1:11434/v1/chat/completions",
        "qwen2.5-coder",
        12.0,
        4,
    )
    assert API_KEY not in repr(client)


@pytest.mark.parametrize(
    ("env", "fragment"),
    [
        ({"SCHEMARAG_LLM_BASE_URL": "localhost:8000", "SCHEMARAG_LLM_MODEL": "m"}, "must start with http"),
        ({"SCHEMARAG_LLM_BASE_URL": "http://x/v1"}, "SCHEMARAG_LLM_MODEL"),
        (
            {
                "SCHEMARAG_LLM_BASE_URL": "http://x/v1",
                "SCHEMARAG_LLM_MODEL": "m",
                "SCHEMARAG_LLM_TIMEOUT": "soon",
            },
            "SCHEMARAG_LLM_TIMEOUT",
        ),
    ],
)
def test_from_env_rejects_bad_settings(env: dict[str, str], fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        ChatClient.from_env(env)


@pytest.mark.parametrize(
    "content",
    [
        '{"query": "SELECT 1"}',
        '```json\n{"query": "SELECT 1"}\n```',
        'Here you go:\n{"query": "SELECT 1", "confidence": "high"}\nThanks',
    ],
)
def test_parse_json_answer_tolerates_fences_and_prose(content: str) -> None:
    assert parse_json_answer(content)["query"] == "SELECT 1"


@pytest.mark.parametrize("content", ['["SELECT 1"]', '{"sql": "SELECT 1"}', '{"query": "  "}', "SELECT 1"])
def test_parse_json_answer_rejects_other_shapes(content: str) -> None:
    with pytest.raises(LLMError, match="'query'"):
        parse_json_answer(content)


# ---------------------------------------------------------------- hostile peers (issue 13, finding 4)
def test_trickling_server_cannot_hold_a_call_past_its_deadline(llm_server) -> None:
    """One byte every 0.2 s never trips a 3 s read timeout; the total deadline still ends the call
    (before: held 60 s, then a raw http.client.IncompleteRead traceback)."""
    llm_server.trickle(0.2, size=10_000)
    client = client_for(llm_server, timeout=3.0, max_retries=0, deadline=3.0)
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"no complete answer within the 3s deadline"):
        client.chat(MESSAGES)
    assert time.monotonic() - start < 3.0 + 1.5  # the deadline plus one trickle interval and slack


def test_default_deadline_covers_every_attempt(llm_server) -> None:
    client = client_for(llm_server, timeout=3.0, max_retries=0)
    assert client.deadline == 6.0  # timeout x (max_retries + 2) + backoff waits (none)
    assert client_for(llm_server, timeout=1.0, max_retries=2, backoff=0.5).deadline == 4.0 + 0.5 + 1.0


def test_huge_body_is_capped_and_never_held(llm_server) -> None:
    """A 300 MB answer: the call fails at the 4 MB cap; the peak of what the call allocates stays
    far below the body. Measured with tracemalloc (the call's own peak), not ``ru_maxrss``: a full
    run has raised the process's peak RSS long before, so its growth here was 0 whatever the
    client held (issue 39)."""
    llm_server.huge(300 * 1024 * 1024)
    client = client_for(llm_server, max_retries=0)
    tracemalloc.start()
    try:
        with pytest.raises(LLMError, match=r"response larger than 4,194,304 bytes.*MAX_RESPONSE_BYTES"):
            client.chat(MESSAGES)
        peak_mib = tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()
    assert peak_mib < 64, f"the call allocated up to {peak_mib:.0f} MiB"


@pytest.mark.parametrize("abortive", [True, False], ids=["reset", "cut-short"])
def test_connection_lost_mid_body_is_an_llm_error(llm_server, abortive: bool) -> None:
    """Before: a body cut short raised a raw http.client.IncompleteRead."""
    llm_server.reset(sent=100, size=1_000, abortive=abortive).reset(sent=100, size=1_000, abortive=abortive)
    with pytest.raises(LLMError, match=r"connection failed \(.*\) \(gave up after 2 attempt") as info:
        client_for(llm_server, max_retries=1).chat(MESSAGES)
    assert str(info.value).startswith(llm_server.base_url + "/chat/completions: ")
    assert info.value.__cause__ is None


def test_reset_then_success_is_retried(llm_server) -> None:
    llm_server.reset().answer_sql("SELECT 6")
    assert client_for(llm_server, max_retries=1).chat(MESSAGES).attempts == 2


@pytest.mark.parametrize("retry_after", ["1", "date"])
def test_429_waits_as_told_by_retry_after(llm_server, retry_after: str) -> None:
    if retry_after == "date":  # the HTTP-date form, two seconds ahead (one-second resolution)
        retry_after = email.utils.formatdate(time.time() + 2, usegmt=True)
    llm_server.status(429, "slow down", **{"Retry-After": retry_after}).answer_sql("SELECT 7")
    start = time.monotonic()
    response = client_for(llm_server).chat(MESSAGES)
    assert response.attempts == 2
    assert time.monotonic() - start >= 0.9


def test_retry_after_is_capped_by_max_backoff(llm_server) -> None:
    llm_server.status(503, "maintenance", **{"Retry-After": "3600"}).answer_sql("SELECT 8")
    start = time.monotonic()
    assert client_for(llm_server, max_backoff=0.2).chat(MESSAGES).attempts == 2
    assert time.monotonic() - start < 30


def test_key_echoed_in_a_success_body_is_redacted_from_errors(llm_server) -> None:
    llm_server.raw(f"<html>bad gateway; you sent Bearer {API_KEY}</html>")
    with pytest.raises(LLMError) as info:
        client_for(llm_server).chat(MESSAGES)
    assert API_KEY not in str(info.value) and "Bearer ***" in str(info.value)


def test_new_settings_come_from_the_environment() -> None:
    client = ChatClient.from_env({
        "SCHEMARAG_LLM_BASE_URL": "http://127.0.0.1:1/v1", "SCHEMARAG_LLM_MODEL": "m",
        "SCHEMARAG_LLM_DEADLINE": "7.5", "SCHEMARAG_LLM_MAX_RESPONSE_BYTES": "1000",
        "SCHEMARAG_LLM_JSON_MODE": "true", "SCHEMARAG_LLM_API_KEY": "",
    })  # fmt: skip
    assert (client.deadline, client.max_response_bytes, client.json_mode) == (7.5, 1000, True)
    with pytest.raises(ConfigError, match=r"SCHEMARAG_LLM_MAX_RETRIES='-1'"):
        ChatClient.from_env({"SCHEMARAG_LLM_BASE_URL": "http://x/v1", "SCHEMARAG_LLM_MAX_RETRIES": "-1"})
