"""A small client for any OpenAI-compatible ``/chat/completions`` endpoint, on httpx + tenacity.

OpenAI, vLLM, Ollama (``/v1``) and llama.cpp's server all speak the same protocol, so one
client covers them without an SDK. The endpoint is the one thing outside our control, so every
call is bounded:

- per-phase timeouts (connect, write, each read, pool) from httpx;
- a **total deadline** per :meth:`ChatClient.chat` (retries and backoff included): the body is
  streamed and the clock checked on every chunk, so a server that trickles one byte at a time
  cannot hold a call past it;
- a **response-size cap**: the body is streamed and the call fails once it passes the cap,
  so a 300 MB answer costs at most the cap in memory;
- retries with capped exponential backoff on 429/5xx and transport errors, honouring
  ``Retry-After`` (tenacity), never sleeping past the deadline;
- every failure, transport errors included (connection reset, a body cut short), becomes one
  :class:`~schemarag.runtime.core.errors.LLMError` naming the endpoint.

The API key is a :class:`~pydantic.SecretStr`; every message this module logs or raises passes
through :meth:`ChatClient._redact`, so the key cannot leak even if a server echoes the
``Authorization`` header back in an error body. Settings: :mod:`.llm_settings`.

Example:
    >>> client = ChatClient("http://127.0.0.1:8000/v1", "m", api_key="sk-secret")
    >>> "sk-secret" in repr(client)
    False
"""

from __future__ import annotations

import email.utils
import json
import logging
import re
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
import tenacity
from pydantic import SecretStr

from schemarag.app.querygen.llm_settings import LLMSettings
from schemarag.runtime.core.errors import ConfigError, LLMError

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
ERROR_BODY_BYTES = 2000  # of an error answer, kept for the message
_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class ChatResponse:
    """The assistant's text plus what the server reported about token use."""

    content: str
    model: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    attempts: int = 1


class ChatClient:
    """Chat-completions client; see the module docstring for its bounds and redaction rules."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        json_mode: bool = False,
        deadline: float | None = None,
        max_response_bytes: int = 4 * 1024 * 1024,
    ) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"LLM base URL {base_url!r} must start with http:// or https://")
        if not model:
            raise ConfigError("LLM model is empty; set SCHEMARAG_LLM_MODEL")
        if timeout <= 0 or max_retries < 0 or (deadline is not None and deadline <= 0):
            raise ConfigError(
                f"LLM timeout and deadline must be > 0 and max_retries >= 0 "
                f"(got {timeout}, {deadline}, {max_retries})"
            )
        base = base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = model
        self._key = SecretStr(api_key or "")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.json_mode = json_mode
        self.deadline = deadline if deadline is not None else self._default_deadline()
        self.max_response_bytes = max_response_bytes

    def _default_deadline(self) -> float:
        """Every attempt's timeout, the backoff between them, and one timeout of slack."""
        waits = sum(min(self.max_backoff, self.backoff * 2**i) for i in range(self.max_retries))
        return self.timeout * (self.max_retries + 2) + waits

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ChatClient:
        """Configure from the ``SCHEMARAG_LLM_*`` variables (see :class:`.LLMSettings`)."""
        settings = LLMSettings.load(env)
        if not settings.base_url.strip():
            raise ConfigError(
                "SCHEMARAG_LLM_BASE_URL is not set; point it at an OpenAI-compatible endpoint "
                "(e.g. http://127.0.0.1:11434/v1 for Ollama) or use --prompt-only"
            )
        return cls(
            settings.base_url.strip(),
            settings.model.strip(),
            api_key=settings.api_key.get_secret_value() if settings.api_key else None,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            json_mode=settings.json_mode,
            deadline=settings.deadline,
            max_response_bytes=settings.max_response_bytes,
        )

    def __repr__(self) -> str:
        key = "'***'" if self._key.get_secret_value() else "None"
        return (
            f"ChatClient(url={self._safe_url()!r}, model={self.model!r}, api_key={key}, "
            f"timeout={self.timeout}, deadline={self.deadline})"
        )

    def chat(self, messages: list[dict[str, str]], temperature: float = 0.0) -> ChatResponse:
        """Send ``messages``; return the first choice's text. Raises :class:`LLMError`."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if self.json_mode:
            payload["response_format"] = {"type": "json_object"}
        body = json.dumps(payload).encode("utf-8")
        deadline = time.monotonic() + self.deadline
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(_Retryable),
            stop=tenacity.stop_after_attempt(self.max_retries + 1)
            | tenacity.stop_before_delay(self.deadline),
            wait=self._wait,
            before_sleep=self._log_retry,
            reraise=True,
        )
        attempt = 0
        try:
            for attempt_ctx in retrying:
                with attempt_ctx:
                    attempt = attempt_ctx.retry_state.attempt_number
                    raw = self._post(body, deadline)
        except _Retryable as exc:
            raise LLMError(
                self._redact(f"{self._safe_url()}: {exc.message} (gave up after {attempt} attempt(s))")
            ) from None
        return self._parse_envelope(raw, attempt)

    def complete_json(self, messages: list[dict[str, str]]) -> tuple[dict[str, Any], ChatResponse]:
        """:meth:`chat`, then parse the answer as the JSON object the prompt asked for."""
        response = self.chat(messages)
        return parse_json_answer(response.content), response

    # ------------------------------------------------------------------ one attempt
    def _post(self, body: bytes, deadline: float) -> bytes:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise self._deadline_error()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers["Accept-Encoding"] = "identity"  # the size cap counts the bytes we hold, no zip bombs
        if self._key.get_secret_value():
            headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        limit = min(self.timeout, remaining)
        per_phase = httpx.Timeout(limit)
        try:  # the client honours HTTP(S)_PROXY / NO_PROXY from the environment, as urllib did
            with (
                httpx.Client(timeout=per_phase, follow_redirects=False) as client,
                client.stream("POST", self.url, content=body, headers=headers) as resp,
            ):
                if resp.status_code >= 400:
                    detail = self._read(resp, deadline, ERROR_BODY_BYTES, truncate=True)
                    self._raise_status(resp, detail.decode("utf-8", "replace").strip())
                return self._read(resp, deadline, self.max_response_bytes)
        except httpx.TimeoutException:
            raise _Retryable(f"timed out after {limit:.3g}s") from None
        except httpx.ConnectError as exc:
            raise _Retryable(f"cannot connect ({exc})") from None
        except httpx.TransportError as exc:  # reset, body cut short (RemoteProtocolError), ...
            raise _Retryable(f"connection failed ({type(exc).__name__}: {exc})") from None
        except httpx.HTTPError as exc:
            raise LLMError(self._redact(f"{self._safe_url()}: {type(exc).__name__}: {exc}")) from None

    def _read(self, resp: httpx.Response, deadline: float, cap: int, truncate: bool = False) -> bytes:
        """The body, streamed: stop at ``cap`` bytes and at the deadline, whichever comes first."""
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            if time.monotonic() > deadline:
                raise self._deadline_error() from None
            size += len(chunk)
            if size > cap:
                if truncate:
                    chunks.append(chunk[: cap - (size - len(chunk))])
                    break
                raise LLMError(
                    f"{self._safe_url()}: response larger than {cap:,} bytes; "
                    "raise SCHEMARAG_LLM_MAX_RESPONSE_BYTES if the answer is legitimate"
                ) from None
            chunks.append(chunk)
        return b"".join(chunks)

    def _raise_status(self, resp: httpx.Response, detail: str) -> None:
        message = f"HTTP {resp.status_code} {resp.reason_phrase}: {detail[:500]}"
        if resp.status_code in RETRY_STATUS:
            raise _Retryable(message, _retry_after(resp.headers.get("Retry-After")))
        hint = " (check SCHEMARAG_LLM_API_KEY)" if resp.status_code in (401, 403) else ""
        raise LLMError(self._redact(f"{self._safe_url()}: {message}{hint}")) from None

    def _deadline_error(self) -> LLMError:
        return LLMError(
            f"{self._safe_url()}: no complete answer within the {self.deadline:g}s deadline "
            "(SCHEMARAG_LLM_DEADLINE); the server is too slow or trickling its answer"
        )

    # ------------------------------------------------------------------ retry policy
    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hinted = exc.retry_after if isinstance(exc, _Retryable) else None
        exponential = self.backoff * 2 ** (state.attempt_number - 1)
        return min(self.max_backoff, hinted if hinted is not None else exponential)

    def _log_retry(self, state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        delay = state.next_action.sleep if state.next_action else 0.0
        message = exc.message if isinstance(exc, _Retryable) else repr(exc)
        log.warning(
            self._redact(f"LLM {message}; retry {state.attempt_number}/{self.max_retries} in {delay:.2f}s")
        )

    # ------------------------------------------------------------------ parsing and redaction
    def _parse_envelope(self, raw: bytes, attempt: int) -> ChatResponse:
        try:
            data = json.loads(raw.decode("utf-8"))
            content = data["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError, RecursionError):
            snippet = raw[:300].decode("utf-8", "replace")
            raise LLMError(
                self._redact(f"{self._safe_url()}: not a chat-completions response: {snippet!r}")
            ) from None
        if not isinstance(content, str):
            raise LLMError(self._redact(f"{self._safe_url()}: the answer has no text content"))
        usage = {k: int(v) for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
        return ChatResponse(
            content=content, model=str(data.get("model") or self.model), usage=usage, attempts=attempt
        )

    def _safe_url(self) -> str:
        """The endpoint without user info or query string (where keys sometimes hide)."""
        parts = urllib.parse.urlsplit(self.url)
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))

    def _redact(self, text: str) -> str:
        key = self._key.get_secret_value()
        return text.replace(key, "***") if key else text


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: either delta-seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_json_answer(content: str) -> dict[str, Any]:
    """The model's JSON object (tolerating a markdown fence or prose around it).

    >>> parse_json_answer('```json\\n{"query": "SELECT 1"}\\n```')["query"]
    'SELECT 1'
    """
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    data: Any = None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                data = json.loads(text[start : end + 1])
            except json.JSONDecodeError:
                data = None
    if not isinstance(data, dict):
        raise LLMError(
            "the model's answer is not the expected JSON object with a 'query' key: "
            f"{content[:200]!r}; use a model that follows instructions or set SCHEMARAG_LLM_JSON_MODE=true"
        )
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise LLMError(f"the model's JSON answer has no non-empty 'query' string: {content[:200]!r}")
    return data
