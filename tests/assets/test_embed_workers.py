"""A build's passage embedding on one single-thread session per core gives the vectors of one
session: same bits, same cache, same artifact; a text's vector does not depend on what it is
embedded with; de-duplication gives each chunk the vector it would get alone."""

from __future__ import annotations

import numpy as np

from schemarag.assets.chunk_embeddings import EMBED_SLICE, embed_chunks, embed_missing
from schemarag.assets.lib.chunking import chunk_database
from schemarag.assets.lib.embed_workers import embed_slices, session_pool
from schemarag.assets.lib.embedding_cache import text_key
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec
from schemarag.runtime.core.schema import Database


def _texts(n: int) -> list[str]:
    """Texts of varied length (a batched model would pad them differently), some past 500
    characters."""
    return [
        f"col_{i}\nAmount {i} of the order line" + " in US dollars" * (i % 7 + 40 * (i % 29 == 0))
        for i in range(n)
    ]


def test_a_pool_of_single_thread_sessions_gives_the_default_sessions_vectors_bit_for_bit() -> None:
    texts = _texts(3 * EMBED_SLICE + 5)
    assert max(map(len, texts)) > 500
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


def test_a_texts_vector_does_not_depend_on_what_it_is_embedded_with() -> None:
    """The int8 model quantizes activations per call: in a batch, a text took its neighbours'
    value range and padding (up to 0.03 per component). Each text is embedded alone, so the
    cache, build order and schema fan-out all give one vector per text, and a question's vector
    is the same in a batch of windows as alone."""
    embedder = Embedder.get()
    text = "orders.amount\nOrder total in US dollars"
    alone = embedder.passage_embed([text])[0]
    long = "a very long description of something else entirely " * 40
    for company in ([long, text], [text, "x"], [long] * 5 + [text]):
        got = embedder.passage_embed(company)[company.index(text)]
        assert np.array_equal(got, alone)
    question = "total order amount per customer"
    assert np.array_equal(embedder.query_embed([question, long])[0], embedder.query_embed([question])[0])
    assert embedder.identity["passage_batch"] == 1 and embedder.vectors_id.endswith("-alone")


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
    the vector the undeduplicated build gives it."""
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
    assert np.array_equal(result.vectors, undeduped)
    same = [i for i, t in enumerate(plan) if t == texts[0]]
    assert len(same) >= 2 and all(np.array_equal(result.vectors[same[0]], result.vectors[i]) for i in same)
