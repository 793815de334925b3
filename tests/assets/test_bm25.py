"""BM25 arrays: the vectorised build gives each posting the textbook weight, in CSC order, and
the per-word tokenizer cache never changes what a text tokenizes to."""

from __future__ import annotations

import math

import numpy as np

from schemarag.assets.lib.bm25 import build_bm25
from schemarag.runtime.core.bm25 import K1, B
from schemarag.runtime.core.text_tokens import keywords, tokenize

DOCS = [
    ["order", "status", "order", "id"],
    ["user", "email", "id"],
    [],
    ["order", "user", "user", "user", "amount", "id"],
    ["amount"],
]


def test_every_posting_has_the_bm25_weight_and_documents_stay_in_order() -> None:
    arrays = build_bm25(DOCS)
    n = len(DOCS)
    avgdl = sum(map(len, DOCS)) / n
    # first seen, each document's terms sorted
    assert list(arrays.vocab) == ["id", "order", "status", "email", "user", "amount"]
    for term, t in arrays.vocab.items():
        docs = [d for d, toks in enumerate(DOCS) if term in toks]
        start, end = arrays.indptr[t], arrays.indptr[t + 1]
        assert list(arrays.indices[start:end]) == docs
        idf = math.log(1 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        assert arrays.idf[t] == np.float32(idf)
        for d, got in zip(docs, arrays.data[start:end], strict=True):
            tf = DOCS[d].count(term)
            norm = K1 * (1 - B + B * len(DOCS[d]) / avgdl)
            assert got == np.float32(tf * (K1 + 1) / (tf + norm) * idf)
    assert arrays.indices.dtype == np.int32 and arrays.data.dtype == np.float32


def test_empty_corpus() -> None:
    arrays = build_bm25([])
    assert arrays.vocab == {} and list(arrays.indptr) == [0] and arrays.indices.size == 0


def test_repeated_words_tokenize_the_same_and_report_whole_identifiers_every_time() -> None:
    text = "orders.createdAt by user_id; the createdAt of ORDERS"
    for _ in range(3):
        optional: set[str] = set()
        toks = tokenize(text, optional)
        assert toks == ["order", "creat", "at", "createdat", "created_at", "user", "id", "user_id",
                        "creat", "at", "createdat", "created_at", "order"]  # fmt: skip
        assert optional == {"createdat", "created_at", "user_id"}
        optional.add("mutated")  # the caller's set, never the cache
    assert keywords(text) == ["orders", "createdat", "created", "user_id", "user"]
    assert keywords(text, limit=2) == ["orders", "createdat"]
