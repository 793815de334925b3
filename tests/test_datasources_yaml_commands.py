"""The commands ``data/datasources.yaml`` tells a user to run exist and do what it says."""

from __future__ import annotations

import re
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_example_database_command_runs(tmp_path: Path) -> None:
    text = (ROOT / "data" / "datasources.yaml").read_text(encoding="utf-8")
    commands = re.findall(r"^#\s+(python -m \S+ .*)$", text, flags=re.MULTILINE)
    assert commands, "datasources.yaml no longer says how its example database is made"
    for command in commands:
        argv = shlex.split(command)
        target = tmp_path / Path(argv[-1]).name
        proc = subprocess.run(
            [sys.executable, *argv[1:-1], str(target)], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        with sqlite3.connect(target) as con:
            assert con.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] > 0
