"""``/docs`` (Swagger UI) and ``/redoc`` from files this install carries, never a CDN.

FastAPI's default pages load their JavaScript and CSS from a CDN, so on a machine without
internet (where a query service often runs) ``/docs`` is a blank page. The assets come from the
``fastapi-offline`` package (the ``serve`` extra; Swagger UI and ReDoc builds inside the wheel) and
are served under :data:`ASSETS`; FastAPI's own page builders point at them.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"  # public (no API key), like /docs itself: see middleware.PUBLIC


def mount_docs(app: FastAPI, title: str) -> None:
    """Serve the bundled Swagger UI at ``/docs`` and ReDoc at ``/redoc`` (create the app with
    ``docs_url=None, redoc_url=None``)."""
    static = files("fastapi_offline") / "static"
    app.mount(ASSETS, StaticFiles(directory=str(static)), name="docs-assets")
    openapi = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{title} - API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{title} - API",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            with_google_fonts=False,
        )
