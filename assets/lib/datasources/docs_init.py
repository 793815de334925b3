"""``schemarag docs init``: snapshot a datasource, write its schema JSON and editable docs.

Order matters for safety: the snapshot is taken completely before anything is written, so a
bad DSN, a refused connection or a permission error leaves every existing file untouched.
Each file is written to a temporary sibling and renamed into place, and the schema JSON goes
last, so ``<name>.json`` only moves once its docs exist. An unchanged fingerprint keeps the
previous ``schema_version`` and JSON bytes, so nothing downstream rebuilds.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from schemarag.assets.lib.datasources.config import DatasourceEntry
from schemarag.assets.lib.datasources.docs_merge import doc_table_name, mark_table_dropped, merge_table_doc
from schemarag.assets.lib.datasources.snapshot import SnapshotResult, fingerprint, take_snapshot
from schemarag.assets.lib.docs_writer import doc_file_name, fk_index, render_index_doc, render_table_doc
from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.core.paths import docs_dir, schema_path
from schemarag.runtime.core.schema import Database, load_schema

log = logging.getLogger(__name__)


@dataclass
class DocsInitResult:
    name: str
    tenant: str
    version: str
    fingerprint: str
    changed: bool
    json_written: bool
    schema_file: Path
    docs_folder: Path
    tables: int
    columns: int
    snapshot_seconds: float
    total_seconds: float
    created: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    dropped_tables: list[str] = field(default_factory=list)
    skipped_tables: list[str] = field(default_factory=list)
    pii_columns: list[str] = field(default_factory=list)
    inferred_joins: list[str] = field(default_factory=list)  # "t.col -> p.key (values|names)"


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary sibling + ``os.replace`` so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def latest_snapshot(data: Path, name: str) -> Database | None:
    """The last snapshot written for ``name`` (authoritative for SQL validation), or None."""
    path = schema_path(data, name)
    return load_schema(path) if path.is_file() else None


def snapshot_changed(entry: DatasourceEntry, data: Path) -> tuple[bool, SnapshotResult]:
    """Take a snapshot and say whether its fingerprint differs from the one on disk (for sensors)."""
    snap = take_snapshot(entry)
    prev = _previous(data, entry.name)
    return prev is None or fingerprint(prev) != snap.fingerprint, snap


def _previous(data: Path, name: str) -> Database | None:
    try:
        return latest_snapshot(data, name)
    except SchemaragError as exc:
        log.warning("previous snapshot of %r unreadable, treating as changed: %s", name, exc)
        return None


def docs_init(
    entry: DatasourceEntry, data: Path, *, force: bool = False, now: dt.datetime | None = None
) -> DocsInitResult:
    """Snapshot ``entry`` and write ``<data>/<name>.json`` and ``<data>/<name>/docs/*.md``."""
    start = time.perf_counter()
    snap = take_snapshot(entry, now)  # every connection error happens here, before any write
    db = snap.database
    prev = _previous(data, entry.name)
    changed = prev is None or fingerprint(prev) != snap.fingerprint
    if not changed and prev is not None and prev.schema_version:
        db.schema_version = prev.schema_version  # same structure, same version, same chunk IDs
    version = db.schema_version or ""
    result = DocsInitResult(
        name=entry.name,
        tenant=entry.tenant,
        version=version,
        fingerprint=snap.fingerprint,
        changed=changed,
        json_written=changed or force,
        schema_file=schema_path(data, entry.name),
        docs_folder=docs_dir(data, entry.name),
        tables=len(db.tables),
        columns=sum(len(t.columns) for t in db.tables),
        snapshot_seconds=snap.seconds,
        total_seconds=0.0,
        skipped_tables=snap.skipped_tables,
        pii_columns=snap.pii_columns,
        inferred_joins=snap.inferred_joins,
    )
    _write_docs(db, result)
    if result.json_written:
        atomic_write(
            result.schema_file, json.dumps(db.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
        )
    result.total_seconds = time.perf_counter() - start
    return result


def _existing_docs(folder: Path) -> dict[str, Path]:
    """Table name (lower-cased) -> doc file, read from each file's ``# Table:`` heading."""
    out: dict[str, Path] = {}
    for path in sorted(folder.glob("*.md")):
        if path.name == "_index.md":
            continue
        name = doc_table_name(path.read_text(encoding="utf-8"))
        if name is None:
            log.warning("%s: no '# Table: <name>' heading; left alone", path)
        elif name.lower() in out:
            log.warning("%s: table %s already documented in %s; left alone", path, name, out[name.lower()])
        else:
            out[name.lower()] = path
    return out


def _write_docs(db: Database, result: DocsInitResult) -> None:
    folder = result.docs_folder
    folder.mkdir(parents=True, exist_ok=True)
    existing = _existing_docs(folder)
    fks = fk_index(db)  # each table's keys by lookup: scanning every key per table is quadratic
    for table in db.tables:
        path = existing.pop(table.name.lower(), None)
        if path is None:
            path = folder / doc_file_name(table.name)
            if path.exists():
                log.warning("%s exists but documents another table; not overwritten", path)
                continue
            atomic_write(path, render_table_doc(db, table, fks))
            result.created.append(path.name)
            continue
        old = path.read_text(encoding="utf-8")
        new = merge_table_doc(old, table, result.version)
        if new != old:
            atomic_write(path, new)
            result.merged.append(path.name)
    for path in existing.values():  # tables that left the database
        old = path.read_text(encoding="utf-8")
        new = mark_table_dropped(old, result.version)
        if new != old:
            atomic_write(path, new)
            result.dropped_tables.append(path.name)
    index = folder / "_index.md"
    if not index.exists():
        atomic_write(index, render_index_doc(db))
        result.created.append(index.name)
