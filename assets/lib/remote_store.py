"""Publishing a locally built version to object storage through ``pyarrow.fs``.

The build writes and verifies ``<db>/<key>/`` locally first (staged, fsynced, renamed: see
``artifact_store``), then mirrors it: every file but ``manifest.json``, then the manifest (its
presence marks a complete version, as locally), then ``CURRENT`` is written to a temporary object
and moved over the old one, which object stores apply atomically: a reader sees the old or the
new key, never a half-written pointer. Versions already present remotely are not re-uploaded.
Old remote versions are left for the bucket's lifecycle rules (docs/scale-out.md).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from schemarag.runtime.artifact.format import CURRENT, MANIFEST
from schemarag.runtime.artifact.remote import filesystem, read_remote_current, remote_database_root

log = logging.getLogger(__name__)


def upload_version(local_version: Path, uri: str, db: str, tenant: str | None = None) -> bool:
    """Mirror ``local_version`` (a complete ``<key>`` folder) to ``uri``; False if already there."""
    import pyarrow.fs as pafs

    fs, base = filesystem(uri)
    target = f"{remote_database_root(base, db, tenant)}/{local_version.name}"
    if fs.get_file_info(f"{target}/{MANIFEST}").type == pafs.FileType.File:
        return False
    files = sorted(p for p in local_version.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.name == MANIFEST)  # the manifest last: it marks completeness
    local = pafs.LocalFileSystem()
    for path in files:
        rel = path.relative_to(local_version).as_posix()
        fs.create_dir(f"{target}/{rel}".rsplit("/", 1)[0], recursive=True)
        pafs.copy_files(str(path), f"{target}/{rel}", source_filesystem=local, destination_filesystem=fs)
    log.info("uploaded %d files to %s", len(files), target)
    return True


def publish_remote(uri: str, db: str, key: str, tenant: str | None = None) -> str | None:
    """Point the remote ``CURRENT`` at ``key`` (write a temporary object, move it over); the old key."""
    fs, base = filesystem(uri)
    root = remote_database_root(base, db, tenant)
    previous = read_remote_current(fs, root)
    if previous == key:
        return previous
    tmp = f"{root}/{CURRENT}.tmp-{os.getpid()}-{time.monotonic_ns()}"
    with fs.open_output_stream(tmp) as fh:
        fh.write(f"{key}\n".encode())
    fs.move(tmp, f"{root}/{CURRENT}")
    log.info("%s/%s -> %s (was %s)", root, CURRENT, key, previous)
    return previous
