"""Staging folders: a live build's is never touched, a dead build's goes on the next build.

Each writer is a real process holding the staging lock; "dead" is a SIGKILL, the way a build
crashes (issue 13 finding 6: a crashed build's staging folder used to linger for an hour).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from schemarag.assets.lib.artifact_store import LOCK_SUFFIX, STAGING_PREFIX, prune, sweep_dead_staging

_WRITER = """
import sys, time
from pathlib import Path
from schemarag.assets.lib.artifact_store import staging_folder
with staging_folder(Path(sys.argv[1]), "0123456789abcdef") as staging:
    (staging / "chunks.parquet").write_bytes(b"partial")
    print(staging, flush=True)
    time.sleep(600)
"""


def _start_writer(db_root: Path) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(db_root)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    staging = Path(proc.stdout.readline().strip())
    assert staging.is_dir() and staging.name.startswith(STAGING_PREFIX)
    return proc, staging


def test_live_writer_is_left_alone_and_a_killed_one_is_swept(tmp_path: Path) -> None:
    db_root = tmp_path / "shop"
    live, live_staging = _start_writer(db_root)
    dead, dead_staging = _start_writer(db_root)
    try:
        dead.send_signal(signal.SIGKILL)
        dead.wait(timeout=30)
        assert dead_staging.is_dir()  # SIGKILL ran no clean-up
        assert sweep_dead_staging(db_root) == [dead_staging.name]
        assert not dead_staging.exists()
        assert not dead_staging.with_name(dead_staging.name + LOCK_SUFFIX).exists()
        assert live_staging.is_dir() and (live_staging / "chunks.parquet").is_file()
        assert prune(db_root) == [] and live_staging.is_dir()  # what every build runs
    finally:
        live.kill()
        live.wait(timeout=30)
    assert sweep_dead_staging(db_root) == [live_staging.name]


def test_staging_without_a_lock_file_is_dead(tmp_path: Path) -> None:
    """A folder left by a build from before the lock (or whose lock file is gone)."""
    old = tmp_path / f"{STAGING_PREFIX}0123456789abcdef-999-1"
    old.mkdir()
    (old / "x.npy").write_bytes(b"x")
    orphan_lock = tmp_path / f"{STAGING_PREFIX}fedcba9876543210-998-2{LOCK_SUFFIX}"
    orphan_lock.write_bytes(b"")
    assert sweep_dead_staging(tmp_path) == [old.name]
    assert not old.exists() and not orphan_lock.exists()


def test_a_finished_writer_leaves_nothing_behind(tmp_path: Path) -> None:
    from schemarag.assets.lib.artifact_store import staging_folder

    with staging_folder(tmp_path, "0123456789abcdef") as staging:
        (staging / "a").write_text("a")
        os.rename(staging, tmp_path / "0123456789abcdef")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0123456789abcdef"]
