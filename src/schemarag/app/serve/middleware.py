"""One pure-ASGI middleware for what every request needs before and after its route.

In order: a request id (the caller's ``X-Request-ID`` if sane, else a new one), the caller's
key -> tenant (401 for a missing or unknown key on protected paths), the concurrency limit
(503 with ``Retry-After`` instead of an unbounded queue), the body-size limit (413, from
``Content-Length`` or while streaming), then after the response: metrics and exactly one
access-log line. Pure ASGI rather than ``BaseHTTPMiddleware``: no extra task or body copy per
request, which matters at hundreds of requests per second on two cores.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from schemarag.app.serve import metrics
from schemarag.app.serve.keys import ANONYMOUS, KeyStore, bearer_key

access_log = logging.getLogger("schemarag.access")

PUBLIC = frozenset({"/healthz", "/readyz", "/docs", "/openapi.json", "/docs/oauth2-redirect", "/redoc"})
ENDPOINTS = frozenset(
    {"/healthz", "/readyz", "/metrics", "/v1/databases", "/v1/retrieve", "/v1/schema", "/v1/validate",
     "/v1/generate", "/docs", "/openapi.json", "/mcp"}
)  # fmt: skip
DOCS_ASSETS = "/docs-assets/"  # docs_pages.ASSETS: the Swagger UI / ReDoc files /docs loads


def public(path: str) -> bool:
    """Reachable without an API key: health, the OpenAPI document and its pages and their assets."""
    return path in PUBLIC or (path.startswith(DOCS_ASSETS) and ".." not in path)


_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class BodyTooLargeError(Exception):
    pass


def endpoint_of(path: str) -> str:
    """A bounded label for metrics: the route, never the raw (caller-controlled) path."""
    if path in ENDPOINTS:
        return path
    return "/mcp" if path.startswith("/mcp/") else "other"


async def send_json(
    send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]
) -> None:
    raw = orjson.dumps(body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode()),
                        *headers],
        }
    )  # fmt: skip
    await send({"type": "http.response.body", "body": raw})


class ServeMiddleware:
    def __init__(
        self, app: ASGIApp, keys: KeyStore, max_inflight: int, max_body_bytes: int, log_questions: bool
    ) -> None:
        self.app = app
        self.keys = keys
        self.max_inflight = max_inflight
        self.max_body = max_body_bytes
        self.log_questions = log_questions
        self.inflight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        rid = headers.get("x-request-id", "")
        rid = rid if _REQUEST_ID.match(rid) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        state["log"] = log_extra = {}
        path: str = scope["path"]
        rid_header = (b"x-request-id", rid.encode())
        status_box = [500]
        size_box = [0]

        async def send_wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_box[0] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], rid_header]
            elif message["type"] == "http.response.body":
                size_box[0] += len(message.get("body", b""))
            await send(message)

        principal = ANONYMOUS
        counted = False
        try:
            if not public(path) and (self.keys or path == "/metrics"):
                principal = self._authorise(headers, path, scope)
                if principal is None:
                    await send_json(
                        send_wrapped,
                        401,
                        {"error": "missing or unknown API key: send 'Authorization: Bearer <key>'",
                         "request_id": rid},
                        [(b"www-authenticate", b'Bearer realm="schemarag"')],
                    )  # fmt: skip
                    return
            state["principal"] = principal
            if path == "/readyz":  # public, but its details name every tenant's databases
                state["operator"] = self._operator(headers, scope) is not None
            if not public(path) and path != "/metrics":
                if self.inflight >= self.max_inflight:
                    metrics.REJECTED.labels("concurrency").inc()
                    await send_json(
                        send_wrapped,
                        503,
                        {"error": f"server busy: {self.max_inflight} requests in progress; retry shortly",
                         "request_id": rid},
                        [(b"retry-after", b"1")],
                    )  # fmt: skip
                    return
                self.inflight += 1
                counted = True
                metrics.INFLIGHT.inc()
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > self.max_body):
                await self._too_large(send_wrapped, rid)
                return
            if "transfer-encoding" in headers:
                # chunked: no length to check up front, and a route that parses the body (FastAPI)
                # turns an exception raised while reading into 400, so read it here, bounded
                buffered = await self._read_bounded(receive)
                if buffered is None:
                    await self._too_large(send_wrapped, rid)
                    return
                receive = self._replay(buffered, receive)
            try:
                await self.app(scope, self._limited(receive), send_wrapped)
            except BodyTooLargeError:
                if status_box[0] == 500 and size_box[0] == 0:
                    await self._too_large(send_wrapped, rid)
        finally:
            if counted:
                self.inflight -= 1
                metrics.INFLIGHT.dec()
            self._record(scope, path, status_box[0], start, size_box[0], rid, principal, log_extra)

    def _authorise(self, headers: dict[str, str], path: str, scope: Scope):
        if path == "/metrics":
            # labels name every tenant's databases: loopback scrapers or default-namespace keys only
            return self._operator(headers, scope)
        key = bearer_key(headers.get("authorization"), headers.get("x-api-key"))
        return self.keys.tenant_for(key) if self.keys else ANONYMOUS

    def _operator(self, headers: dict[str, str], scope: Scope):
        """The principal allowed to see every namespace (``/metrics``, ``/readyz`` details): a
        default-namespace key, or a loopback client that sends no key; None for anyone else."""
        key = bearer_key(headers.get("authorization"), headers.get("x-api-key"))
        client = (scope.get("client") or ("",))[0]
        if client in ("127.0.0.1", "::1") and not key:
            return ANONYMOUS
        principal = self.keys.tenant_for(key) if self.keys else ANONYMOUS
        return principal if principal is not None and principal.tenant is None else None

    async def _read_bounded(self, receive: Receive) -> list[Message] | None:
        """The request's body messages, or None as soon as they add up to more than the limit."""
        messages: list[Message] = []
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages
            seen += len(message.get("body", b""))
            if seen > self.max_body:
                return None
            if not message.get("more_body", False):
                return messages

    @staticmethod
    def _replay(messages: list[Message], receive: Receive) -> Receive:
        pending = list(messages)

        async def replay() -> Message:
            return pending.pop(0) if pending else await receive()

        return replay

    async def _too_large(self, send: Send, rid: str) -> None:
        await send_json(
            send,
            413,
            {"error": f"request body over {self.max_body} bytes (SCHEMARAG_SERVE_MAX_BODY_BYTES)",
             "request_id": rid},
            [],
        )  # fmt: skip

    def _limited(self, receive: Receive) -> Receive:
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLargeError
            return message

        return limited

    def _record(
        self, scope: Scope, path: str, status: int, start: float, size: int, rid: str, principal, extra
    ) -> None:
        elapsed = time.perf_counter() - start
        endpoint = endpoint_of(path)
        metrics.REQUESTS.labels(endpoint, scope["method"], str(status)).inc()
        metrics.LATENCY.labels(endpoint).observe(elapsed)
        if not access_log.isEnabledFor(logging.INFO):
            return
        line = {
            "request_id": rid,
            "method": scope["method"],
            "path": endpoint,
            "status": status,
            "ms": round(elapsed * 1000, 2),
            "bytes": size,
            "tenant": principal.tenant if principal else None,
            "key": principal.key_id if principal else None,
            "client": (scope.get("client") or ("-",))[0],
        }
        if not self.log_questions:
            extra.pop("question", None)
        line.update(extra)
        access_log.info(orjson.dumps(line).decode())
