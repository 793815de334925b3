"""The registry of open indexes is a bounded LRU whose evicted indexes get unmapped
(issue 13 finding 6: 200 databases opened meant 201 entries and +84 MB)."""

from __future__ import annotations

import gc
import threading
from pathlib import Path

import numpy as np
import pytest

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.search.lru import LRU
from schemarag.runtime.search.retriever import Retriever


def _mapped(folder: Path) -> bool:
    """Whether any file of ``folder`` is memory-mapped into this process."""
    return f"{folder.resolve()}/" in Path("/proc/self/maps").read_text()


def test_open_indexes_stay_bounded_and_evicted_maps_are_closed(
    tiny: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, artifacts = tiny
    monkeypatch.setenv("SCHEMARAG_MAX_OPEN_INDEXES", "2")
    Retriever.clear_cache()
    gc.collect()
    first = Retriever.open("shop", artifacts=artifacts)
    folder = first.snapshot().path
    assert _mapped(folder)
    held = first.pin()  # an in-flight request still holding the first index's version
    del first
    for name in ("shop_a", "shop_b", "shop_c"):
        assert Retriever.open(name, artifacts=artifacts).search("gold tier customers").chunks
        assert Retriever.open_count() <= 2
    assert Retriever.open_count() == 2
    assert _mapped(folder), "evicted, but an in-flight request still uses it"
    res = held.search("gold tier customers")
    assert res.chunks and res.metadata.artifact_key == held.key
    del held, res
    # reference counting alone unmaps it (nothing refers back to the retriever or the version)
    assert not _mapped(folder), "the evicted index is still mapped"
    Retriever.clear_cache()


def test_the_limit_must_be_a_positive_number(
    tiny: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, artifacts = tiny
    Retriever.clear_cache()
    monkeypatch.setenv("SCHEMARAG_MAX_OPEN_INDEXES", "zero")
    with pytest.raises(ConfigError, match="SCHEMARAG_MAX_OPEN_INDEXES"):
        Retriever.open("shop", artifacts=artifacts)
    Retriever.clear_cache()


def test_lru_evicts_least_recently_used() -> None:
    cache: LRU[str, int] = LRU(maxsize=2)
    assert cache.put("a", 1) == [] and cache.put("b", 2) == []
    assert cache.get("a") == 1  # a is now the most recent
    assert cache.put("c", 3) == [2]
    assert sorted(cache.keys()) == ["a", "c"] and cache.get("b") is None
    cache.maxsize = 0
    assert cache.put("d", 4) == [4] and cache.get("d") is None


def test_lru_stays_bounded_and_consistent_under_threads() -> None:
    cache: LRU[int, np.ndarray] = LRU(maxsize=64)
    errors: list[BaseException] = []

    def hammer(seed: int) -> None:
        try:
            for i in range(5000):
                k = (seed * 7919 + i) % 300
                hit = cache.get(k)
                if hit is not None:
                    assert int(hit[0]) == k
                else:
                    cache.put(k, np.array([k]))
                assert len(cache) <= 64
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(cache) == 64


def test_query_cache_is_bounded(tiny: tuple[Path, Path]) -> None:
    _, artifacts = tiny
    r = Retriever.open("shop", artifacts=artifacts)
    r.query_cache_size = 3
    for q in ("gold customers", "order totals", "customer names", "loyalty tiers", "orders per customer"):
        r.search(q)
    assert len(r._qcache) == 3
    r.query_cache_size = 0
    assert len(r._qcache) == 0
    r.query_cache_size = 2048


def test_query_cache_hook_reports_hits_and_misses(tiny: tuple[Path, Path]) -> None:
    """The server's hit-ratio metric comes from this public hook, not the private cache."""
    _, artifacts = tiny
    r = Retriever.open("shop", artifacts=artifacts)
    r.clear_query_cache()
    seen: list[bool] = []
    r.on_query_cache = seen.append
    try:
        r.search("loyalty tier of gold customers")
        r.search("loyalty tier of gold customers")
        r.score_chunks("loyalty tier of gold customers", method="bm25")  # no vector, no lookup
    finally:
        r.on_query_cache = None
    assert seen == [False, True]
