"""A dbt project built on packages, as a user imports it (issue 40, item 2): the warnings as one
line per kind with a count and the fix, ``-q`` one line, ``--verbose`` every warning; and
``--parse`` running dbt itself (a fake ``dbt`` on PATH stands for the user's install: the process
edge is real, dbt is not installed here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SCHEMARAG = str(Path(sys.executable).with_name("schemarag"))
N_MACRO_MODELS = 30  # models whose Jinja calls adapter: one warning each before the summary


def _cli(*args: str, path: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [SCHEMARAG, "import", "dbt", *args], capture_output=True, text=True, timeout=300, env=env
    )


@pytest.fixture
def package_project(tmp_path: Path) -> Path:
    """Models like a Fivetran package's: ``adapter`` calls in the SQL; half list columns in a yml."""
    root = tmp_path / "shop_pkg"
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text("name: shop_pkg\nversion: '1.0'\nprofile: shop_pkg\n")
    yml = ["version: 2", "models:"]
    for i in range(N_MACRO_MODELS):
        (root / "models" / f"stg_thing_{i}.sql").write_text(
            "select {{ adapter.get_columns_in_relation(ref('base')) }} from {{ ref('base') }}\n"
        )
        if i % 2 == 0:
            yml += [f"  - name: stg_thing_{i}", "    columns:", "      - name: id", "      - name: amount"]
    (root / "models" / "base.sql").write_text("select 1 as id, 2.5 as amount\n")
    (root / "models" / "schema.yml").write_text("\n".join(yml) + "\n")
    return root


def _warning_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("warning: ")]


def test_warnings_collapse_to_one_line_per_kind_with_the_fix(package_project: Path, tmp_path: Path) -> None:
    done = _cli("--project", str(package_project), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    lines = _warning_lines(done.stderr)
    jinja = [ln for ln in lines if "Jinja not rendered" in ln]
    skipped = [ln for ln in lines if "no known columns" in ln]
    assert len(jinja) == 1 and f"warning: {N_MACRO_MODELS} models:" in jinja[0], lines
    assert "'adapter' is undefined x30" in jinja[0]
    assert "run `dbt deps` and `dbt parse`, then --manifest target/manifest.json" in jinja[0]
    assert "`dbt docs generate` for --catalog target/catalog.json" in jinja[0]
    assert len(skipped) == 1 and "15 models skipped" in skipped[0], lines
    assert "--manifest target/manifest.json --catalog target/catalog.json" in skipped[0]
    assert len(done.stderr.splitlines()) <= 6, done.stderr  # imported, dbt, 2 warnings, next
    assert "WARNING" not in done.stderr and "(--verbose lists each)" in done.stderr


def test_quiet_prints_only_the_summary_and_verbose_lists_each(package_project: Path, tmp_path: Path) -> None:
    quiet = _cli("--project", str(package_project), "--out", str(tmp_path / "q"), "-q")
    assert quiet.returncode == 0, quiet.stderr
    (line,) = quiet.stderr.splitlines()
    assert line.startswith("imported 1 datasource(s)") and "45 warning(s)" in line, line
    verbose = _cli("--project", str(package_project), "--out", str(tmp_path / "v"), "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    listed = [ln for ln in verbose.stderr.splitlines() if ln.startswith("  ") and "stg_thing_" in ln]
    assert len(listed) == 45, verbose.stderr  # 30 not rendered + 15 skipped, each with its file
    assert len(_warning_lines(verbose.stderr)) == 2


def test_parse_without_dbt_on_path_says_so_in_one_line(package_project: Path, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _cli("--project", str(package_project), "--out", str(tmp_path / "o"), "--parse", path=str(empty))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "`dbt` is not on PATH" in line and "--manifest target/manifest.json" in line, line


FAKE_DBT = """#!{python}
import json, os, shutil, sys
with open({log!r}, "a") as fh:
    fh.write(json.dumps([os.getcwd(), *sys.argv[1:]]) + "\\n")
if sys.argv[1] == "deps":
    os.makedirs("dbt_packages/some_package", exist_ok=True)
elif sys.argv[1] == "parse":
    os.makedirs("target", exist_ok=True)
    shutil.copy({manifest!r}, "target/manifest.json")
else:
    sys.exit("fake dbt: unexpected " + sys.argv[1])
"""


def _fake_dbt(tmp_path: Path, manifest: Path) -> tuple[Path, Path]:
    bin_dir, log = tmp_path / "fakebin", tmp_path / "dbt_calls.jsonl"
    bin_dir.mkdir()
    script = bin_dir / "dbt"
    script.write_text(FAKE_DBT.format(python=sys.executable, log=str(log), manifest=str(manifest)))
    script.chmod(0o755)
    return bin_dir, log


def test_parse_runs_dbt_deps_and_parse_then_reads_the_manifest(tmp_path: Path) -> None:
    project = tmp_path / "jaffle"
    shutil.copytree(FIXTURES / "dbt_warehouse", project, ignore=shutil.ignore_patterns("dbt_packages"))
    bin_dir, log = _fake_dbt(tmp_path, FIXTURES / "dbt_warehouse_target" / "manifest.json")
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    done = _cli("--project", str(project), "--out", str(tmp_path / "out"), "--parse", path=path)
    assert done.returncode == 0, done.stderr
    calls = [json.loads(ln) for ln in log.read_text().splitlines()]
    # packages.yml lists packages and none is installed: deps first; the project's profiles.yml
    assert calls == [
        [str(project), "deps", "--profiles-dir", str(project)],
        [str(project), "parse", "--profiles-dir", str(project)],
    ]
    schema = json.loads((tmp_path / "out" / "jaffle_warehouse.json").read_text())
    names = {t["name"] for t in schema["tables"]}
    assert "analytics_marts.orders" in names  # dbt's relation_name, read from the manifest
    # installed now: a second import parses only
    again = _cli("--project", str(project), "--out", str(tmp_path / "out2"), "--parse", "-q", path=path)
    assert again.returncode == 0, again.stderr
    assert [json.loads(ln)[1] for ln in log.read_text().splitlines()][2:] == ["parse"]
    assert len(again.stderr.splitlines()) == 1, again.stderr  # -q: no "running dbt" lines either


def test_a_failing_dbt_parse_is_one_line_with_dbt_s_last_words(tmp_path: Path, package_project: Path) -> None:
    bin_dir = tmp_path / "failbin"
    bin_dir.mkdir()
    script = bin_dir / "dbt"
    script.write_text(
        "#!/bin/sh\necho 'Running with dbt=1.9.0'\necho 'Could not find profile named shop_pkg'\nexit 2\n"
    )
    script.chmod(0o755)
    done = _cli("--project", str(package_project), "--out", str(tmp_path / "o"), "--parse", "-q",
                path=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")  # fmt: skip
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "`dbt parse`" in line and "exit 2" in line and "Could not find profile named shop_pkg" in line


def test_an_empty_packages_yml_imports(package_project: Path, tmp_path: Path) -> None:
    """Spider2-dbt tpch001 ships an empty packages.yml: a traceback before, nothing to say now."""
    (package_project / "packages.yml").write_text("# no packages yet\n")
    done = _cli("--project", str(package_project), "--out", str(tmp_path / "out"), "-q")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
