"""A build's passage embedding on one single-thread session per core gives the vectors of one
session: same bits, same cache, same artifact; de-duplication gives each chunk the vector it
would get alone."""

from __future__ import annotations

import numpy as np

from schemarag.assets.chunk_embeddings import EMBED_SLICE, POOL_MAX_CHARS, embed_chunks, embed_missing
from schemarag.assets.lib.chunking import chunk_database
from schemarag.assets.lib.embed_workers import embed_slices, session_pool
from schemarag.assets.lib.embedding_cache import text_key
from schemarag.runtime.schema import Database
from schemarag.runtime.search.embedding import Embedder, ModelSpec


def _texts(n: int) -> list[str]:
    """Texts of varied length, so batches pad differently; the longest ones past
    POOL_MAX_CHARS, so their slices run on the build's own session."""
    return [
        f"col_{i}\nAmount {i} of the order line" + " in US dollars" * (i % 7 + 40 * (i % 29 == 0))
        for i in range(n)
    ]


def test_a_pool_of_single_thread_sessions_gives_the_default_sessions_vectors_bit_for_bit() -> None:
    texts = _texts(3 * EMBED_SLICE + 5)
    assert max(map(len, texts)) > POOL_MAX_CHARS >= sorted(map(len, texts))[-EMBED_SLICE]
    single = Embedder.get()
    pool = session_pool(single, workers=2)
    assert len(pool) == 2 and all(e.spec.threads == 1 for e in pool) and pool[0] is not pool[1]
    keys = [text_key(t) for t in texts]
    pooled = embed_missing(list(texts), list(keys), list(range(len(texts))), single)
    slices = [texts[i : i + EMBED_SLICE] for i in range(0, len(texts), EMBED_SLICE)]
    by_slice = dict(embed_slices(pool, slices))
    alone = np.concatenate([single.passage_embed(s) for s in slices])
    assert np.array_equal(np.concatenate([by_slice[i] for i in range(len(slices))]), alone)
    ordered = np.stack([pooled[k] for k in keys])
    one_session = np.concatenate(
        [single.passage_embed([texts[i] for i in part]) for part in _shortest_first_slices(texts)]
    )
    order = [i for part in _shortest_first_slices(texts) for i in part]
    assert np.array_equal(ordered[order], one_session)


def _shortest_first_slices(texts: list[str]) -> list[list[int]]:
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    return [order[i : i + EMBED_SLICE] for i in range(0, len(order), EMBED_SLICE)]


def test_pinned_threads_and_one_worker_use_the_embedder_itself() -> None:
    pinned = Embedder.get(ModelSpec(threads=2))
    assert session_pool(pinned, workers=4) == [pinned]
    default = Embedder.get()
    assert session_pool(default, workers=1) == [default]


def test_deduplicated_build_vectors_equal_embedding_each_chunk_alone() -> None:
    """Three tables share one documented column: embedded once, and each chunk carries exactly
    the vector the undeduplicated build gives it. The fixture fits one batch: the int8 model
    quantises activations per batch, so batch composition moves vectors (cosine ~0.98-0.99 for a
    text alone vs in a batch); a repeated text changes neither the padding nor the value range."""
    db = Database.model_validate(
        {
            "name": "wh",
            "tables": [
                {
                    "name": f"t{i}",
                    "columns": [
                        {"name": "id", "type": "BIGINT", "primary_key": True},
                        {
                            "name": "created_at",
                            "type": "TIMESTAMP",
                            "description": "When the row was created.",
                        },
                    ],
                }
                for i in range(3)
            ],
        }
    )
    chunks = chunk_database(db, {}).chunks
    texts = ["created_at\nWhen the row was created."] * 3 + [f"table {i}" for i in range(3)]
    plan = [texts[i % len(texts)] for i in range(len(chunks))]
    embedder = Embedder.get()
    result = embed_chunks(chunks, embedder, None, plan=plan)
    assert len(result.embedded_chunk_ids) == len(set(plan))
    undeduped = embedder.passage_embed(plan)  # every chunk's text, duplicates included
    assert len(plan) <= 16 and np.array_equal(result.vectors, undeduped)
    same = [i for i, t in enumerate(plan) if t == texts[0]]
    assert len(same) >= 2 and all(np.array_equal(result.vectors[same[0]], result.vectors[i]) for i in same)
