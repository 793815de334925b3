"""Query services import ``runtime`` only: it must never pull in Dagster (fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import sys
import runtime
from runtime import Retriever, retrieve, IndexArtifact, format_focused_schema
import runtime.api, runtime.artifact_reader, runtime.build_inputs, runtime.artifact_store
import runtime.cli, runtime.commands.build_cmd, runtime.commands.retrieve_cmd

FORBIDDEN = ('dagster', 'dagster_webserver', 'assets', 'pipelines')
print(sorted(m for m in sys.modules if m.split('.')[0] in FORBIDDEN))
"""


def test_importing_runtime_does_not_import_dagster() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_probe_detects_dagster_when_it_is_imported() -> None:
    """The probe above is not vacuous: importing the pipelines does show up."""
    proc = subprocess.run(
        [sys.executable, "-c", "import pipelines.build\n" + PROBE],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "'dagster'" in proc.stdout and "'pipelines.build'" in proc.stdout
