"""Artifacts on object storage (``s3://bucket/prefix``): fetched once into a local cache, then mapped.

The remote side has the same layout as a local artifacts folder: immutable ``<db>/<key>/``
versions (``_tenants/<tenant>/<db>/<key>/`` for a tenant) and a ``CURRENT`` object replaced
atomically by the build. Versions never change, so a local copy keyed by the content key is
valid forever: :func:`fetch_current` reads ``CURRENT`` (one small GET), downloads that version
only when the cache lacks it, and moves the cache's own ``CURRENT``. The retriever then memory-maps
the cached folder exactly like a locally built one; no request ever touches the network.

The filesystem is ``pyarrow.fs`` (already a base dependency): ``s3://`` with the endpoint from
``$SCHEMARAG_S3_ENDPOINT`` / ``$AWS_ENDPOINT_URL`` (MinIO, moto, Ceph...), credentials from the
usual ``AWS_*`` variables; any other URI pyarrow understands (``file://``, ``gs://``) works too.

>>> is_remote("s3://bucket/idx"), is_remote("artifacts"), is_remote("/srv/artifacts")
(True, False, False)
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from schemarag.runtime.artifact.format import CURRENT, MANIFEST
from schemarag.runtime.core.errors import ArtifactError, ArtifactNotFoundError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import DEFAULT_ARTIFACTS, database_artifacts

log = logging.getLogger(__name__)

FETCH_PREFIX = ".fetch-"


def is_remote(location: str | Path | None) -> bool:
    """True for a URI with a scheme (``s3://...``); plain and Windows drive paths are local."""
    return isinstance(location, str) and "://" in location and len(location.split("://", 1)[0]) > 1


def _location(artifacts: str | Path | None, env: Mapping[str, str]) -> str | Path:
    return artifacts or env.get("SCHEMARAG_ARTIFACTS") or DEFAULT_ARTIFACTS


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$SCHEMARAG_CACHE_DIR``, else ``$XDG_CACHE_HOME/schemarag``, else ``~/.cache/schemarag``."""
    env = os.environ if env is None else env
    if env.get("SCHEMARAG_CACHE_DIR"):
        return Path(env["SCHEMARAG_CACHE_DIR"])
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "schemarag"


def local_artifacts(artifacts: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The local folder standing for ``artifacts``: itself, or a remote location's cache copy.

    The cache folder is named by a hash of the URI (hostile bucket names never become paths).
    """
    env = os.environ if env is None else env
    loc = _location(artifacts, env)
    if not is_remote(loc):
        return Path(loc)
    digest = hashlib.sha256(str(loc).rstrip("/").encode()).hexdigest()[:16]
    return cache_dir(env) / "remote" / digest / "artifacts"


def filesystem(uri: str, env: Mapping[str, str] | None = None):
    """``(pyarrow filesystem, path inside it)`` for a remote artifacts URI."""
    import pyarrow.fs as pafs

    env = os.environ if env is None else env
    parts = urlsplit(uri)
    if parts.scheme != "s3":
        fs, path = pafs.FileSystem.from_uri(uri)
        return fs, path.rstrip("/")
    kwargs: dict = {}
    endpoint = (
        env.get("SCHEMARAG_S3_ENDPOINT") or env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    )
    if endpoint:
        ep = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        kwargs.update(endpoint_override=ep.netloc, scheme=ep.scheme)
    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if region:
        kwargs["region"] = region
    return pafs.S3FileSystem(**kwargs), f"{parts.netloc}{parts.path}".rstrip("/")


def remote_database_root(base: str, db: str, tenant: str | None = None) -> str:
    """``<base>/<db>`` or ``<base>/_tenants/<tenant>/<db>``, names checked like local paths."""
    return f"{base}/{database_artifacts(Path(), db, tenant).as_posix()}"


def read_remote_current(fs, db_root: str) -> str | None:
    """The key ``<db_root>/CURRENT`` names, or None when nothing is published there."""
    try:
        with fs.open_input_stream(f"{db_root}/{CURRENT}") as fh:
            raw = fh.read(256).decode("utf-8").strip()
    except FileNotFoundError:
        return None
    return check_name(raw, "artifact key") if raw else None


def _write_local_current(root: Path, key: str) -> None:
    try:
        if (root / CURRENT).read_text(encoding="utf-8").strip() == key:
            return  # unchanged: keep the inode, so the retriever's stat sees no new version
    except FileNotFoundError:
        pass
    tmp = root / f"{CURRENT}.tmp-{os.getpid()}-{time.monotonic_ns()}"
    tmp.write_text(key + "\n", encoding="utf-8")
    os.replace(tmp, root / CURRENT)


def fetch_current(
    artifacts: str, db: str, tenant: str | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """Copy the version ``CURRENT`` names into the local cache (if missing); the local db root.

    An unreachable store keeps serving the cached ``CURRENT`` (logged), so a restart during an
    object-store outage still answers from the last version this machine saw.
    """

    env = os.environ if env is None else env
    local_root = database_artifacts(local_artifacts(artifacts, env), db, tenant)
    fs, base = filesystem(artifacts, env)
    remote_root = remote_database_root(base, db, tenant)
    try:
        key = read_remote_current(fs, remote_root)
    except OSError as exc:
        if (local_root / CURRENT).is_file():
            log.warning("%s: unreachable (%s); serving the cached version", artifacts, exc)
            return local_root
        raise ArtifactError(f"{artifacts}: cannot read {remote_root}/{CURRENT}: {exc}") from exc
    if key is None:
        where = f"tenant {tenant!r}, " if tenant else ""
        raise ArtifactNotFoundError(
            f"no published index for {where}database {db!r} at {artifacts}; "
            f"run `schemarag build --db {db} --artifacts {artifacts}`"
        )
    if not (local_root / key / MANIFEST).is_file():
        copy_version(fs, f"{remote_root}/{key}", local_root, key, artifacts)
        log.info("fetched %s/%s into %s", remote_root, key, local_root / key)
    _write_local_current(local_root, key)
    return local_root


def copy_version(fs: Any, source: str, local_root: Path, key: str, where: str) -> Path:
    """Copy the remote version folder ``source`` into ``local_root/key``: into a staging folder
    first, renamed only when complete (a concurrent copy of the same key may win the rename), so
    a reader never maps half a version. ``where`` names the location in the error."""
    import pyarrow.fs as pafs

    final = local_root / key
    local_root.mkdir(parents=True, exist_ok=True)
    staging = local_root / f"{FETCH_PREFIX}{key}-{os.getpid()}-{time.monotonic_ns()}"
    try:
        staging.mkdir()  # a local destination folder must exist (file:// sources)
        pafs.copy_files(
            source, str(staging), source_filesystem=fs, destination_filesystem=pafs.LocalFileSystem()
        )
        if not (staging / MANIFEST).is_file():
            raise ArtifactError(f"{where}: {source} has no {MANIFEST}; rebuild it")
        try:
            os.rename(staging, final)
        except OSError:
            if not (final / MANIFEST).is_file():  # else a concurrent copy of the same key won
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def local_database_root(artifacts: str | Path | None, db: str, tenant: str | None = None) -> Path:
    """Where ``db``'s versions are mapped from: the local folder, or a remote location's cache copy.

    Pure path arithmetic (no I/O), so a lookup of an already open index stays local.
    """
    return database_artifacts(local_artifacts(artifacts), db, tenant)


def fetch_if_remote(artifacts: str | Path | None, db: str, tenant: str | None = None) -> None:
    """On first open of a remote index: bring its current version into the cache (else no-op)."""
    loc = _location(artifacts, os.environ)
    if is_remote(loc):
        fetch_current(str(loc), db, tenant)
