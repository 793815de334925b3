"""The app's shared state: settings, the service, its thread pool, readiness, and error mapping.

Search is CPU-bound (query embedding, dot products), so it runs in a thread pool of
``SCHEMARAG_SERVE_THREADS`` threads (default: one per core, at least 2). ONNX Runtime and numpy
release the GIL, so two threads really use two cores; more threads than cores only add queueing
inside the pool, which the concurrency limit in front keeps bounded. The event loop itself only
parses requests and writes responses.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson
from fastapi.responses import Response

from schemarag.app.serve.keys import KeyStore
from schemarag.app.serve.service import (
    DatabaseNotFoundError,
    InputTooLargeError,
    NotConfiguredError,
    SchemaService,
)
from schemarag.app.serve.settings import ServeSettings
from schemarag.runtime.core.errors import (
    ArtifactError,
    ArtifactNotFoundError,
    ConfigError,
    LLMError,
    QuestionError,
    SchemaragError,
    SQLValidationError,
)

log = logging.getLogger(__name__)
T = TypeVar("T")


class RequestRejectedError(SchemaragError):
    """A request the server refuses with ``status`` (the message says what to change)."""

    def __init__(self, status: int, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field


def json_response(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json")


def status_for(exc: Exception) -> int:
    """HTTP status of a service error (MCP reports the same errors as tool errors)."""
    if isinstance(exc, RequestRejectedError):
        return exc.status
    if isinstance(exc, DatabaseNotFoundError | ArtifactNotFoundError):
        return 404
    if isinstance(exc, InputTooLargeError | QuestionError | ConfigError | SQLValidationError):
        return 422
    if isinstance(exc, NotConfiguredError | ArtifactError):
        return 503
    if isinstance(exc, LLMError):
        return 502
    if isinstance(exc, TimeoutError):
        return 504
    return 500


class ServerState:
    """What every request handler reaches through ``request.app.state.server``."""

    def __init__(self, settings: ServeSettings, keys: KeyStore) -> None:
        self.settings = settings
        self.keys = keys
        self.service = SchemaService(settings.artifacts, settings.refresh_seconds, settings.query_cache)
        self.pool = ThreadPoolExecutor(max_workers=settings.threads, thread_name_prefix="schemarag-serve")
        self.ready = False
        self.opened: list[dict[str, Any]] = []
        self.warm_error = ""
        self.failed: dict[tuple[str | None, str], str] = {}
        self._warm_lock = threading.Lock()

    def tenants(self) -> list[str | None]:
        """Namespaces to open at start: the keys' tenants, or the default one when unkeyed."""
        return self.keys.tenants if len(self.keys) else [None]

    def warm(self) -> None:
        """Open everything; ready when every index opened (a later call retries the failures,
        so publishing a good version makes a server ready without a restart)."""
        with self._warm_lock:  # readiness probes may retry concurrently
            self._warm()

    def _warm(self) -> None:
        try:
            only = set(self.failed) if self.failed else None
            opened, failed = self.service.warm(self.tenants(), only)
            done = {(o["tenant"], o["database"]) for o in self.opened}
            self.opened += [
                {"tenant": t, "database": d, "artifact_key": k} for t, d, k in opened if (t, d) not in done
            ]
            self.failed = failed
            self.warm_error = "; ".join(f"{t or '-'}/{d}: {e}" for (t, d), e in failed.items())
            self.ready = not failed
            log.info("%d database(s) opened, %d failed; embedding model loaded", len(opened), len(failed))
        except Exception as exc:  # readiness reports it; liveness stays up for the operator
            self.warm_error = f"{type(exc).__name__}: {exc}"
            log.exception("warm-up failed")

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` in the pool; TimeoutError (504) after the per-request timeout.

        A timed-out call keeps its pool thread until it finishes (Python threads cannot be
        killed), but the client gets its answer and the concurrency limit keeps counting.
        """
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self.pool, functools.partial(fn, *args))
        try:
            return await asyncio.wait_for(future, self.settings.request_timeout)
        except TimeoutError:
            raise TimeoutError(
                f"request took over {self.settings.request_timeout:g} s "
                "(SCHEMARAG_SERVE_REQUEST_TIMEOUT); try a shorter question or a smaller top_k"
            ) from None

    def unprocessable(self, message: str, field: str) -> None:
        raise RequestRejectedError(422, message, field)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
