"""Stage 2: typed chunks from the schema and the markdown docs."""

import time

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.lib import progress
from schemarag.assets.lib.chunk_cache import ChunkCache, chunk_cache_path
from schemarag.assets.lib.chunking import ChunkingConfig, ChunkSet, chunk_database, decode_docs
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import IndexPaths
from schemarag.assets.run_log import report_warnings
from schemarag.assets.source_snapshot import SourceSnapshot


def make_chunks(snap: SourceSnapshot, cache: ChunkCache | None = None) -> ChunkSet:
    """The snapshot's chunks; with ``cache``, unchanged doc files are replayed, not re-parsed."""
    texts, warnings = decode_docs(snap.doc_bytes, snap.docs_label)
    config = ChunkingConfig(**{k: v for k, v in snap.params["chunking"].items()})
    result = chunk_database(snap.database, texts, config, docs_label=snap.docs_label, cache=cache)
    result.warnings[:0] = [*snap.warnings, *warnings]
    return result


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="markdown-it")
def doc_chunks(
    context: AssetExecutionContext, index_paths: IndexPaths, source_snapshot: SourceSnapshot
) -> dg.Output[ChunkSet]:
    """Overview, column, query, relationship, example, table and database chunks with metadata.

    Doc files unchanged since the last build are not re-parsed: their chunks come from the
    database's chunk cache under ``<artifacts>/_cache/chunks/`` (``assets/lib/chunk_cache.py``).
    """
    progress.stage(context.partition_key, "doc_chunks")
    start = time.perf_counter()
    snap = source_snapshot
    path = chunk_cache_path(index_paths.artifacts_path(), snap.database.name, snap.tenant)
    with ChunkCache(path) as cache:
        result = make_chunks(snap, cache)
    report_warnings(context, result.warnings)
    by_type: dict[str, int] = {}
    for c in result.chunks:
        by_type[c.chunk_type] = by_type.get(c.chunk_type, 0) + 1
    return dg.Output(
        result,
        metadata={
            "chunks": len(result.chunks),
            "seconds": round(time.perf_counter() - start, 3),
            "doc_files": len(result.doc_files),
            "doc_files_parsed": len(result.parsed),
            "warnings": len(result.warnings),
            **{f"chunks_{k}": v for k, v in sorted(by_type.items())},
        },
    )
