"""Stage 3: BM25 weights, vocabulary and the typo index, computed once at build time."""

from dataclasses import dataclass

import dagster as dg
import numpy as np
from dagster import AssetExecutionContext

from schemarag.assets.lib.bm25 import build_bm25
from schemarag.assets.lib.chunking import ChunkSet
from schemarag.assets.lib.typo import build_typo_index
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.source_snapshot import SourceSnapshot
from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.search.bm25 import BM25Arrays
from schemarag.runtime.search.text_tokens import tokenize


@dataclass
class BM25Statistics:
    arrays: BM25Arrays
    typo_keys: np.ndarray
    typo_terms: np.ndarray


def index_text(chunk: Chunk) -> str:
    """What BM25 sees: the text plus title and keywords (identifiers in every form)."""
    return f"{chunk.title}\n{chunk.text}\n{' '.join(chunk.keywords)}"


def compute_bm25(chunks: list[Chunk]) -> BM25Statistics:
    arrays = build_bm25([tokenize(index_text(c)) for c in chunks])
    keys, terms = build_typo_index(list(arrays.vocab))
    return BM25Statistics(arrays=arrays, typo_keys=keys, typo_terms=terms)


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="numpy")
def bm25_statistics(
    context: AssetExecutionContext, source_snapshot: SourceSnapshot, doc_chunks: ChunkSet
) -> dg.Output[BM25Statistics | None]:
    """Per-(term, chunk) BM25 weights in CSC arrays plus the vocabulary; skipped if already built."""
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
