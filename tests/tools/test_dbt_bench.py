"""``schemarag bench dbt``: every project under a folder imported and reported, failures as rows.

Runs over the repository's own dbt fixtures (the Spider2-dbt projects are not in the repository;
the slow test below runs them when they are present)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SPIDER2_DBT = Path(os.environ.get("SPIDER2_DBT_EXAMPLES", "/work/ext/spider2-dbt/examples"))


def _bench(projects: Path, out: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemarag",
            "bench",
            "dbt",
            "--projects",
            str(projects),
            "--out",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    return proc, json.loads(out.read_text()) if out.is_file() else []


def test_bench_reports_each_project_and_a_failure_as_a_row(tmp_path):
    projects = tmp_path / "projects"
    for name in ("dbt_shop", "dbt_warehouse"):
        shutil.copytree(FIXTURES / name, projects / name, symlinks=True)
    (projects / "empty").mkdir()
    (projects / "empty" / "dbt_project.yml").write_text("name: empty\n")
    proc, rows = _bench(projects, tmp_path / "out.json")
    assert proc.returncode == 1  # one project failed
    by_name = {r["project"]: r for r in rows}
    assert set(by_name) == {"dbt_shop", "dbt_warehouse", "empty"}
    assert by_name["dbt_warehouse"]["ephemeral"] == 1 and by_name["dbt_warehouse"]["disabled"] == 2
    assert by_name["dbt_warehouse"]["layers"]["marts"] >= 4
    assert "nothing to import" in by_name["empty"]["error"]
    assert "2/3 projects imported" in proc.stdout


@pytest.mark.slow
@pytest.mark.skipif(not SPIDER2_DBT.is_dir(), reason="Spider2-dbt examples not extracted here")
def test_every_spider2_dbt_project_imports(tmp_path):
    _, rows = _bench(SPIDER2_DBT, tmp_path / "out.json")
    failed = {r["project"]: r["error"] for r in rows if r["error"]}
    # Nothing in these is knowable from code: activity001 is a package's integration tests (every
    # model calls the uninstalled package's macros); divvy001, playbook001/002 and reddit001 hold
    # sources without columns and models that are only yml entries (their .sql is not in the
    # extract) or `select *` over those sources. Each fails with the error that says what to pass.
    assert set(failed) <= {"activity001", "divvy001", "playbook001", "playbook002", "reddit001"}, failed
    assert all("nothing to import" in e for e in failed.values())
    assert len(rows) >= 60
