"""dbt's Jinja without dbt: a sandboxed environment with stub ``ref``/``source``/``config``/``var``.

A model's SQL is rendered as dbt would at parse time on a fresh warehouse (``execute`` false,
``is_incremental()`` false), with the project's own macros loaded from ``macro-paths``.
Package macros (``dbt_utils.*``) and adapter calls are not available: the environment uses
``StrictUndefined`` so such a model fails to render with a clear reason instead of silently
producing broken SQL, and the caller turns that into a warning.

``ref()`` renders as ``__dbt__.<model>`` so every relation sits at the same depth as
``schema.table`` sources, which sqlglot's schema qualification needs (see :mod:`.sql_columns`).

Example:
    >>> env = DbtJinja({"start": "2020-01-01"}, {("raw", "orders"): "raw.orders"}, {})
    >>> env.render_sql("select * from {{ ref('stg') }} where d > '{{ var('start') }}'", "m.sql")
    "select * from __dbt__.stg where d > '2020-01-01'"
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jinja2 import StrictUndefined, nodes
from jinja2.exceptions import TemplateError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment

log = logging.getLogger(__name__)

MODEL_SCHEMA = "__dbt__"
_DOCS_BLOCK = re.compile(r"{%-?\s*docs\s+([\w.]+)\s*-?%}(.*?){%-?\s*enddocs\s*-?%}", re.DOTALL)
# dbt's own tags that plain Jinja does not know; they wrap SQL we do not need to render.
_DBT_BLOCK_TAGS = re.compile(r"{%-?\s*(materialization|test|snapshot|endsnapshot)\b.*?%}", re.DOTALL)


class RenderError(Exception):
    """A template this environment cannot render (unknown macro, syntax, missing var)."""


def docs_blocks(text: str) -> dict[str, str]:
    """``{% docs name %}...{% enddocs %}`` blocks of one file (dbt defines them only this way)."""
    return {m.group(1): m.group(2).strip() for m in _DOCS_BLOCK.finditer(text)}


class DbtJinja:
    """One sandboxed environment per project; ``render_sql`` records what a model reads."""

    def __init__(
        self,
        variables: dict[str, Any],
        sources: dict[tuple[str, str], str],
        docs: dict[str, str],
        dialect: str = "postgres",
    ) -> None:
        self.variables = variables
        self.sources = sources
        self.docs = docs
        self.env = SandboxedEnvironment(undefined=StrictUndefined, extensions=["jinja2.ext.do"])
        self.env.globals.update(
            ref=self._ref,
            source=self._source,
            config=lambda *a, **k: "",
            var=self._var,
            env_var=lambda name, default="": default,
            is_incremental=lambda: False,
            doc=self._doc,
            log=lambda *a, **k: "",
            execute=False,
            target=SimpleNamespace(name="dev", schema="analytics", database="analytics", type=dialect),
        )

    @staticmethod
    def _ref(*args: str, **kwargs: Any) -> str:
        if not args:
            raise RenderError("ref() needs a model name")
        return f"{MODEL_SCHEMA}.{args[-1]}"

    def _source(self, source_name: str, table_name: str) -> str:
        name = self.sources.get((source_name, table_name))
        if name is None:
            raise RenderError(f"source({source_name!r}, {table_name!r}) is not declared in any sources yml")
        return name

    def _var(self, name: str, default: Any = None) -> Any:
        if name in self.variables:
            return self.variables[name]
        if default is None:
            raise RenderError(f"var({name!r}) is not in dbt_project.yml vars and has no default")
        return default

    def _doc(self, *args: str) -> str:
        name = args[-1] if args else ""
        if name not in self.docs:
            raise RenderError(f"doc({name!r}): no {{% docs {name} %}} block in the project")
        return self.docs[name]

    def load_macros(self, path: Path, text: str) -> list[str]:
        """Add the ``{% macro %}`` definitions of one file to the globals; returns their names."""
        try:
            module = self.env.from_string(_DBT_BLOCK_TAGS.sub("", text)).module
        except (TemplateError, RenderError, TypeError, ValueError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}") from None
        names = [n for n in dir(module) if not n.startswith("_")]
        for name in names:
            self.env.globals[name] = getattr(module, name)
        return names

    def render(self, text: str, **context: Any) -> str:
        """Render any project text (SQL, a description, a test's ``to:``)."""
        try:
            return self.env.from_string(text).render(**context)
        except UndefinedError as exc:
            raise RenderError(f"{exc} (a package macro or adapter call this importer cannot run)") from None
        except (TemplateError, TypeError, ValueError, AttributeError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}") from None

    def render_sql(self, sql: str, model: str) -> str:
        return self.render(sql, this=f"{MODEL_SCHEMA}.{model}")

    def references(self, sql: str) -> tuple[list[str], list[tuple[str, str]]]:
        """``ref`` and ``source`` calls with constant arguments, read from the Jinja AST.

        This works even when rendering fails (a package macro before the ``ref``), so lineage
        does not depend on being able to run every macro.
        """
        try:
            tree = self.env.parse(sql)
        except TemplateError:
            return [], []
        refs: list[str] = []
        srcs: list[tuple[str, str]] = []
        for call in tree.find_all(nodes.Call):
            if not isinstance(call.node, nodes.Name):
                continue
            args = [a.value for a in call.args if isinstance(a, nodes.Const) and isinstance(a.value, str)]
            if call.node.name == "ref" and args:
                refs.append(args[-1])
            elif call.node.name == "source" and len(args) == 2:
                srcs.append((args[0], args[1]))
        return list(dict.fromkeys(refs)), list(dict.fromkeys(srcs))
