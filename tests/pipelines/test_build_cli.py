"""``schemarag build`` output: built / unchanged rows, the Dagster-free unchanged fast path, failures."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.assets.lib.artifact_store import read_current
from schemarag.cli import main

REPO = Path(__file__).resolve().parents[2]
FAST_PATH_PROBE = """
import sys
from schemarag.cli import main

rc = main(sys.argv[1:])
print("dagster imported:", "dagster" in sys.modules)
sys.exit(rc)
"""


@pytest.fixture
def artifacts_copy(built_artifacts: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "artifacts"
    shutil.copytree(built_artifacts, dest)
    return dest


def _probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", FAST_PATH_PROBE, *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_unchanged_fast_path_never_imports_dagster(data_copy: Path, artifacts_copy: Path) -> None:
    proc = _probe("build", "--data", str(data_copy), "--artifacts", str(artifacts_copy))
    assert proc.returncode == 0, proc.stderr
    for db in ("b2b_saas", "ecommerce"):
        key = read_current(artifacts_copy / db)
        assert re.search(rf"^{db}\s+unchanged key={key}$", proc.stdout, re.M), proc.stdout
    assert re.search(r"^done in \d+\.\d\ds; 0 failed$", proc.stdout, re.M)
    assert "dagster imported: False" in proc.stdout


def test_broken_schema_is_reported_and_others_stay_unchanged(data_copy: Path, artifacts_copy: Path) -> None:
    (data_copy / "b2b_saas.json").write_text('{"name": "b2b_saas", "tables": [{"name": 1}]}')
    proc = _probe("build", "--data", str(data_copy), "--artifacts", str(artifacts_copy))
    assert proc.returncode == 1
    assert re.search(r"^b2b_saas\s+FAILED\s+.*b2b_saas\.json", proc.stdout, re.M), proc.stdout
    assert re.search(r"^ecommerce\s+unchanged key=", proc.stdout, re.M)
    assert "1 failed" in proc.stdout and "dagster imported: False" in proc.stdout


def test_build_then_unchanged_then_forced(data_copy: Path, tmp_path: Path, capsys) -> None:
    common = ["build", "--data", str(data_copy), "--artifacts", str(tmp_path / "art"), "--db", "ecommerce"]
    assert main(common) == 0
    out, err = capsys.readouterr()
    m = re.search(r"^ecommerce\s+built\s+key=(\w+) tables=3 chunks=(\d+) embedded=(\d+) cached=0$", out, re.M)
    assert m, out
    key, chunks, embedded = m.group(1), int(m.group(2)), int(m.group(3))
    assert chunks == embedded > 0
    assert "materializing" in err and "materializing" not in out, "progress goes to stderr"

    assert main(common) == 0
    out, err = capsys.readouterr()
    assert re.search(rf"^ecommerce\s+unchanged key={key}$", out, re.M), out
    assert "materializing" not in err

    assert main([*common, "--force-dagster"]) == 0
    out, _ = capsys.readouterr()
    assert re.search(rf"^ecommerce\s+unchanged key={key} tables=3 chunks={chunks} embedded=0", out, re.M), out


def test_unknown_database_and_empty_data(tmp_path: Path, data_copy: Path, capsys) -> None:
    rc = main(["build", "--data", str(data_copy), "--artifacts", str(tmp_path / "a"), "--db", "nope"])
    out, _ = capsys.readouterr()
    assert rc == 1
    assert re.search(r"^nope\s+FAILED\s+.*nope\.json: schema file not found", out, re.M), out

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["build", "--data", str(empty), "--artifacts", str(tmp_path / "a")]) == 2
    _, err = capsys.readouterr()
    assert "no <db>.json schema files found" in err and str(empty) in err


def test_each_build_warning_is_printed_once_and_kept_in_the_run(tmp_path: Path) -> None:
    """A skipped doc file is reported once on the console (not again in Dagster's format) and
    recorded in the run's event log, where the UI shows it."""
    data = tmp_path / "data"
    (data / "ecommerce" / "docs").mkdir(parents=True)
    shutil.copy(REPO / "data" / "schemas" / "ecommerce.json", data / "ecommerce.json")
    (data / "ecommerce" / "docs" / "nosuch.md").write_text("# nosuch\n\nNo such table.\n")
    artifacts = tmp_path / "artifacts"
    proc = subprocess.run(
        [sys.executable, "-m", "schemarag", "build", "--data", str(data), "--artifacts", str(artifacts)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout + proc.stderr
    assert out.count("first heading is 'nosuch'") == 1, out
    assert "WARNING schemarag.build: ecommerce: " in out
    from schemarag.pipelines.build import default_instance

    instance = default_instance(artifacts)
    logged = [
        e.user_message
        for e in instance.all_logs(instance.get_runs()[0].run_id)
        if "first heading is 'nosuch'" in (e.user_message or "")
    ]
    assert len(logged) == 1
