"""dbt inputs that exhaust memory or time (issue 39, findings 4 and 5), through the real importer:
a YAML alias bomb in ``vars:`` is a one-line error; unbounded Jinja (a 3 GB string, nested
``range(100000)`` loops, a recursive macro) is kept unrendered with one warning; each in seconds,
and the rest of the project still imports."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.dbt import import_dbt
from schemarag.tools.importers.dbt.project import expanded_nodes
from schemarag.tools.importers.limits import ImportLimitError

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dbt_warehouse"
# the bomb: 1 KB, nine levels of ten aliases: 10^9 nodes once expanded
ALIAS_BOMB = "  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
) + "  i: *a8\n"  # fmt: skip


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "p"
    shutil.copytree(FIXTURE, project, symlinks=True)
    return project


def test_a_yaml_alias_bomb_is_a_one_line_error_in_seconds(tmp_path: Path) -> None:
    project = _project(tmp_path)
    config = project / "dbt_project.yml"
    config.write_text(config.read_text().replace("vars:\n", "vars:\n" + ALIAS_BOMB))
    assert len(ALIAS_BOMB) < 1100
    (project / "models" / "uses_bomb.sql").write_text("select '{{ var(\"i\") }}' as id\n")
    start = time.monotonic()
    cmd = [sys.executable, "-m", "schemarag", "import", "dbt", "--project", str(project)]
    done = subprocess.run([*cmd, "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert time.monotonic() - start < 30  # the interpreter start and imports included; the check is < 1 s
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "dbt_project.yml" in lines[0] and "--max-yaml-nodes" in lines[0], lines


def test_expanded_nodes_counts_aliases_without_expanding_them() -> None:
    import yaml

    bomb = yaml.safe_load("vars:\n" + ALIAS_BOMB)
    with pytest.raises(ImportLimitError, match="--max-yaml-nodes"):
        expanded_nodes(bomb, "x.yml")
    assert expanded_nodes({"a": [1, 2, {"b": 3}]}, "x.yml") == 8  # 2 maps, 1 list, 2 keys, 3 values
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ImportLimitError, match="refers to itself"):
        expanded_nodes(cyclic, "x.yml")


@pytest.mark.parametrize(
    "sql",
    [
        "select '{{ 'x' * 3000000000 }}' as id",
        "select 1 as id {% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        "{% macro f(n) %}{% if n < 12 %}{% for i in range(10) %}{{ f(n + 1) }}{% endfor %}{% endif %}"
        "{% endmacro %}select {{ f(0) }} as id",  # 10^12 calls, none deeper than 12
        "select '{{ 'x' | center(3000000000) }}' as id",
    ],
    ids=["huge-string", "nested-loops", "recursive-macro", "center"],
)
def test_unbounded_jinja_is_kept_unrendered_with_one_warning(tmp_path: Path, sql: str) -> None:
    project = _project(tmp_path)
    (project / "models" / "bomb.sql").write_text(sql + "\n")
    start = time.monotonic()
    report = import_dbt(project, tmp_path / "out")
    assert time.monotonic() - start < 20
    bombs = [w for w in report.warnings if "bomb.sql: Jinja not rendered" in w]
    assert len(bombs) == 1 and "render bound" in bombs[0] and "\n" not in bombs[0], report.warnings
    db = load_schema(next((tmp_path / "out").glob("*.json")))
    assert len(db.tables) > 5  # the rest of the project is imported
