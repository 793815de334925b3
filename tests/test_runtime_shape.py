"""The card's *small* runtime, held: short functions with few parameters in schemarag.runtime.

A function over 60 lines or 8 parameters is where a pipeline, its configuration and an
experiment surface grew into one (issue 37: ``rank_tables_from_scores`` had 153 lines and 28
parameters); a stage, a config field or a small value object is the way out.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 60
MAX_PARAMS = 8  # self / cls not counted


def shape_problems(root: Path) -> list[str]:
    """``file:line name: N lines / N parameters`` for every function over a limit under ``root``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            a = node.args
            names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            params = len(names) + (a.vararg is not None) + (a.kwarg is not None)
            params -= bool(names and names[0] in ("self", "cls"))
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            where = f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"
            if lines > MAX_LINES:
                out.append(f"{where}: {lines} lines")
            if params > MAX_PARAMS:
                out.append(f"{where}: {params} parameters")
    return out


def test_runtime_functions_are_short_and_take_few_parameters() -> None:
    assert shape_problems(REPO / "runtime") == []


def test_the_shape_check_is_not_vacuous(tmp_path: Path) -> None:
    pkg = tmp_path / "runtime"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    args = ", ".join(f"a{i}" for i in range(MAX_PARAMS + 1))
    (pkg / "bad.py").write_text(f"def long():\n{body}\n\n\ndef wide(self, {args}):\n    pass\n")
    found = shape_problems(pkg)
    assert any("long: " in f and "lines" in f for f in found)
    assert any("wide: 9 parameters" in f for f in found)
