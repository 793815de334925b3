"""``tables.parquet`` (the pre-rendered DDL of every table) reused while the schema is unchanged.

Rendering 2,000 tables' ``CREATE TABLE`` pieces was a tenth of a one-doc edit's rebuild of a
120,000-column warehouse, and a doc edit never changes them: the file is a function of the
schema file's bytes, the rendering and writing code and the pyarrow and sqlglot versions, so
those are its key. One folder per database and tenant under ``<artifacts>/_cache/tables/``
holding the latest file, named ``<key>-<sha256 of its bytes>.parquet``: a damaged file fails
its hash and is a miss.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from schemarag.assets.lib.chunk_cache import source_fingerprint
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import embedding_cache_dir

_CODE_MODULES = (
    "schemarag.assets.lib.artifact_store",
    "schemarag.assets.lib.tables_cache",
    "schemarag.runtime.artifact.format",
    "schemarag.runtime.formatting",
    "schemarag.runtime.core.schema",
)
_PACKAGES = ("pyarrow", "sqlglot")
_ENTRY = re.compile(r"^([0-9a-f]{32})-([0-9a-f]{64})\.parquet$")


def tables_cache_dir(artifacts: Path, db: str, tenant: str | None = None) -> Path:
    base = embedding_cache_dir(artifacts).parent / "tables"
    if tenant:
        base = base / "_tenants" / check_name(tenant, "tenant")
    return base / check_name(db, "database")


def tables_key(schema_bytes: bytes) -> str:
    h = hashlib.sha256(source_fingerprint(_CODE_MODULES, _PACKAGES).encode())
    h.update(hashlib.sha256(schema_bytes).digest())
    return h.hexdigest()[:32]


class TablesCache:
    """``get``/``put`` of one database's ``tables.parquet`` bytes by :func:`tables_key`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _entries(self) -> list[tuple[Path, str, str]]:
        try:
            names = [p for p in self.folder.iterdir() if p.is_file()]
        except OSError:
            return []
        return [(p, m[1], m[2]) for p in names if (m := _ENTRY.match(p.name))]

    def get(self, key: str) -> bytes | None:
        for path, k, digest in self._entries():
            if k != key:
                continue
            try:
                data = path.read_bytes()
            except OSError:
                return None
            return data if hashlib.sha256(data).hexdigest() == digest else None
        return None

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key`` (written to a temporary name, then renamed) and remove
        every other entry of this database."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{key}-{hashlib.sha256(data).hexdigest()}.parquet"
        tmp = self.folder / f".{path.name}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)
        for old, _, _ in self._entries():
            if old != path:
                old.unlink(missing_ok=True)
