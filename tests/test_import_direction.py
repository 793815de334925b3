"""Imports point one way, subpackage by subpackage, and never in a circle; a search loads no build
library and no app layer.

Layers, each with what its modules may import besides their own layer:

* ``schemarag.runtime.core`` (schema model, errors, names, paths, config, embedding): nothing of
  schemarag. The bottom layer, shared by the build and the query side.
* ``schemarag.runtime.artifact`` (format, manifest, stored DDL pieces, reader): runtime.core.
* the rest of ``schemarag.runtime`` (search, ranking, formatting, api, the package root):
  runtime.artifact, runtime.core.
* ``schemarag.app`` (CLI commands, HTTP + MCP serving, LLM generation, SQL validation): all of
  schemarag.runtime.
* ``schemarag.assets``: all of schemarag.runtime.
* ``schemarag.pipelines``: assets, all of schemarag.runtime.
* ``schemarag.tools``: pipelines, assets, app, all of schemarag.runtime.
* the facade's leaves, the package root ``schemarag`` (``__version__``; its re-exports load
  ``schemarag.runtime`` by name on first use) and ``schemarag._extras`` (which extra provides a
  missing import): runtime.core. Every layer above schemarag.runtime may import them; the
  runtime, which imports nothing outside itself, does not.
* the dispatcher (``schemarag.cli``, ``schemarag.__main__``): anything. No layer imports it.

The app and the build: ``schemarag.app`` imports none of assets, pipelines or tools, not even
inside a function. A command that needs the build is a module of ``schemarag.pipelines.commands``
(build, chunks, docs, ui) or ``schemarag.tools.commands`` (import, eval, bench), and the dispatcher
``schemarag.cli``, above every package, imports it by name only when it runs, so ``schemarag
retrieve`` never pays for Dagster and the app layer never reaches upwards.

Libraries: nothing in ``schemarag.runtime`` imports the app layer's fastapi, starlette, uvicorn,
mcp, argparse or httpx, nor the build's dagster, lancedb, markdown_it, matplotlib, psycopg or
yaml.

Three checks:

* a static one over every ``import`` and ``from ... import`` statement anywhere in a module,
  inside functions too (so a backwards import is caught on a code path no test runs);
* no import cycle in the whole package, lazy imports included, over the same statements. An edge
  goes to the module the statement names: ``import a.b.c`` -> ``a.b.c``; ``from a.b import c`` ->
  ``a.b.c`` when that is a module, else ``a.b``; relative imports resolved. The parent packages
  an import runs on the way are not edges (a package ``__init__`` that re-exports its own
  submodules would otherwise form a cycle with each of them): an ``__init__`` is a node only
  where a statement names it. ``importlib`` calls are not read: the two lazy name tables
  (``schemarag``, ``schemarag.runtime``) and the dispatcher's command table load by name;
* a dynamic one: a real search in a fresh interpreter, then ``sys.modules``. It asserts what the
  rules are about, not every name: fastembed's own dependencies load httpx and PyYAML, and
  pydantic-settings loads argparse, so those three are checked statically only.

Each check has a test that plants a violation and sees it reported, so none passes vacuously.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _setup_roots() -> dict[str, str]:
    """setup.py's package -> folder map, so this test scans exactly what gets installed."""
    for node in ast.parse((REPO / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "ROOTS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py defines no ROOTS")


ROOTS = _setup_roots()  # {"schemarag": "src/schemarag", "schemarag.runtime": "runtime", ...}
BARE = {"runtime", "assets", "pipelines", "tools"}  # folder names a module must not import bare

# (prefix, layer): the longest matching prefix decides a module's layer
LAYERS = (
    ("schemarag.runtime.core", "runtime.core"),
    ("schemarag.runtime.artifact", "runtime.artifact"),
    ("schemarag.runtime", "runtime"),
    ("schemarag.app", "app"),
    ("schemarag.assets", "assets"),
    ("schemarag.pipelines", "pipelines"),
    ("schemarag.tools", "tools"),
)
FACADE = {"schemarag", "schemarag._extras"}  # any other module of src/schemarag is the dispatcher
RUNTIME = {"runtime.core", "runtime.artifact", "runtime"}
# layer -> the other layers it may import
ALLOWED: dict[str, set[str]] = {
    "runtime.core": set(),
    "runtime.artifact": {"runtime.core"},
    "runtime": {"runtime.artifact", "runtime.core"},
    "app": {"facade", *RUNTIME},
    "assets": {"facade", *RUNTIME},
    "pipelines": {"facade", "assets", *RUNTIME},
    "tools": {"facade", "pipelines", "assets", "app", *RUNTIME},
    "facade": {"runtime.core"},
    "dispatcher": {"facade", "app", "assets", "pipelines", "tools", *RUNTIME},
}
APP_LIBRARIES = ("fastapi", "starlette", "uvicorn", "mcp", "argparse", "httpx")
BUILD_LIBRARIES = ("dagster", "dagster_webserver", "lancedb", "markdown_it", "matplotlib", "psycopg")
RUNTIME_NEVER_IMPORTS = (*APP_LIBRARIES, *BUILD_LIBRARIES, "yaml")
# what a search must not load (httpx, argparse and yaml come with fastembed / pydantic-settings)
SEARCH_NEVER_LOADS = ("fastapi", "starlette", "uvicorn", "mcp", *BUILD_LIBRARIES)
SEARCH_NEVER_LOADS_PACKAGES = ("schemarag.app", "schemarag.assets", "schemarag.pipelines", "schemarag.tools")


@dataclass(frozen=True)
class Import:
    line: int
    name: str  # the module the statement loads (absolute; a submodule when ``from`` names one)


def layer(module: str) -> str:
    if module in FACADE:
        return "facade"
    for prefix, name in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return name
    return "dispatcher"


def modules() -> dict[str, Path]:
    """Every module of the package, by dotted name, from the folders setup.py installs."""
    out = {}
    for package, folder in ROOTS.items():
        base = REPO / folder
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def imports(module: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """Every import statement of ``module``, nested ones too, as the module each one loads."""
    out = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend(Import(node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.append(Import(node.lineno, sub if sub in known else base))
    return list(dict.fromkeys(out))  # ``from m import a, b`` loads ``m`` once


def _violations() -> list[str]:
    bad = []
    known = modules()
    for module, path in known.items():
        here = layer(module)
        where = path.relative_to(REPO)
        for imp in imports(module, path, known):
            top = imp.name.split(".")[0]
            if top in BARE:
                bad.append(f"{where}:{imp.line}: bare import {imp.name!r}; use schemarag.*")
            if top == "schemarag":
                there = layer(imp.name)
                if there != here and there not in ALLOWED[here]:
                    bad.append(f"{where}:{imp.line}: {here} imports {imp.name} ({there})")
            if here in RUNTIME and top in RUNTIME_NEVER_IMPORTS:
                bad.append(f"{where}:{imp.line}: {here} imports {imp.name}")
    return bad


def test_imports_point_one_way() -> None:
    assert _violations() == []


def test_static_check_is_not_vacuous(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Planted backwards imports are reported, nested ones too (the checker reads real files)."""
    for folder in ROOTS.values():
        (tmp_path / folder).mkdir(parents=True)
    plant = {
        "runtime/core/bad.py": "import dagster\nfrom schemarag.runtime.search import scoring\n",
        "runtime/artifact/bad.py": "def f():\n    from schemarag.runtime.formatting import assemble\n",
        "runtime/artifact/root.py": "import schemarag\n",
        "runtime/search/bad.py": "def f():\n    import fastapi\n    from schemarag.app.serve import app\n",
        "src/schemarag/app/bad.py": "def f():\n    from schemarag.pipelines.build import build_databases\n",
        "src/schemarag/_extras.py": "from schemarag.app import x\n",
        "pipelines/ok.py": "from schemarag._extras import require_extra\nfrom schemarag import __version__\n",
        "assets/bad.py": "from schemarag.app.querygen import prompt\nimport runtime.core\n",
    }
    for rel, text in plant.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    found = "\n".join(_violations())
    assert "runtime/core/bad.py:1: runtime.core imports dagster" in found
    assert "runtime/core/bad.py:2: runtime.core imports schemarag.runtime.search (runtime)" in found
    assert "runtime/artifact/bad.py:2: runtime.artifact imports schemarag.runtime.formatting" in found
    assert "runtime/artifact/root.py:1: runtime.artifact imports schemarag (facade)" in found
    assert "runtime/search/bad.py:2: runtime imports fastapi" in found
    assert "runtime/search/bad.py:3: runtime imports schemarag.app.serve" in found
    assert "src/schemarag/app/bad.py:2: app imports schemarag.pipelines.build (pipelines)" in found
    assert "assets/bad.py:1: assets imports schemarag.app.querygen (app)" in found
    assert "assets/bad.py:2: bare import 'runtime.core'" in found
    assert "src/schemarag/_extras.py:1: facade imports schemarag.app (app)" in found
    assert "pipelines/ok.py" not in found


def find_cycles() -> list[str]:
    """One cycle per strongly connected group of modules, as ``a:line -> b:line -> ... -> a``."""
    known = modules()
    edges: dict[str, dict[str, int]] = {m: {} for m in known}
    for module, path in known.items():
        for imp in imports(module, path, known):
            if imp.name in known and imp.name != module:
                edges[module].setdefault(imp.name, imp.line)
    out = []
    for group in _strongly_connected(edges):
        start = min(group)
        path = _path_back(edges, start, group)
        steps = zip(path, [*path[1:], start], strict=True)
        out.append(" -> ".join(f"{m}:{edges[m][n]}" for m, n in steps) + f" -> {start}")
    return out


def _strongly_connected(edges: dict[str, dict[str, int]]) -> list[set[str]]:
    """Groups of two or more modules that import each other, directly or not (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def _path_back(edges: dict[str, dict[str, int]], start: str, group: set[str]) -> list[str]:
    """The shortest path ``start -> ... -> m`` inside ``group`` where ``m`` imports ``start``."""
    parent: dict[str, str | None] = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v]):
                if w == start:
                    path = [v]
                    while (up := parent[path[-1]]) is not None:
                        path.append(up)
                    return path[::-1]
                if w in group and w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"{start} is in a cycle but no path leads back to it")


def test_no_import_cycles() -> None:
    cycles = find_cycles()
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_cycle_check_is_not_vacuous(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle through a lazy import and a ``from package import submodule`` is reported."""
    for folder in ROOTS.values():
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "pipelines/a.py").write_text("def f():\n    from schemarag.pipelines import b\n")
    (tmp_path / "pipelines/b.py").write_text("from .c import x\n")
    (tmp_path / "pipelines/c.py").write_text("import schemarag.pipelines.a\nx = 1\n")
    (tmp_path / "pipelines/d.py").write_text("import schemarag.pipelines.a\n")  # on no cycle
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    p = "schemarag.pipelines"
    assert find_cycles() == [f"{p}.a:2 -> {p}.b:1 -> {p}.c:1 -> {p}.a"]


SEARCH_PROBE = """
import json, runpy, sys
if len(sys.argv) > 2:
    runpy.run_path(sys.argv[2])  # a planted import (the not-vacuous test)
from schemarag.runtime import Retriever, format_focused_schema
r = Retriever.open("b2b_saas", artifacts=sys.argv[1])
res = r.search("unpaid invoices by sales rep", top_k=5)
assert res.tables, res
format_focused_schema(r.artifact.schema, res)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_by_search(artifacts: Path, plant: Path | None = None) -> tuple[list[str], list[str]]:
    """``(libraries, schemarag packages)`` a real search loads that it must not."""
    args = [sys.executable, "-c", SEARCH_PROBE, str(artifacts), *([str(plant)] if plant else [])]
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    libraries = sorted({m.split(".")[0] for m in loaded} & set(SEARCH_NEVER_LOADS))
    packages = sorted(m for m in loaded if m.startswith(SEARCH_NEVER_LOADS_PACKAGES))
    return libraries, packages


def test_a_search_loads_no_build_library_and_no_app_layer(built_artifacts: Path) -> None:
    assert loaded_by_search(built_artifacts) == ([], [])


def test_search_check_is_not_vacuous(built_artifacts: Path, tmp_path: Path) -> None:
    """What a module on the search path would load, planted before the search, is reported."""
    plant = tmp_path / "plant.py"
    plant.write_text("import schemarag.app.serve.settings\nimport markdown_it\n")
    libraries, packages = loaded_by_search(built_artifacts, plant)
    assert libraries == ["markdown_it"]
    assert "schemarag.app.serve.settings" in packages
