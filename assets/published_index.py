"""Stage 5: the published, content-addressed artifact, plus the invariants as asset checks."""

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.bm25_statistics import BM25Statistics
from schemarag.assets.chunk_embeddings import ChunkEmbeddings
from schemarag.assets.lib import progress
from schemarag.assets.lib.artifact_store import ArtifactPayload, prune, publish, read_current, write_artifact
from schemarag.assets.lib.chunking import ChunkSet
from schemarag.assets.lib.remote_store import publish_remote, upload_version
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import IndexPaths
from schemarag.assets.source_snapshot import SourceSnapshot
from schemarag.runtime.artifact.reader import IndexArtifact

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
) -> PublishOutcome:
    """Write (unless the key exists), point CURRENT at it, prune old versions."""
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
        )
        path, built = write_artifact(root, payload, write_lance=write_lance)
    if previous != snap.key:
        publish(root, snap.key)
    removed = prune(root, keep=keep)
    return PublishOutcome(key=snap.key, path=path, built=built, previous=previous, removed=removed)


def check_artifact(art: IndexArtifact) -> dict[str, tuple[bool, str]]:
    """Each invariant -> (passed, detail). Reads the published files, not the in-memory build."""
    chunks = art.all_chunks()
    ids = [c.chunk_id for c in chunks]
    tables = {t.name for t in art.schema.tables}
    bad_tables = sorted({c.table for c in chunks if c.table is not None and c.table not in tables})
    dim = art.manifest["model"]["dimension"]
    return {
        "chunks_not_empty": (len(chunks) > 0, f"{len(chunks)} chunks"),
        "vector_count_matches": (
            art.embeddings.shape[0] == len(chunks),
            f"{art.embeddings.shape[0]} vectors for {len(chunks)} chunks",
        ),
        "dimension_matches_manifest": (
            art.embeddings.shape[1] == dim,
            f"vectors {art.embeddings.shape[1]}-d, manifest {dim}-d",
        ),
        "chunk_ids_unique": (len(set(ids)) == len(ids), f"{len(ids) - len(set(ids))} duplicate IDs"),
        "chunk_tables_exist": (
            not bad_tables,
            f"unknown tables: {bad_tables}" if bad_tables else "all known",
        ),
    }


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
) -> Iterator[dg.MaterializeResult | dg.AssetCheckResult]:
    """``artifacts/<db>/<key>/`` (Parquet, BM25 arrays, vectors, LanceDB) and the CURRENT pointer.

    With ``s3://`` artifacts the version is built and checked locally, then mirrored and the
    remote ``CURRENT`` moved (``remote_store``).
    """
    progress.stage(context.partition_key, "published_index")
    start = time.perf_counter()
    root = source_snapshot.root
    out = publish_index(
        source_snapshot,
        doc_chunks,
        bm25_statistics,
        chunk_embeddings,
        root,
        keep=index_paths.keep_versions,
        write_lance=index_paths.write_lance,
    )
    art = IndexArtifact.open(out.path)
    results = check_artifact(art)
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
            "chunks": art.n_chunks,
            "tables": len(art.table_names),
            "vocabulary": len(art.vocab_terms),
        }
    )
    for name, (passed, detail) in results.items():
        yield dg.AssetCheckResult(
            check_name=name, asset_key="published_index", passed=passed, metadata={"detail": detail}
        )
