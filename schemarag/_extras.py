"""Which optional extra provides which import, so a missing one becomes a one-line fix.

The base install is the query side only; building, the UI, live PostgreSQL sources, charts
and serving come as extras (lancedb's ``attempt_import_or_raise`` idea).

>>> extra_for("dagster")
'build'
>>> extra_for("numpy") is None
True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from schemarag.runtime.errors import MissingExtraError

# top-level import name -> the extra that installs it
EXTRA_BY_MODULE: dict[str, str] = {
    "dagster": "build",
    "dagster_webserver": "ui",
    "lancedb": "build",
    "markdown_it": "build",
    "yaml": "build",
    "psycopg": "postgres",
    "matplotlib": "eval",
    "starlette": "serve",
    "fastapi": "serve",
    "orjson": "serve",
    "uvicorn": "serve",
    "mcp": "serve",
    "prometheus_client": "serve",
    "sqlalchemy": "sources",
    "jinja2": "build",
    "pytest": "test",
}


def extra_for(module: str) -> str | None:
    """The extra that provides top-level module ``module``, or None if the base install has it."""
    return EXTRA_BY_MODULE.get(module.split(".")[0])


@contextlib.contextmanager
def missing_extra_hint(what: str) -> Iterator[None]:
    """Turn a ModuleNotFoundError for an optional dependency into a one-line MissingExtraError."""
    try:
        yield
    except ModuleNotFoundError as exc:
        extra = extra_for(exc.name or "")
        if extra is None:
            raise
        raise MissingExtraError(
            f"{what} needs the optional dependency {exc.name!r}: "
            f"pip install 'schemarag[{extra}]' (or 'schemarag[all]')"
        ) from exc
