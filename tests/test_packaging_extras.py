"""A missing extra is one line naming it, checked in a real interpreter whose import system
cannot find the extra's modules (a meta-path finder that refuses them, as in a base install)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from schemarag._extras import EXTRA_BY_COMMAND, EXTRA_BY_MODULE, EXTRA_INCLUDES, modules_of
from schemarag.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]

# Runs in the child: make the listed top-level modules unfindable, then run the CLI.
_CHILD = """
import sys
from importlib.abc import MetaPathFinder

BLOCKED = set(sys.argv[1].split(","))

class Refuse(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
from schemarag.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _run(blocked: list[str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CHILD, ",".join(blocked), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def _pyproject_extras() -> dict[str, list[str]]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


@pytest.mark.parametrize(
    ("blocked", "argv", "extra"),
    [
        (["dagster"], ["build"], "build"),
        (["lancedb"], ["build", "--db", "ecommerce"], "build"),
        (["markdown_it"], ["chunks", "--db", "ecommerce"], "build"),
        (["dagster"], ["docs", "init", "--help"], "build"),
        (["yaml"], ["import", "bird", "--tables", "missing.json", "--out", "x"], "build"),
        (["matplotlib"], ["eval", "--questions", "missing.jsonl"], "eval"),
        (["dagster"], ["eval", "--questions", "missing.jsonl"], "eval"),
        (["matplotlib"], ["bench", "retrieve"], "eval"),
        (["uvicorn"], ["serve"], "serve"),
        (["mcp"], ["mcp"], "serve"),
        (["dagster_celery"], ["worker", "--check"], "celery"),
    ],
)
def test_missing_extra_is_one_line_naming_it(blocked: list[str], argv: list[str], extra: str) -> None:
    proc = _run(blocked, *argv)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert f"pip install 'schemarag[{extra}]'" in lines[0]
    assert repr(blocked[0]) in lines[0]  # names the module that is missing
    assert proc.stdout == ""


def test_query_commands_need_no_extra() -> None:
    """With every optional module refused, the query side still parses its arguments."""
    proc = _run(sorted(EXTRA_BY_MODULE), "retrieve", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "--db" in proc.stdout


def test_every_named_extra_exists_in_pyproject() -> None:
    extras = _pyproject_extras()
    named = set(EXTRA_BY_COMMAND.values()) | set(EXTRA_INCLUDES) | set(EXTRA_BY_MODULE.values())
    assert named <= set(extras), named - set(extras)
    for extra, subs in EXTRA_INCLUDES.items():
        for sub in subs:
            assert f"schemarag[{sub}]" in extras[extra]
    assert set(EXTRA_BY_COMMAND) <= set(COMMANDS) | {"ui"}


def test_modules_of_an_extra_follow_its_includes() -> None:
    assert "dagster" in modules_of("build") and "pyarrow" in modules_of("build")
    assert set(modules_of("build")) < set(modules_of("eval"))
    assert "matplotlib" not in modules_of("build")
