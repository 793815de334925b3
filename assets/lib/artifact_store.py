"""Writing and publishing artifacts: staged, fsynced, renamed, then pointed at.

Order of operations, each step crash-safe:
1. write every file into ``<db root>/.staging-<key>-<pid>`` and fsync it;
2. write ``manifest.json`` last (it lists every file's checksum), fsync the folder;
3. ``rename`` the staging folder to ``<db root>/<key>`` (atomic on one filesystem);
4. write ``CURRENT.tmp``, fsync, ``rename`` over ``CURRENT``.
A crash before 4 leaves ``CURRENT`` naming the previous complete version; a reader never
sees a half-written folder because unfinished ones never carry a final name.

A build holds an exclusive ``flock`` on ``<staging folder>.lock`` (created before the folder,
removed after it is renamed or deleted) for as long as it writes. The kernel drops the lock
when the process dies, however it dies, so :func:`prune` (run by every build) can tell a live
writer's staging folder (lock held) from a dead one's (lock free, or no lock file) and
deletes only the dead: a crashed build's leftovers go on the next build, not after an hour.

``SCHEMARAG_FAULT_INJECT`` (``before_rename`` or ``before_current``) kills the process with
SIGKILL at that point; the fault tests use it to prove the above.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schemarag import __version__
from schemarag.assets.lib.history_arrays import HistoryArrays
from schemarag.assets.lib.tables_cache import TablesCache, tables_key
from schemarag.runtime.artifact.chunk_model import CHUNK_FIELDS, Chunk
from schemarag.runtime.artifact.format import (
    CURRENT,
    DEFAULT_COLUMN_VECTORS,
    FORMAT_VERSION,
    HISTORY_COLUMNS,
    HISTORY_EXAMPLE_COLUMNS,
    HISTORY_EXAMPLE_INDPTR,
    HISTORY_EXAMPLE_TABLES,
    HISTORY_EXAMPLE_TERM_INDPTR,
    HISTORY_EXAMPLE_TERM_ROWS,
    HISTORY_EXAMPLE_TERM_WEIGHTS,
    HISTORY_EXAMPLE_VOCAB,
    HISTORY_EXAMPLES,
    HISTORY_JOINS,
    HISTORY_PAIRS,
    HISTORY_TABLES,
    LANCE_DIR,
    LANCE_TABLE,
    MANIFEST,
    file_checksums,
)
from schemarag.runtime.core.bm25 import K1, B, BM25Arrays
from schemarag.runtime.core.errors import ArtifactError
from schemarag.runtime.core.schema import Database
from schemarag.runtime.formatting import render_schema

log = logging.getLogger(__name__)
STAGING_PREFIX = ".staging-"
LOCK_SUFFIX = ".lock"
LANCE_CHUNK_COLUMNS = ("chunk_id", "table", "chunk_type", "column", "text")


@dataclass
class ArtifactPayload:
    """Everything one artifact holds, computed by the build's assets."""

    key: str
    database: Database
    schema_bytes: bytes
    chunks: list[Chunk]
    bm25: BM25Arrays
    typo_keys: np.ndarray
    typo_terms: np.ndarray
    embeddings: np.ndarray
    model: dict[str, Any]
    params: dict[str, Any]
    inputs: dict[str, Any]
    tenant: str | None = None
    warnings: list[str] = field(default_factory=list)
    history: HistoryArrays | None = None  # None: no imported query history, no history files


def _fault(point: str) -> None:
    if os.environ.get("SCHEMARAG_FAULT_INJECT") == point:
        log.error("fault injection: killing the build at %s", point)
        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _chunk_columns(chunks: list[Chunk]) -> dict[str, list[Any]]:
    """:data:`CHUNK_FIELDS` as columns, the values :meth:`Chunk.to_dict` gives, without a dict
    per chunk (that was half of writing ``chunks.parquet`` for a 120,000-column warehouse)."""
    cols: dict[str, list[Any]] = {}
    for f in CHUNK_FIELDS:
        if f in ("related_tables", "keywords"):
            cols[f] = [list(getattr(c, f)) for c in chunks]
        else:
            cols[f] = [getattr(c, f) for c in chunks]
    return cols


def _write_tables(db: Database, path: Path) -> None:
    """``tables.parquet``: one row per table, its DDL pieces rendered once (sqlglot)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    ddl = render_schema(db)
    tnames = [t.name for t in db.tables]
    pq.write_table(
        pa.table(
            {
                "name": tnames,
                "description": [t.description for t in db.tables],
                "name_sql": [ddl[n].name_sql for n in tnames],
                "columns": [list(ddl[n].columns) for n in tnames],
                "column_sql": [list(ddl[n].column_sql) for n in tnames],
                "comments": [list(ddl[n].comments) for n in tnames],
                "key_columns": [list(ddl[n].key_columns) for n in tnames],
                "pk_sql": [ddl[n].pk_sql for n in tnames],
                "fk_columns": [[c for c, _ in ddl[n].fk_sql] for n in tnames],
                "fk_sql": [[s for _, s in ddl[n].fk_sql] for n in tnames],
                "neighbours": [sorted(db.neighbours(n)) for n in tnames],
            }
        ),
        path,
    )


def _write_parquet(payload: ArtifactPayload, folder: Path, tables_cache: TablesCache | None) -> Any:
    """Write ``chunks.parquet`` and ``tables.parquet``; returns the columns of the chunks'
    Arrow table that :func:`_write_lance` reuses (the rest, keywords and related tables, is
    freed before LanceDB indexes). ``tables.parquet`` is copied from
    ``tables_cache`` when it holds the file for these exact schema bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    chunk_table = pa.table(_chunk_columns(payload.chunks))
    pq.write_table(chunk_table, folder / "chunks.parquet")
    tables = folder / "tables.parquet"
    key = tables_key(payload.schema_bytes) if tables_cache else ""
    cached = tables_cache.get(key) if tables_cache else None
    if cached is not None:
        tables.write_bytes(cached)
    else:
        _write_tables(payload.database, tables)
        if tables_cache:
            tables_cache.put(key, tables.read_bytes())
    return chunk_table.select(list(LANCE_CHUNK_COLUMNS))


def _write_lance(payload: ArtifactPayload, chunk_table: Any, folder: Path) -> None:
    """LanceDB copy of the chunks with vectors and a full-text index, for scale-out readers.
    ``chunk_table`` is :func:`_write_parquet`'s Arrow table of the same chunks."""
    import lancedb
    import pyarrow as pa

    dim = payload.embeddings.shape[1]
    flat = pa.array(payload.embeddings.reshape(-1).astype(np.float32), type=pa.float32())
    table = pa.table(
        {
            "chunk_idx": pa.array(range(len(payload.chunks)), type=pa.int32()),
            **{name: chunk_table.column(name) for name in LANCE_CHUNK_COLUMNS},
            "vector": pa.FixedSizeListArray.from_arrays(flat, dim),
        }
    )
    conn = lancedb.connect(str(folder / LANCE_DIR))
    tbl = conn.create_table(LANCE_TABLE, data=table)
    tbl.create_fts_index("text", use_tantivy=False)


@contextmanager
def staging_folder(db_root: Path, key: str) -> Iterator[Path]:
    """A fresh staging folder under ``db_root``, locked (see the module docstring) until the
    block ends; whatever is still at the staging path then is deleted."""
    db_root.mkdir(parents=True, exist_ok=True)
    staging = db_root / f"{STAGING_PREFIX}{key}-{os.getpid()}-{time.monotonic_ns()}"
    lock = staging.with_name(staging.name + LOCK_SUFFIX)
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # before the folder exists: no one sees it unlocked
        staging.mkdir()
        try:
            yield staging
        finally:
            shutil.rmtree(staging, ignore_errors=True)  # nothing left after a successful rename
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _writer_alive(lock: Path) -> bool:
    """Whether a live process holds ``lock`` (a missing lock file means no writer)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases the probe's own lock
    return False


def sweep_dead_staging(db_root: Path) -> list[str]:
    """Delete staging folders (and lock files) of builds that are no longer running."""
    removed = []
    for child in sorted(db_root.iterdir()):
        if not child.name.startswith(STAGING_PREFIX):
            continue
        if child.name.endswith(LOCK_SUFFIX):
            folder, lock = child.with_name(child.name.removesuffix(LOCK_SUFFIX)), child
        else:
            folder, lock = child, child.with_name(child.name + LOCK_SUFFIX)
        if not child.exists() or _writer_alive(lock):
            continue
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
            log.info("removed %s: the build that staged it is no longer running", folder)
        lock.unlink(missing_ok=True)
    return removed


def write_artifact(
    db_root: Path, payload: ArtifactPayload, write_lance: bool = True, tables_cache: TablesCache | None = None
) -> tuple[Path, bool]:
    """Write ``payload`` as ``<db_root>/<key>``; ``(path, built)`` with built=False if it existed."""
    final = db_root / payload.key
    if (final / MANIFEST).is_file():
        return final, False
    with staging_folder(db_root, payload.key) as staging:
        return _write_staged(staging, final, db_root, payload, write_lance, tables_cache)


def _write_staged(
    staging: Path,
    final: Path,
    db_root: Path,
    payload: ArtifactPayload,
    write_lance: bool,
    tables_cache: TablesCache | None,
) -> tuple[Path, bool]:
    chunk_table = _write_parquet(payload, staging, tables_cache)
    (staging / "schema.json").write_bytes(payload.schema_bytes)
    (staging / "vocab.json").write_text(json.dumps(list(payload.bm25.vocab)), encoding="utf-8")
    arrays = {
        "bm25_indptr.npy": payload.bm25.indptr,
        "bm25_indices.npy": payload.bm25.indices,
        "bm25_data.npy": payload.bm25.data,
        "bm25_idf.npy": payload.bm25.idf,
        "typo_keys.npy": payload.typo_keys,
        "typo_terms.npy": payload.typo_terms,
        "embeddings.npy": np.ascontiguousarray(payload.embeddings, dtype=np.float32),
        "chunk_table.npy": _chunk_table(payload),
    }
    if payload.history is not None:
        arrays |= _history_arrays(payload.history)
        _write_history_examples(payload.history, staging)
    for name, arr in arrays.items():
        np.save(staging / name, arr, allow_pickle=False)
    if write_lance:
        _write_lance(payload, chunk_table, staging)
    manifest = _manifest(payload, staging)
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
    for p in staging.rglob("*"):
        if p.is_file():
            _fsync_path(p)
    _fsync_path(staging)
    _fault("before_rename")
    try:
        os.rename(staging, final)
    except OSError:
        if (final / MANIFEST).is_file():  # a concurrent build of the same key won
            return final, False
        raise
    _fsync_path(db_root)
    return final, True


def _history_arrays(history: HistoryArrays) -> dict[str, np.ndarray]:
    """The history's ``.npy`` files (runtime/artifact/format.py ``HISTORY_*``)."""
    out = {
        HISTORY_TABLES: np.ascontiguousarray(history.tables, dtype=np.int64),
        HISTORY_PAIRS: np.ascontiguousarray(history.pairs, dtype=np.int64),
        HISTORY_JOINS: np.ascontiguousarray(history.joins, dtype=np.int64),
        HISTORY_COLUMNS: np.ascontiguousarray(history.columns, dtype=np.int64),
        HISTORY_EXAMPLE_INDPTR: np.ascontiguousarray(history.example_indptr, dtype=np.int64),
        HISTORY_EXAMPLE_TABLES: np.ascontiguousarray(history.example_tables, dtype=np.int32),
    }
    terms = history.example_terms
    if terms is not None:
        out |= {
            HISTORY_EXAMPLE_TERM_INDPTR: np.ascontiguousarray(terms.indptr, dtype=np.int64),
            HISTORY_EXAMPLE_TERM_ROWS: np.ascontiguousarray(terms.indices, dtype=np.int32),
            HISTORY_EXAMPLE_TERM_WEIGHTS: np.ascontiguousarray(terms.data, dtype=np.float32),
        }
    return out


def _write_history_examples(history: HistoryArrays, folder: Path) -> None:
    """``history_examples.parquet`` (one row per example chunk, in the history's order) and the
    vocabulary of their BM25 index."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {
        "example_id": pa.string(),
        "question": pa.string(),
        "sql": pa.string(),
        "tables": pa.list_(pa.string()),
        "runs": pa.int64(),
        "text": pa.string(),
    }
    columns = {c: pa.array(history.examples[c], type=types[c]) for c in HISTORY_EXAMPLE_COLUMNS}
    pq.write_table(pa.table(columns), folder / HISTORY_EXAMPLES)
    if history.example_terms is not None:
        vocab = json.dumps(list(history.example_terms.vocab))
        (folder / HISTORY_EXAMPLE_VOCAB).write_text(vocab, encoding="utf-8")


def _chunk_table(payload: ArtifactPayload) -> np.ndarray:
    index = {t.name: i for i, t in enumerate(payload.database.tables)}
    return np.array([index.get(c.table, -1) if c.table else -1 for c in payload.chunks], dtype=np.int32)


def _manifest(payload: ArtifactPayload, folder: Path) -> dict[str, Any]:
    by_type: dict[str, int] = {}
    for c in payload.chunks:
        by_type[c.chunk_type] = by_type.get(c.chunk_type, 0) + 1
    return {
        "format_version": FORMAT_VERSION,
        "schemarag_version": __version__,  # the writer (as bm25s records it); not part of the key
        "key": payload.key,
        "database": payload.database.name,
        # a union's member databases (Table.database): what routing groups tables by
        "databases": sorted({t.database for t in payload.database.tables if t.database}),
        "tenant": payload.tenant,
        "schema_version": payload.database.schema_version,
        "dialect": payload.database.dialect,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "inputs": payload.inputs,
        "params": {**payload.params, "bm25": {"k1": K1, "b": B}},
        "model": payload.model,
        # what column chunks were embedded with (runtime/artifact/format.py COLUMN_VECTOR_TIERS)
        "column_vectors": payload.params.get("column_vectors", DEFAULT_COLUMN_VECTORS),
        "counts": {
            "chunks": len(payload.chunks),
            "tables": len(payload.database.tables),
            "vocabulary": len(payload.bm25.vocab),
            "vectors": int(payload.embeddings.shape[0]),
            "by_type": dict(sorted(by_type.items())),
        },
        "warnings": payload.warnings,
        "files": file_checksums(folder),
        # only with an imported query history: a database without one keeps the manifest it had
        **({"history": payload.history.summary} if payload.history is not None else {}),
    }


def read_current(db_root: Path) -> str | None:
    try:
        return (db_root / CURRENT).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None


def publish(db_root: Path, key: str) -> None:
    """Point ``CURRENT`` at ``key`` atomically (write, fsync, rename)."""
    if not (db_root / key / MANIFEST).is_file():
        raise ArtifactError(f"{db_root / key}: no complete artifact to publish; build it first")
    _fault("before_current")
    tmp = db_root / f"{CURRENT}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, db_root / CURRENT)
    _fsync_path(db_root)
    history = db_root / "HISTORY"
    with open(history, "a", encoding="utf-8") as fh:
        fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {key}\n")


def prune(db_root: Path, keep: int = 3) -> list[str]:
    """Remove all but the ``keep`` most recently published versions (never CURRENT), and the
    staging folders of dead builds (:func:`sweep_dead_staging`)."""
    current = read_current(db_root)
    order: list[str] = []
    try:
        for line in (db_root / "HISTORY").read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 2:
                if parts[1] in order:
                    order.remove(parts[1])
                order.append(parts[1])
    except FileNotFoundError:
        pass
    recent = set(order[-keep:]) | ({current} if current else set())
    removed = []
    sweep_dead_staging(db_root)
    for child in db_root.iterdir():
        if child.name.startswith(STAGING_PREFIX):
            continue
        if child.is_dir() and (child / MANIFEST).is_file() and child.name not in recent:
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child.name)
    return sorted(removed)
