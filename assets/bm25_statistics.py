"""Stage 3: BM25 weights, vocabulary and the typo index, computed once at build time."""

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.lib import progress
from schemarag.assets.lib.bm25 import BM25Statistics, compute_bm25
from schemarag.assets.lib.chunking import ChunkSet
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.source_snapshot import SourceSnapshot


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="numpy")
def bm25_statistics(
    context: AssetExecutionContext, source_snapshot: SourceSnapshot, doc_chunks: ChunkSet
) -> dg.Output[BM25Statistics | None]:
    """Per-(term, chunk) BM25 weights in CSC arrays plus the vocabulary; skipped if already built."""
    progress.stage(context.partition_key, "bm25_statistics")
    if source_snapshot.existing:
        return dg.Output(None, metadata={"skipped": "artifact already built"})
    stats = compute_bm25(doc_chunks.chunks)
    return dg.Output(
        stats,
        metadata={
            "vocabulary": len(stats.arrays.vocab),
            "postings": int(stats.arrays.indices.shape[0]),
            "typo_keys": int(stats.typo_keys.shape[0]),
        },
    )
