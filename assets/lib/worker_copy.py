"""A source snapshot read on one machine, published from another (steps on different workers).

``source_snapshot`` records where its machine keeps the database's versions (``root``, in the
local copy of an ``s3://`` location, under that machine's ``$SCHEMARAG_CACHE_DIR``) and whether
the key was already built there (``existing``). On Dagster's Celery or Kubernetes executors
``published_index`` may run on another machine, whose local copy is elsewhere and may lack
that version: :func:`for_this_machine` re-answers both questions here, and when the version was
skipped upstream as already built but is missing here, downloads it from the object store (it
was uploaded when it was built), so the step checks and publishes the same files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from schemarag.assets.lib.inputs import SourceSnapshot
from schemarag.runtime.artifact.format import MANIFEST
from schemarag.runtime.artifact.remote import copy_version, filesystem, remote_database_root
from schemarag.runtime.core.errors import ArtifactError
from schemarag.runtime.core.paths import database_artifacts


def for_this_machine(snap: SourceSnapshot, artifacts: Path, remote: str | None, db: str) -> SourceSnapshot:
    """``snap`` with ``root``/``existing`` as seen from this machine's local ``artifacts`` folder."""
    root = database_artifacts(artifacts, db, snap.tenant)
    if root == snap.root:
        return snap
    existing = (root / snap.key / MANIFEST).is_file()
    if snap.existing and not existing:  # skipped upstream as built, but built elsewhere
        if remote is None:
            raise ArtifactError(
                f"{db}: version {snap.key} is in {snap.root} on the machine that read the sources, "
                f"not in {root} here; steps on several machines need s3:// artifacts or a shared folder"
            )
        download_version(remote, db, snap.key, snap.tenant, root)
        existing = True
    return replace(snap, root=root, existing=existing)


def download_version(uri: str, db: str, key: str, tenant: str | None, local_root: Path) -> Path:
    """Copy the complete remote version ``key`` of ``db`` into ``local_root/key`` (staged, renamed)."""
    import pyarrow.fs as pafs

    fs, base = filesystem(uri)
    source = f"{remote_database_root(base, db, tenant)}/{key}"
    if fs.get_file_info(f"{source}/{MANIFEST}").type != pafs.FileType.File:
        raise ArtifactError(f"{db}: version {key} is neither in this machine's copy nor complete at {uri}")
    return copy_version(fs, source, local_root, key, uri)
