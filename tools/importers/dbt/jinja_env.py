"""dbt's Jinja without dbt: a sandboxed environment with stub ``ref``/``source``/``config``/``var``.

A model's SQL is rendered as dbt would at parse time on a fresh warehouse (``execute`` false,
``is_incremental()`` false), with the project's own macros loaded from ``macro-paths`` and each
installed package's macros under its name (``fivetran_utils.enabled_vars(...)``).
Adapter calls (``adapter.get_columns_in_relation``, ``adapter.dispatch``) are not available: the
environment uses ``StrictUndefined`` so such a model fails to render with a clear reason instead
of silently producing broken SQL, and the caller turns that into a warning.

``ref()`` renders as ``__dbt__.<model>`` and ``source()`` as ``__src__.<token>``, so every
relation sits at the same depth, which sqlglot's schema qualification needs (see
:mod:`.sql_columns`); the real relation names are decided later (:mod:`.naming`). Every
``ref``/``source``/``config`` call a render makes is recorded, so lineage and configs hidden in
``var()`` values (``var('shopify_order')`` = ``"{{ ref('stg_shopify__order') }}"``) are seen.

Example:
    >>> env = DbtJinja({"start": "2020-01-01"}, {("raw", "orders"): "raw.orders"}, {})
    >>> env.render_sql("select * from {{ ref('stg') }} where d > '{{ var('start') }}'", "m.sql")
    "select * from __dbt__.stg where d > '2020-01-01'"
    >>> env.render_sql("select * from {{ source('raw', 'orders') }}", "n.sql")
    'select * from __src__.s0'
    >>> env.calls.refs, env.calls.sources
    ([], ['raw.orders'])
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jinja2 import StrictUndefined, nodes
from jinja2.exceptions import TemplateError, UndefinedError
from jinja2.sandbox import SandboxedEnvironment, safe_range

from schemarag.tools.importers.limits import ImportLimits, active_limits

log = logging.getLogger(__name__)

MODEL_SCHEMA = "__dbt__"
SOURCE_SCHEMA = "__src__"
_DOCS_BLOCK = re.compile(r"{%-?\s*docs\s+([\w.]+)\s*-?%}(.*?){%-?\s*enddocs\s*-?%}", re.DOTALL)
# dbt's own tags that plain Jinja does not know; they wrap SQL we do not need to render.
_DBT_BLOCK_TAGS = re.compile(
    r"{%-?\s*(materialization|endmaterialization|test|endtest|snapshot|endsnapshot)\b.*?%}", re.DOTALL
)
_MAX_VAR_DEPTH = 5


class RenderError(Exception):
    """A template this environment cannot render (unknown macro, syntax, missing var)."""


class _Return(Exception):
    """dbt's ``{{ return(x) }}``: ends the macro with ``x`` as its value."""

    def __init__(self, value: Any) -> None:
        super().__init__("return")
        self.value = value


def _return(value: Any) -> None:
    raise _Return(value)


def _compiler_error(message: str = "") -> None:
    raise RenderError(f"the project raised a compiler error: {message}")


def docs_blocks(text: str) -> dict[str, str]:
    """``{% docs name %}...{% enddocs %}`` blocks of one file (dbt defines them only this way)."""
    return {m.group(1): m.group(2).strip() for m in _DOCS_BLOCK.finditer(text)}


@dataclass
class Calls:
    """What one render called: ``ref``'d models, ``source`` nodes (``src.table``), ``config``."""

    refs: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    """dbt's ``target``: where the project builds (profiles.yml or the user's options)."""

    name: str = "dev"
    schema: str = ""
    database: str = ""
    type: str = "postgres"


class _Macro:
    """A loaded macro: dbt's ``return()`` becomes the call's value."""

    def __init__(self, macro: Any) -> None:
        self.macro = macro

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.macro(*args, **kwargs)
        except _Return as ret:
            return ret.value


class _Budget:
    """What one render may still spend: loop iterations and calls, and time (issue 39: nested
    ``range(100000)`` loops hung the import). Checked at every call the template makes and every
    ``range`` step, so a render that neither calls nor loops is bounded by its own text."""

    def __init__(self, limits: ImportLimits) -> None:
        self.limits = limits
        self.steps = 0
        self.deadline = time.monotonic() + limits.jinja_seconds

    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.limits.jinja_iterations:
            raise RenderError(
                f"render bound: over {self.limits.jinja_iterations:,} loop iterations and calls "
                "(--max-jinja-iterations); kept unrendered"
            )
        if self.steps % 256 == 0 and time.monotonic() > self.deadline:
            raise RenderError(
                f"render bound: over {self.limits.jinja_seconds} s (--max-jinja-seconds); kept unrendered"
            )


class _BoundedSandbox(SandboxedEnvironment):
    """Jinja's sandbox (no attribute or method escapes) plus bounds on what a render can cost:
    ``*`` and ``**`` that would build a value over the output bound are refused before they
    allocate (``'x' * 3000000000`` was a MemoryError), ``center`` likewise, every call and
    ``range`` step spends the render's :class:`_Budget`, and the output is measured as it streams."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.budget: _Budget | None = None
        self.globals["range"] = self._range
        center = self.filters["center"]
        self.filters["center"] = lambda value, width=80: center(value, self._width(width))

    def spend(self) -> None:
        if self.budget is None:
            self.budget = _Budget(active_limits())
        self.budget.tick()

    def _cap(self) -> int:
        return (self.budget.limits if self.budget else active_limits()).jinja_output_bytes

    def _width(self, width: Any) -> Any:
        if isinstance(width, int) and width > self._cap():
            raise RenderError(
                f"render bound: center({width:,}) is over {self._cap():,} (--max-jinja-output-bytes)"
            )
        return width

    def _range(self, *args: Any) -> Any:
        for value in safe_range(*args):  # Jinja's own cap on one range (100,000 items)
            self.spend()
            yield value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                sized = isinstance(seq, (str, bytes, list, tuple)) and isinstance(times, int)
                if sized and len(seq) * times > self._cap():
                    raise RenderError(
                        f"render bound: a value of {len(seq) * times:,} items is over {self._cap():,} "
                        "(--max-jinja-output-bytes); kept unrendered"
                    )
        if operator == "**" and isinstance(right, int) and right > 4096:
            raise RenderError(f"render bound: ** {right:,} (an exponent over 4,096); kept unrendered")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.spend()
        return super().call(__context, __obj, *args, **kwargs)


class DbtJinja:
    """One sandboxed environment per import; ``render_sql`` records what a model reads.

    ``variables`` are the root project's ``vars:``; a key naming a package (``scopes``) holds
    that package's vars. :meth:`use_package` sets whose vars ``var()`` sees: the package's own
    dbt_project.yml vars, then the root's global vars, then the root's vars for that package.
    """

    def __init__(
        self,
        variables: dict[str, Any],
        sources: dict[tuple[str, str], str],
        docs: dict[str, str],
        dialect: str = "postgres",
        target: Target | None = None,
    ) -> None:
        self.root_vars = variables
        self.package_vars: dict[str, dict[str, Any]] = {}
        self.variables: dict[str, Any] = dict(variables)
        self.sources = sources  # (source, table) -> node key "source.table"
        self.tokens: dict[str, str] = {}  # "s0" -> node key
        self._token_of: dict[str, str] = {}
        self.docs = docs
        self.calls = Calls()
        self.target = target or Target(type=dialect)
        self.env = _BoundedSandbox(undefined=StrictUndefined, extensions=["jinja2.ext.do"])
        self.env.globals.update(
            ref=self._ref,
            source=self._source,
            config=self._config,
            var=self._var,
            env_var=lambda name, default="": default,
            is_incremental=lambda: False,
            doc=self._doc,
            log=lambda *a, **k: "",
            execute=False,
            target=SimpleNamespace(**vars(self.target)),
            exceptions=SimpleNamespace(raise_compiler_error=_compiler_error, warn=lambda *a, **k: ""),
            modules=SimpleNamespace(),
            zip=zip,
        )
        self.env.globals["return"] = _return

    # --- what models call ------------------------------------------------------------------
    def _ref(self, *args: str, **kwargs: Any) -> str:
        if not args:
            raise RenderError("ref() needs a model name")
        self.calls.refs.append(str(args[-1]))
        return f"{MODEL_SCHEMA}.{args[-1]}"

    def sql_name(self, node: str) -> str:
        """The stand-in a source node has in rendered SQL (``__src__.s<n>``)."""
        token = self._token_of.get(node)
        if token is None:
            token = self._token_of[node] = f"s{len(self._token_of)}"
            self.tokens[token] = node
        return f"{SOURCE_SCHEMA}.{token}"

    def _source(self, source_name: str, table_name: str) -> str:
        node = self.sources.get((source_name, table_name))
        if node is None:
            raise RenderError(f"source({source_name!r}, {table_name!r}) is not declared in any sources yml")
        self.calls.sources.append(node)
        return self.sql_name(node)

    def _config(self, *args: Any, **kwargs: Any) -> str:
        for arg in args:
            if isinstance(arg, dict):
                self.calls.config.update(arg)
        self.calls.config.update(kwargs)
        return ""

    def _var(self, name: str, default: Any = None, _depth: int = 0) -> Any:
        if name in self.variables:
            value = self.variables[name]
        elif default is None:
            raise RenderError(f"var({name!r}) is not in dbt_project.yml vars and has no default")
        else:
            value = default
        if isinstance(value, str) and ("{{" in value or "{%" in value) and _depth < _MAX_VAR_DEPTH:
            value = self.env.from_string(value).render()  # dbt renders vars where they are used
        return value

    def _doc(self, *args: str) -> str:
        name = args[-1] if args else ""
        if name not in self.docs:
            raise RenderError(f"doc({name!r}): no {{% docs {name} %}} block in the project")
        return self.docs[name]

    # --- project set-up ----------------------------------------------------------------------
    def add_package(self, name: str, own_vars: dict[str, Any]) -> None:
        """Register a package's own ``vars:`` (its dbt_project.yml) and a namespace for its macros."""
        self.package_vars[name] = own_vars
        self.env.globals.setdefault(name, SimpleNamespace())

    def use_package(self, package: str | None) -> None:
        """``var()`` as seen from a node of ``package`` (None: the root project)."""
        scopes = set(self.package_vars)
        own = self.package_vars.get(package or "", {})
        merged: dict[str, Any] = {}
        for scope in (own, self.root_vars):
            merged.update({k: v for k, v in scope.items() if k not in scopes})
            if isinstance(scope.get(package or ""), dict):
                merged.update(scope[package or ""])
        self.variables = merged

    def load_macros(
        self, path: Path, text: str, namespace: str | None = None, root: bool = False
    ) -> list[str]:
        """Add the ``{% macro %}`` definitions of one file to the globals, or to a package's
        namespace (``dbt_utils.star``) and, unless the root project has one of that name, the
        globals; returns their names. Load the root project's macros first."""
        try:
            module = self.env.from_string(_DBT_BLOCK_TAGS.sub("", text)).module
        except (TemplateError, RenderError, _Return, TypeError, ValueError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}") from None
        names = [n for n in dir(module) if not n.startswith("_")]
        target = self.env.globals.get(namespace) if namespace else None
        for name in names:
            macro = _Macro(getattr(module, name))
            if isinstance(target, SimpleNamespace):
                setattr(target, name, macro)  # jira.jira_is_databricks_sql_warehouse()
            if root or target is None:
                self.env.globals[name] = macro
            else:
                self.env.globals.setdefault(name, macro)  # a package calls its own macros bare
        return names

    # --- rendering ---------------------------------------------------------------------------
    def render(self, text: str, **context: Any) -> str:
        """Render any project text (SQL, a description, a test's ``to:``), within the import's
        Jinja bounds (:class:`_Budget`; the output is measured as it streams)."""
        outer = self.env.budget is None  # var() renders inside a render: one budget for both
        if outer:
            self.env.budget = _Budget(active_limits())
        try:
            return self._render(text, **context)
        finally:
            if outer:
                self.env.budget = None

    def _render(self, text: str, **context: Any) -> str:
        cap = self.env._cap()
        try:
            parts: list[str] = []
            size = 0
            for piece in self.env.from_string(text).generate(**context):
                size += len(piece)
                if size > cap:
                    raise RenderError(
                        f"render bound: output over {cap:,} characters (--max-jinja-output-bytes)"
                    )
                parts.append(piece)
            return "".join(parts)
        except UndefinedError as exc:
            raise RenderError(f"{exc} (a package macro or adapter call this importer cannot run)") from None
        except _Return as ret:
            return str(ret.value)
        except RenderError:
            raise
        except (TemplateError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}") from None

    def render_value(self, value: Any) -> Any:
        """A config/property value: strings with Jinja rendered (lists and dicts item by item)."""
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            return self.render(value).strip()
        if isinstance(value, list):
            return [self.render_value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.render_value(v) for k, v in value.items()}
        return value

    def call_macro(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A project macro's value (``generate_schema_name``); RenderError if it cannot run."""
        macro = self.env.globals.get(name)
        if not isinstance(macro, _Macro):
            raise RenderError(f"no macro {name!r}")
        try:
            return macro(*args, **kwargs)
        except UndefinedError as exc:
            raise RenderError(str(exc)) from None
        except RenderError:
            raise
        except (TemplateError, TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise RenderError(f"{type(exc).__name__}: {exc}") from None

    def has_macro(self, name: str) -> bool:
        return isinstance(self.env.globals.get(name), _Macro)

    def render_sql(self, sql: str, model: str) -> str:
        """A model's SQL; what it called is in :attr:`calls` afterwards (also when it fails)."""
        self.calls = Calls()
        return self.render(_DBT_BLOCK_TAGS.sub("", sql), this=f"{MODEL_SCHEMA}.{model}")

    def model_config(self, snippets: list[str]) -> tuple[dict[str, Any], list[str]]:
        """``(config, errors)`` of a model's ``{{ config(...) }}`` calls, each rendered alone."""
        merged: dict[str, Any] = {}
        errors: list[str] = []
        for snippet in snippets:
            self.calls = Calls()
            try:
                self.render(snippet)
            except RenderError as exc:
                errors.append(str(exc))
                merged.update(_constant_kwargs(self.env, snippet))
                continue
            merged.update(self.calls.config)
        self.calls = Calls()
        return merged, errors

    def references(self, sql: str) -> tuple[list[str], list[tuple[str, str]]]:
        """``ref`` and ``source`` calls with constant arguments, read from the Jinja AST.

        This works even when rendering fails (a package macro before the ``ref``), so lineage
        does not depend on being able to run every macro.
        """
        try:
            tree = self.env.parse(_DBT_BLOCK_TAGS.sub("", sql))
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


def _constant_kwargs(env: SandboxedEnvironment, snippet: str) -> dict[str, Any]:
    """The constant arguments of a ``config(...)`` call that could not be rendered as a whole."""
    try:
        tree = env.parse(snippet)
    except TemplateError:
        return {}
    out: dict[str, Any] = {}
    for call in tree.find_all(nodes.Call):
        if not (isinstance(call.node, nodes.Name) and call.node.name == "config"):
            continue
        for kw in call.kwargs:
            try:
                out[kw.key] = kw.value.as_const()
            except nodes.Impossible:
                continue
        for arg in call.args:
            try:
                value = arg.as_const()
            except nodes.Impossible:
                continue
            if isinstance(value, dict):
                out.update(value)
    return out
