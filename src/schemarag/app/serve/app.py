"""The ASGI app factory: FastAPI routes + the MCP endpoint + middleware + lifespan.

FastAPI (on Starlette) because it derives the OpenAPI document (``/openapi.json``, ``/docs``)
and 422 validation from the request models; the MCP SDK is Starlette too, so its streamable-HTTP
route mounts into the same app and shares the key middleware.

Start-up opens every database of every configured namespace and loads the embedding model in
the thread pool while the server already answers ``/healthz``; ``/readyz`` turns 200 when done.
Shutdown (SIGTERM / Ctrl-C, handled by uvicorn) stops accepting, lets in-flight requests finish,
then drains the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response

from schemarag import __version__
from schemarag.app.serve import metrics
from schemarag.app.serve.docs_pages import mount_docs
from schemarag.app.serve.keys import ANONYMOUS, KeyStore
from schemarag.app.serve.middleware import ServeMiddleware
from schemarag.app.serve.routes import router
from schemarag.app.serve.settings import ServeSettings
from schemarag.app.serve.state import ServerState, json_response, status_for
from schemarag.runtime.core.errors import SchemaragError

log = logging.getLogger(__name__)


def _mount_mcp(app: FastAPI, state: ServerState) -> contextlib.AbstractAsyncContextManager | None:
    from mcp.server.transport_security import TransportSecuritySettings

    from schemarag.app.serve.mcp_tools import build_mcp

    s = state.settings
    mcp = build_mcp(state.service, state.call, ANONYMOUS, limits=s)
    if s.loopback:  # DNS-rebinding protection: a browser page must not reach a local server
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    else:  # reachable on purpose; the API keys are the gate
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    # stateless + JSON: any worker process can answer any call (no session affinity needed)
    sub = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=security,
        max_request_body_size=s.max_body_bytes,
        host=s.host,
    )
    app.router.routes.extend(sub.routes)
    # "/mcp/" answers as "/mcp" does: no 307 to follow (clients that do not follow a POST's
    # redirect, or follow it without the body, would see the MCP endpoint as broken)
    from starlette.routing import Route

    for route in sub.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            app.router.routes.append(Route("/mcp/", endpoint=route.endpoint, methods=route.methods))
    return mcp.session_manager.run()


def create_app(settings: ServeSettings, keys: KeyStore | None = None) -> FastAPI:
    """The server app for ``settings`` (``keys``: default from the settings' file/environment)."""
    keys = keys if keys is not None else KeyStore.from_settings(settings.keys_file, settings.api_keys)
    state = ServerState(settings, keys)
    state.service.observer.cache_lookup = lambda hit: metrics.note_cache(int(hit), int(not hit))
    state.service.observer.index_served = metrics.note_index
    mcp_runner: list[contextlib.AbstractAsyncContextManager | None] = [None]

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        warming = loop.run_in_executor(state.pool, state.warm)
        async with contextlib.AsyncExitStack() as stack:
            if mcp_runner[0] is not None:
                await stack.enter_async_context(mcp_runner[0])
            try:
                yield
            finally:
                await asyncio.shield(warming)
                state.close()

    app = FastAPI(
        title="schemarag",
        version=__version__,
        description="Focused schemas for text-to-SQL: search documented schemas, get token-budgeted "
        "CREATE TABLE context, validate SQL. Send `Authorization: Bearer <key>` when keys are configured.",
        lifespan=lifespan,
        docs_url=None,  # the offline pages below replace FastAPI's CDN-backed ones
        redoc_url=None,
    )
    mount_docs(app, "schemarag")
    app.state.server = state
    app.include_router(router)
    if settings.mcp:
        mcp_runner[0] = _mount_mcp(app, state)

    @app.exception_handler(SchemaragError)
    async def schemarag_error(request: Request, exc: SchemaragError) -> Response:
        return _error(request, status_for(exc), str(exc), getattr(exc, "field", None))

    @app.exception_handler(TimeoutError)
    async def timeout_error(request: Request, exc: TimeoutError) -> Response:
        return _error(request, 504, str(exc) or "request timed out")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("request %s failed", getattr(request.state, "request_id", None))
        return _error(request, 500, f"internal error ({type(exc).__name__}); the server log has details")

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, exc: RequestValidationError) -> Response:
        problems = [
            {"field": ".".join(str(p) for p in e["loc"] if p != "body") or "body", "message": e["msg"]}
            for e in exc.errors()
        ]
        text = "; ".join(f"{p['field']}: {p['message']}" for p in problems)
        if "json" not in request.headers.get("content-type", ""):
            text = "send a JSON object with 'Content-Type: application/json'; " + text
        body = {"error": f"invalid request: {text}", "problems": problems,
                "request_id": request.state.request_id}  # fmt: skip
        return json_response(body, 422)

    app.add_middleware(
        ServeMiddleware,
        keys=keys,
        max_inflight=settings.max_inflight,
        max_body_bytes=settings.max_body_bytes,
        log_questions=settings.log_questions,
    )
    return app


def _error(request: Request, status: int, message: str, field: str | None = None) -> Response:
    body = {"error": message, "request_id": getattr(request.state, "request_id", None)}
    if field:
        body["field"] = field
    if status == 500:
        log.error("request %s failed: %s", body["request_id"], message)
    return json_response(body, status)


def app_from_env() -> FastAPI:
    """uvicorn's factory for worker processes: settings and keys from ``SCHEMARAG_SERVE_*``."""
    return create_app(ServeSettings.load())
