"""Which optional extra provides which import, so a missing one becomes a one-line fix.

The base install is the query side only; building, the UI, live PostgreSQL sources, charts
and serving come as extras (lancedb's ``attempt_import_or_raise`` idea).

A command that needs an extra as a whole (``EXTRA_BY_COMMAND``) is checked before it starts,
with ``importlib.util.find_spec`` (nothing is imported): ``schemarag eval`` in a base install
says ``pip install 'schemarag[eval]'`` at once, not ``[build]`` now and ``[eval]`` after
the user has installed that, and never half-way through reading its inputs.

>>> extra_for("dagster")
'build'
>>> extra_for("numpy") is None
True
>>> sorted(modules_of("eval")) == sorted(modules_of("build") + ["matplotlib"])
True
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator

from schemarag.runtime.core.errors import MissingExtraError

# top-level import name -> the extra that installs it
EXTRA_BY_MODULE: dict[str, str] = {
    "dagster": "build",
    "dagster_webserver": "ui",
    "dagster_dg_cli": "ui",
    "lancedb": "build",
    "markdown_it": "build",
    "yaml": "build",
    "pyarrow": "remote",  # the build needs it too, but a build's first missing import is dagster
    "psycopg": "postgres",
    "matplotlib": "eval",
    "starlette": "serve",
    "fastapi": "serve",
    "fastapi_offline": "serve",
    "orjson": "serve",
    "uvicorn": "serve",
    "mcp": "serve",
    "prometheus_client": "serve",
    "sqlalchemy": "sources",
    "jinja2": "build",
    "dagster_celery": "celery",
    "dagster_aws": "celery",
    "celery": "celery",
    "redis": "celery",
    "pytest": "test",
}


# extra -> the extras it includes (pyproject's "schemarag[build]" self-references)
EXTRA_INCLUDES: dict[str, tuple[str, ...]] = {"ui": ("build",), "eval": ("build",), "celery": ("build",)}
# extras that 'schemarag[all]' does not include (pyproject), so the hint does not offer it
NOT_IN_ALL = {"celery", "test"}

# CLI command -> the extra it needs as a whole; commands not listed run on the base install
EXTRA_BY_COMMAND: dict[str, str] = {
    "build": "build",
    "chunks": "build",
    "docs": "build",
    "import": "build",
    "eval": "eval",
    "bench": "eval",
    "ui": "ui",
    "worker": "celery",
    "serve": "serve",
    "mcp": "serve",
}


def modules_of(extra: str) -> list[str]:
    """The top-level modules whose presence shows ``extra`` is installed."""
    own = [m for m, e in EXTRA_BY_MODULE.items() if e == extra and m != "pyarrow"]
    if extra == "build":
        own.append("pyarrow")  # listed under "remote" for the query side, but the build writes Parquet
    for sub in EXTRA_INCLUDES.get(extra, ()):
        own += modules_of(sub)
    return own


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a finder that refuses the name (or a broken parent package)
        return False


def require_extra(extra: str, what: str) -> None:
    """Raise a one-line :class:`MissingExtraError` unless every module of ``extra`` is importable."""
    missing = [m for m in modules_of(extra) if not _importable(m)]
    if missing:
        raise MissingExtraError(f"{what} needs the optional dependency {missing[0]!r}: {install_hint(extra)}")


def install_hint(extra: str) -> str:
    """``pip install 'schemarag[<extra>]'``, and ``[all]`` as the alternative when it covers it."""
    return f"pip install 'schemarag[{extra}]'" + ("" if extra in NOT_IN_ALL else " (or 'schemarag[all]')")


def extra_for(module: str) -> str | None:
    """The extra that provides top-level module ``module``, or None if the base install has it."""
    return EXTRA_BY_MODULE.get(module.split(".")[0])


@contextlib.contextmanager
def missing_extra_hint(what: str) -> Iterator[None]:
    """Turn a ModuleNotFoundError for an optional dependency into a one-line MissingExtraError.

    ``what`` is ``"schemarag <command> ..."`` for a CLI command: that command's extra
    (``EXTRA_BY_COMMAND``) is then required up front and named in the message."""
    words = what.split()
    command_extra = EXTRA_BY_COMMAND.get(words[1]) if len(words) > 1 and words[0] == "schemarag" else None
    if command_extra is not None:
        require_extra(command_extra, what)
    try:
        yield
    except ModuleNotFoundError as exc:
        extra = extra_for(exc.name or "")
        if extra is None:
            raise
        extra = command_extra or extra
        raise MissingExtraError(
            f"{what} needs the optional dependency {exc.name!r}: {install_hint(extra)}"
        ) from exc
