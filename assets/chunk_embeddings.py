"""Stage 4: fastembed passage vectors, cached per chunk text and model."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import dagster as dg
import numpy as np
from dagster import AssetExecutionContext

from schemarag.assets.lib import progress
from schemarag.assets.lib.cache_shards import pull_shards
from schemarag.assets.lib.chunking import ChunkSet
from schemarag.assets.lib.embed_plan import plan_for, unique_missing
from schemarag.assets.lib.embed_shards import database_schemas, groups_for
from schemarag.assets.lib.embed_workers import embed_slices, session_pool, warm
from schemarag.assets.lib.embedding_cache import EmbeddingCache, text_key
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.assets.source_snapshot import SourceSnapshot
from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.paths import embedding_cache_dir
from schemarag.runtime.core.schema import Database


@dataclass
class ChunkEmbeddings:
    vectors: np.ndarray
    cache_hits: int
    embedded_chunk_ids: list[str] = field(default_factory=list)


def embed_text(chunk: Chunk) -> str:
    """What the model sees: title first, so a column chunk says which table it belongs to."""
    return f"{chunk.title}\n{chunk.text}"


def chunk_groups(chunks: list[Chunk], db: Database) -> list[int]:
    """Each chunk's embedding group: the index of its table's schema (:mod:`...embed_shards`)."""
    return groups_for([c.table for c in chunks], database_schemas(db))


# Texts are embedded in slices of this many, so progress can be reported between slices and the
# pool's sessions (:mod:`~schemarag.assets.lib.embed_workers`) share the work. Each text is
# embedded alone (``Embedder.passage_batch``), so neither the slicing nor the order changes a
# vector, and a session's onnxruntime arena stays small (one 512-token text: two sessions peak at
# ~470 MB RSS, against ~4 GB for batches of 16 such texts).
EMBED_SLICE = 64


def embed_chunks(
    chunks: list[Chunk],
    embedder: Embedder,
    cache: EmbeddingCache | None,
    on_batch: Callable[[int, int], None] | None = None,
    plan: list[str | None] | None = None,
    groups: list[int] | None = None,
) -> ChunkEmbeddings:
    """Vectors for ``chunks``; ``on_batch(done, total)`` after each slice of newly embedded texts.
    ``plan`` (:mod:`~schemarag.assets.lib.embed_plan`) gives each chunk's text to embed, ``None``
    for none (default: title + text of every chunk). ``groups`` (per chunk, default all 0: see
    :mod:`~schemarag.assets.lib.embed_shards`) orders the work schema by schema; each text is
    embedded alone, so a ``schema_embeddings`` partition computes the very same vectors."""
    texts = plan if plan is not None else [embed_text(c) for c in chunks]
    keys = [text_key(t) if t is not None else None for t in texts]
    cached = cache.get_many([k for k in keys if k is not None]) if cache else {}
    missing = unique_missing(keys, cached)  # identical texts are embedded once
    fresh = embed_missing(texts, keys, missing, embedder, groups, on_batch)
    if cache and fresh:
        cache.put_many(fresh)
    out = np.zeros((len(chunks), embedder.dimension), dtype=np.float32)
    for i, k in enumerate(keys):
        if k is not None:  # None: the plan leaves this chunk to BM25 (a zero vector)
            out[i] = cached[k] if k in cached else fresh[k]
    return ChunkEmbeddings(
        vectors=out,
        cache_hits=len(chunks) - len(missing),
        embedded_chunk_ids=[chunks[i].chunk_id for i in missing],
    )


def embed_missing(
    texts: list[str | None],
    keys: list[str | None],
    missing: list[int],
    embedder: Embedder,
    groups: list[int] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """``{key: vector}`` of the texts at ``missing`` (first occurrences, in chunk order): group by
    group in ascending group order, each group shortest first in slices of :data:`EMBED_SLICE`,
    the slices spread over one single-thread session per core."""
    if not missing:
        return {}
    by_group: dict[int, list[int]] = {}
    for i in missing:
        by_group.setdefault(groups[i] if groups else 0, []).append(i)
    orders = [sorted(by_group[g], key=lambda i: len(texts[i] or "")) for g in sorted(by_group)]
    pool = session_pool(embedder)
    if on_batch:  # load the model before the clock starts, so chunks/s measures embedding alone
        warm(pool, texts[orders[0][0]] or "", lambda: on_batch(0, len(missing)))
    parts = [
        order[start : start + EMBED_SLICE] for order in orders for start in range(0, len(order), EMBED_SLICE)
    ]
    fresh: dict[str, np.ndarray] = {}
    done = 0
    for n, vecs in embed_slices(pool, [[texts[i] or "" for i in part] for part in parts]):
        fresh.update({keys[i]: vecs[j] for j, i in enumerate(parts[n])})
        done += len(parts[n])
        if on_batch:
            on_batch(done, len(missing))
    return fresh


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="fastembed")
def chunk_embeddings(
    context: AssetExecutionContext,
    source_snapshot: SourceSnapshot,
    doc_chunks: ChunkSet,
    embedding_model: EmbeddingModel,
    index_paths: IndexPaths,
) -> dg.Output[ChunkEmbeddings | None]:
    """One L2-normalised vector per chunk; unchanged chunk texts come from the embedding cache."""
    progress.stage(context.partition_key, "chunk_embeddings")
    if source_snapshot.existing:
        return dg.Output(None, metadata={"skipped": "artifact already built"})
    start = time.perf_counter()
    embedder = embedding_model.embedder()
    cache = EmbeddingCache.for_embedder(embedding_cache_dir(index_paths.artifacts_path()), embedder)
    try:
        db = context.partition_key
        groups = chunk_groups(doc_chunks.chunks, source_snapshot.database)
        pulled = 0
        if max(groups, default=0) > 0:  # several schemas: partitions may have left shards remotely
            pulled = pull_shards(index_paths.remote_artifacts(), source_snapshot.tenant, db, embedder, cache)
        result = embed_chunks(
            doc_chunks.chunks,
            embedder,
            cache,
            plan=plan_for(doc_chunks.chunks, source_snapshot.database, source_snapshot.params),
            groups=groups,
            on_batch=lambda done, total: progress.advance(db, "chunk_embeddings", done, total, "chunk"),
        )
    finally:
        cache.close()
    context.log.info(f"embedded {len(result.embedded_chunk_ids)} chunks, {result.cache_hits} from cache")
    return dg.Output(
        result,
        metadata={
            "vectors": int(result.vectors.shape[0]),
            "seconds": round(time.perf_counter() - start, 3),
            "embedded": len(result.embedded_chunk_ids),
            "cache_hits": result.cache_hits,
            "from_shards": pulled,
            "model": embedder.spec.name,
            "embedded_chunk_ids": dg.MetadataValue.json(result.embedded_chunk_ids),
        },
    )
