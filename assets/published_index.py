"""Stage 5: the published, content-addressed artifact, plus the invariants as asset checks."""

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import numpy as np
from dagster import AssetExecutionContext

from schemarag.assets.bm25_statistics import BM25Statistics
from schemarag.assets.chunk_embeddings import ChunkEmbeddings
from schemarag.assets.lib import progress
from schemarag.assets.lib.artifact_store import ArtifactPayload, prune, publish, read_current, write_artifact
from schemarag.assets.lib.chunking import ChunkSet
from schemarag.assets.lib.history_arrays import HistoryArrays
from schemarag.assets.lib.remote_store import publish_remote, upload_version
from schemarag.assets.lib.tables_cache import TablesCache, tables_cache_dir
from schemarag.assets.lib.worker_copy import for_this_machine
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import IndexPaths
from schemarag.assets.source_snapshot import SourceSnapshot
from schemarag.runtime.artifact.manifest import Manifest, read_manifest
from schemarag.runtime.artifact.reader import verify_files

CHECKS = (
    ("chunks_not_empty", "the chunk set is not empty"),
    ("vector_count_matches", "one vector per chunk"),
    ("dimension_matches_manifest", "vector dimension equals the manifest's model dimension"),
    ("chunk_ids_unique", "no two chunks share an ID"),
    ("chunk_tables_exist", "every chunk's table exists in the schema"),
)


@dataclass
class PublishOutcome:
    key: str
    path: Path
    built: bool
    previous: str | None
    removed: list[str]


def publish_index(
    snap: SourceSnapshot,
    chunks: ChunkSet,
    bm25: BM25Statistics | None,
    vectors: ChunkEmbeddings | None,
    root: Path,
    keep: int = 3,
    write_lance: bool = True,
    tables_cache: TablesCache | None = None,
    history: HistoryArrays | None = None,
) -> PublishOutcome:
    """Write (unless the key exists), point CURRENT at it, prune old versions. ``tables_cache``
    supplies ``tables.parquet`` when the schema bytes are unchanged (:mod:`.lib.tables_cache`);
    ``history``: the query history's arrays (None: the database has none)."""
    previous = read_current(root)
    if snap.existing or bm25 is None or vectors is None:
        path, built = root / snap.key, False
    else:
        payload = ArtifactPayload(
            key=snap.key,
            database=snap.database,
            schema_bytes=snap.schema_bytes,
            chunks=chunks.chunks,
            bm25=bm25.arrays,
            typo_keys=bm25.typo_keys,
            typo_terms=bm25.typo_terms,
            embeddings=vectors.vectors,
            model=snap.model,
            params=snap.params,
            inputs=snap.inputs,
            tenant=snap.tenant,
            warnings=chunks.warnings,
            history=history,
        )
        path, built = write_artifact(root, payload, write_lance=write_lance, tables_cache=tables_cache)
    if previous != snap.key:
        publish(root, snap.key)
    removed = prune(root, keep=keep)
    return PublishOutcome(key=snap.key, path=path, built=built, previous=previous, removed=removed)


def check_published(folder: Path) -> tuple[dict[str, tuple[bool, str]], Manifest]:
    """Each invariant -> (passed, detail), and the manifest. Reads the published files, not the
    in-memory build: the manifest (typed), every file's size and SHA-256, the embedding matrix's
    shape, and only the ``chunk_id``/``table`` columns of ``chunks.parquet`` and the ``name``
    column of ``tables.parquet``.

    Not :meth:`IndexArtifact.open`: that also validates ``schema.json`` with pydantic and decodes
    every chunk and DDL row for serving (3.4 of the 30.9 s a one-doc edit of a 120,000-column
    warehouse took), while the build serialized those itself moments ago. Readers still open
    every version through the full validation.
    """
    import pyarrow.parquet as pq

    info, _ = read_manifest(folder)
    verify_files(folder, info, full=True)
    emb = np.load(folder / "embeddings.npy", mmap_mode="r", allow_pickle=False)
    chunks = pq.read_table(folder / "chunks.parquet", columns=["chunk_id", "table"])
    ids = chunks.column("chunk_id").to_pylist()
    chunk_tables = set(chunks.column("table").drop_null().unique().to_pylist())
    table_names = pq.read_table(folder / "tables.parquet", columns=["name"]).column("name").to_pylist()
    tables = set(table_names)
    bad_tables = sorted(chunk_tables - tables)
    rows = (emb.shape[0] if emb.ndim == 2 else -1, len(ids), info.counts.chunks)
    dim = info.model.dimension
    return {
        "chunks_not_empty": (len(ids) > 0, f"{len(ids)} chunks"),
        "vector_count_matches": (
            len(set(rows)) == 1 and len(table_names) == info.counts.tables,
            f"{rows[0]} vectors for {rows[1]} chunks (manifest: {rows[2]} chunks, "
            f"{info.counts.tables} tables; tables.parquet: {len(table_names)})",
        ),
        "dimension_matches_manifest": (
            emb.ndim == 2 and emb.shape[1] == dim,
            f"vectors {emb.shape[1] if emb.ndim == 2 else emb.shape}-d, manifest {dim}-d",
        ),
        "chunk_ids_unique": (len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} duplicate IDs"),
        "chunk_tables_exist": (
            not bad_tables,
            f"unknown tables: {bad_tables}" if bad_tables else "all known",
        ),
    }, info


@dg.asset(
    partitions_def=databases_partitions,
    group_name="index",
    compute_kind="lancedb",
    check_specs=[dg.AssetCheckSpec(name, asset="published_index", description=d) for name, d in CHECKS],
)
def published_index(
    context: AssetExecutionContext,
    index_paths: IndexPaths,
    source_snapshot: SourceSnapshot,
    doc_chunks: ChunkSet,
    bm25_statistics: BM25Statistics | None,
    chunk_embeddings: ChunkEmbeddings | None,
    query_history: HistoryArrays | None,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """``artifacts/<db>/<key>/`` (Parquet, BM25 arrays, vectors, LanceDB) and the CURRENT pointer.

    With ``s3://`` artifacts the version is built and checked locally, then mirrored and the
    remote ``CURRENT`` moved (``remote_store``).
    """
    progress.stage(context.partition_key, "published_index")
    start = time.perf_counter()
    # On Celery/Kubernetes the snapshot may have been read on another machine: use this one's copy
    source_snapshot = for_this_machine(
        source_snapshot, index_paths.artifacts_path(), index_paths.remote_artifacts(), context.partition_key
    )
    root = source_snapshot.root
    out = publish_index(
        source_snapshot,
        doc_chunks,
        bm25_statistics,
        chunk_embeddings,
        root,
        keep=index_paths.keep_versions,
        write_lance=index_paths.write_lance,
        tables_cache=TablesCache(
            tables_cache_dir(
                index_paths.artifacts_path(), source_snapshot.database.name, source_snapshot.tenant
            )
        ),
        history=query_history,
    )
    results, info = check_published(out.path)
    remote = index_paths.remote_artifacts()
    uploaded = False
    if remote and all(passed for passed, _ in results.values()):
        uploaded = upload_version(out.path, remote, context.partition_key, source_snapshot.tenant)
        publish_remote(remote, context.partition_key, out.key, source_snapshot.tenant)
    context.log.info(f"{context.partition_key}: key {out.key} ({'built' if out.built else 'unchanged'})")
    yield dg.MaterializeResult(
        metadata={
            "seconds": round(time.perf_counter() - start, 3),
            "remote": remote or "",
            "uploaded": uploaded,
            "key": out.key,
            "path": str(out.path),
            "built": out.built,
            "previous": out.previous or "",
            "removed_versions": dg.MetadataValue.json(out.removed),
            "chunks": info.counts.chunks,
            "tables": info.counts.tables,
            "vocabulary": int(getattr(info.counts, "vocabulary", 0) or 0),
        }
    )
    for name, (passed, detail) in results.items():
        yield dg.AssetCheckResult(
            check_name=name, asset_key="published_index", passed=passed, metadata={"detail": detail}
        )
