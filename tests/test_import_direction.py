"""Imports point one way: tools/pipelines -> assets -> runtime; a search loads no build library.

Two checks: a static one over every module's import statements (so a backwards import is caught
even on a code path no test runs), and a dynamic one that runs a real search in a fresh
interpreter and looks at ``sys.modules``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"runtime": "runtime", "assets": "assets", "pipelines": "pipelines", "tools": "tools"}
# package -> the schemarag packages it may import (besides itself)
ALLOWED = {
    "runtime": set(),
    "assets": {"runtime"},
    "pipelines": {"assets", "runtime"},
    "tools": {"pipelines", "assets", "runtime"},
}
# the runtime's own code imports none of these; a search must not load any of them
BUILD_LIBRARIES = ("dagster", "dagster_webserver", "lancedb", "markdown_it", "matplotlib", "psycopg")
STATIC_ONLY = ("yaml",)  # fastembed's dependencies load PyYAML; the runtime itself must not


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return out


def _violations() -> list[str]:
    bad = []
    for package, folder in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            for line, module in _imports(path):
                parts = module.split(".")
                if parts[0] in FOLDERS:
                    bad.append(f"{path.relative_to(REPO)}:{line}: bare import {module!r}; use schemarag.*")
                if parts[0] == "schemarag" and len(parts) > 1 and parts[1] in FOLDERS:
                    target = parts[1]
                    if target != package and target not in ALLOWED[package]:
                        bad.append(f"{path.relative_to(REPO)}:{line}: {package} imports {module}")
                if package == "runtime" and parts[0] in BUILD_LIBRARIES + STATIC_ONLY:
                    bad.append(f"{path.relative_to(REPO)}:{line}: runtime imports {module}")
    return bad


def test_imports_point_one_way() -> None:
    assert _violations() == []


def test_static_check_is_not_vacuous(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted backwards import is reported (the checker reads real files)."""
    fake_repo = tmp_path
    for folder in FOLDERS.values():
        (fake_repo / folder).mkdir()
    (fake_repo / "runtime" / "bad.py").write_text("import dagster\nfrom schemarag.assets import lib\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", fake_repo)
    found = _violations()
    assert any("runtime imports dagster" in v for v in found)
    assert any("runtime imports schemarag.assets" in v for v in found)


SEARCH_PROBE = """
import sys
from schemarag.runtime import Retriever, format_focused_schema
r = Retriever.open("b2b_saas", artifacts=sys.argv[1])
res = r.search("unpaid invoices by sales rep", top_k=5)
assert res.tables, res
format_focused_schema(r.artifact.schema, res)
print(sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[2].split(','))))
build_side = ('schemarag.assets', 'schemarag.pipelines', 'schemarag.tools')
print(sorted(m for m in sys.modules if m.startswith(build_side)))
"""


def test_a_search_imports_no_build_library(built_artifacts: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", SEARCH_PROBE, str(built_artifacts), ",".join(BUILD_LIBRARIES)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    libraries, packages = proc.stdout.strip().splitlines()
    assert libraries == "[]"
    assert packages == "[]"
