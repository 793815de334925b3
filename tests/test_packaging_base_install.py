"""The base install, end to end: ``tools/check_base_install.sh`` in a fresh venv.

``pip install .`` (no extras) must give an offline query runtime within 450 MB whose search
works on an index built by the full install, with ``pip check`` clean and every build-side
command failing with one line that names its extra. Slow (a venv and a pip install); CI runs
the same script through ``make check-base-install``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "check_base_install.sh"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="the script copies the sources with git ls-files")
def test_base_install_is_a_small_working_offline_runtime(built_artifacts: Path) -> None:
    proc = subprocess.run(
        ["bash", str(SCRIPT), str(built_artifacts)], capture_output=True, text=True, timeout=1800
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "No broken requirements found." in out
    size = int(re.search(r"site-packages: (\d+) MB", out).group(1))
    assert size <= 450, out
    assert re.search(r"search ok, tables: \[.*'invoices'", out), out
    for extra in ("build", "eval"):
        assert f"pip install 'schemarag[{extra}]'" in out
    assert "check-base-install: OK" in out
