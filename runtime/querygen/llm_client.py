"""A small client for any OpenAI-compatible ``/chat/completions`` endpoint.

OpenAI, vLLM, Ollama (``/v1``) and llama.cpp's server all speak the same protocol, so one
stdlib-only client (``urllib.request``) covers them without an SDK dependency. It retries
429 and 5xx answers, timeouts and refused connections with capped exponential backoff
(honouring ``Retry-After``), and turns everything else into one :class:`~schemarag.runtime.errors.LLMError`.

The API key is held in a :class:`Secret` whose ``repr``/``str`` are ``***``; every message this
module logs or raises passes through :meth:`ChatClient._redact`, so the key cannot leak even if a
server echoes the ``Authorization`` header back in an error body.

Example:
    >>> client = ChatClient("http://127.0.0.1:8000/v1", "m", api_key="sk-secret")
    >>> "sk-secret" in repr(client)
    False
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from schemarag.runtime.errors import ConfigError, LLMError

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.DOTALL)


class Secret:
    """A string that never shows itself in reprs, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)


@dataclass(frozen=True)
class ChatResponse:
    """The assistant's text plus what the server reported about token use."""

    content: str
    model: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    attempts: int = 1


class ChatClient:
    """Chat-completions client; see the module docstring for retry and redaction rules."""

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
    ) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"LLM base URL {base_url!r} must start with http:// or https://")
        if not model:
            raise ConfigError("LLM model is empty; set SCHEMARAG_LLM_MODEL")
        if timeout <= 0 or max_retries < 0:
            raise ConfigError(f"LLM timeout must be > 0 and max_retries >= 0 (got {timeout}, {max_retries})")
        base = base_url.rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self.model = model
        self._key = Secret(api_key or "")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.json_mode = json_mode

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ChatClient:
        """Configure from ``SCHEMARAG_LLM_BASE_URL``, ``_MODEL``, ``_API_KEY``, ``_TIMEOUT``,
        ``_MAX_RETRIES`` and ``_JSON_MODE`` (send ``response_format: json_object``)."""
        env = os.environ if env is None else env
        base_url = (env.get("SCHEMARAG_LLM_BASE_URL") or "").strip()
        if not base_url:
            raise ConfigError(
                "SCHEMARAG_LLM_BASE_URL is not set; point it at an OpenAI-compatible endpoint "
                "(e.g. http://127.0.0.1:11434/v1 for Ollama) or use --prompt-only"
            )
        try:
            timeout = float(env.get("SCHEMARAG_LLM_TIMEOUT") or 60)
            retries = int(env.get("SCHEMARAG_LLM_MAX_RETRIES") or 2)
        except ValueError:
            raise ConfigError(
                "SCHEMARAG_LLM_TIMEOUT must be seconds and SCHEMARAG_LLM_MAX_RETRIES an integer"
            ) from None
        return cls(
            base_url,
            (env.get("SCHEMARAG_LLM_MODEL") or "").strip(),
            api_key=env.get("SCHEMARAG_LLM_API_KEY") or None,
            timeout=timeout,
            max_retries=retries,
            json_mode=(env.get("SCHEMARAG_LLM_JSON_MODE") or "").lower() in {"1", "true", "yes", "on"},
        )

    def __repr__(self) -> str:
        key = "'***'" if self._key else "None"
        url = self._safe_url()
        return f"ChatClient(url={url!r}, model={self.model!r}, api_key={key}, timeout={self.timeout})"

    def chat(self, messages: list[dict[str, str]], temperature: float = 0.0) -> ChatResponse:
        """Send ``messages``; return the first choice's text. Raises :class:`LLMError`."""
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if self.json_mode:
            payload["response_format"] = {"type": "json_object"}
        body = json.dumps(payload).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            try:
                raw = self._post(body)
                return self._parse_envelope(raw, attempt)
            except _Retryable as exc:
                if attempt > self.max_retries:
                    raise LLMError(
                        self._redact(
                            f"{self._safe_url()}: {exc.message} (gave up after {attempt} attempt(s))"
                        )
                    ) from None
                delay = min(self.max_backoff, exc.retry_after or self.backoff * 2 ** (attempt - 1))
                log.warning(
                    self._redact(f"LLM {exc.message}; retry {attempt}/{self.max_retries} in {delay:.2f}s")
                )
                time.sleep(delay)

    def complete_json(self, messages: list[dict[str, str]]) -> tuple[dict[str, Any], ChatResponse]:
        """:meth:`chat`, then parse the answer as the JSON object the prompt asked for."""
        response = self.chat(messages)
        return parse_json_answer(response.content), response

    def _post(self, body: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key.reveal()}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read(2000).decode("utf-8", "replace").strip()
            message = f"HTTP {exc.code} {exc.reason}: {detail[:500]}"
            if exc.code in RETRY_STATUS:
                raise _Retryable(message, _retry_after(exc.headers.get("Retry-After"))) from None
            hint = " (check SCHEMARAG_LLM_API_KEY)" if exc.code in (401, 403) else ""
            raise LLMError(self._redact(f"{self._safe_url()}: {message}{hint}")) from None
        except TimeoutError:
            raise _Retryable(f"timed out after {self.timeout:g}s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise _Retryable(f"timed out after {self.timeout:g}s") from None
            raise _Retryable(f"cannot connect ({exc.reason})") from None
        except (ConnectionError, OSError) as exc:
            raise _Retryable(f"connection failed ({type(exc).__name__}: {exc})") from None

    def _parse_envelope(self, raw: bytes, attempt: int) -> ChatResponse:
        try:
            data = json.loads(raw.decode("utf-8"))
            content = data["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError):
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
        key = self._key.reveal()
        return text.replace(key, "***") if key else text


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


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
