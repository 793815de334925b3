"""Stage 2: typed chunks from the schema and the markdown docs."""

import time

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.lib import progress
from schemarag.assets.lib.chunking import ChunkingConfig, ChunkSet, chunk_database, decode_docs
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.source_snapshot import SourceSnapshot


def make_chunks(snap: SourceSnapshot) -> ChunkSet:
    texts, warnings = decode_docs(snap.doc_bytes, snap.docs_label)
    config = ChunkingConfig(**{k: v for k, v in snap.params["chunking"].items()})
    result = chunk_database(snap.database, texts, config, docs_label=snap.docs_label)
    result.warnings[:0] = [*snap.warnings, *warnings]
    return result


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="markdown-it")
def doc_chunks(context: AssetExecutionContext, source_snapshot: SourceSnapshot) -> dg.Output[ChunkSet]:
    """Overview, column, query, relationship, example, table and database chunks with metadata."""
    progress.stage(context.partition_key, "doc_chunks")
    start = time.perf_counter()
    result = make_chunks(source_snapshot)
    for w in result.warnings:
        context.log.warning(w)
    by_type: dict[str, int] = {}
    for c in result.chunks:
        by_type[c.chunk_type] = by_type.get(c.chunk_type, 0) + 1
    return dg.Output(
        result,
        metadata={
            "chunks": len(result.chunks),
            "seconds": round(time.perf_counter() - start, 3),
            "doc_files": len(result.doc_files),
            "warnings": len(result.warnings),
            **{f"chunks_{k}": v for k, v in sorted(by_type.items())},
        },
    )
