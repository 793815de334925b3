"""One single-threaded ONNX session per core for a build's passage embedding.

Why not one session with a thread per core (onnxruntime's default)? Measured on the shared
2-core machine (1,500 distinct column texts, ~53 tokens each, load average 6-8): one session with
2 intra-op threads took 19.8 CPU-s and 34.2 s wall; one session with 1 thread took 10.3 CPU-s
and 20.1 s wall. The intra-op threads synchronise (and spin while they wait) on every operator
of a small transformer, so half the CPU went to waiting, and on a loaded machine the spinning
thread also steals the core the other one needs. Independent sessions share nothing: each slice
of texts runs on one session from start to end, ``session.run`` releases the GIL, and the cores
stay busy with work.

Each session keeps its own onnxruntime arena, sized by the largest batch it ran (~1.8 GB for
16 texts of 512 tokens), so the build sends only slices of short texts here
(``chunk_embeddings.POOL_MAX_CHARS``) and long ones to its own session.

The vectors do not depend on the thread count (checked bit for bit in
``tests/assets/test_embed_workers.py``), so the embedding cache, the artifact bytes and every key
stay what they were. An embedder whose spec names ``threads`` is used as given (one session):
``schemarag build --jobs`` and the schema fan-out already split the cores between processes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np

from schemarag.runtime.core.embedding.embedder import Embedder, StaticEmbedder

_pools: dict[tuple, list[Embedder]] = {}
_lock = threading.Lock()


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def session_pool(embedder: Embedder, workers: int | None = None) -> list[Embedder]:
    """Embedders that may run at once: ``workers`` (default: one per usable core) single-thread
    copies of ``embedder``, or ``[embedder]`` itself when its threads are pinned, it is a static
    table (no session to share) or one worker is asked for. Kept per process: each session costs
    ~0.5 s to load."""
    n = usable_cores() if workers is None else max(1, workers)
    if n == 1 or embedder.spec.threads is not None or isinstance(embedder, StaticEmbedder):
        return [embedder]
    spec = replace(embedder.spec, threads=1)
    key = (spec, n)
    with _lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = [Embedder.get(spec)] + [Embedder(spec) for _ in range(n - 1)]
    return pool


def embed_slices(pool: Sequence[Embedder], slices: Sequence[list[str]]) -> Iterator[tuple[int, np.ndarray]]:
    """``(slice index, its vectors)`` as slices finish, each slice embedded whole by one member
    of ``pool`` (so a slice's batches are exactly those one embedder would make)."""
    if len(pool) == 1 or len(slices) == 1:
        for i, texts in enumerate(slices):
            yield i, pool[0].passage_embed(texts)
        return
    free: list[Embedder] = list(pool)
    guard = threading.Lock()

    def run(i: int) -> tuple[int, np.ndarray]:
        with guard:
            emb = free.pop()
        try:
            return i, emb.passage_embed(slices[i])
        finally:
            with guard:
                free.append(emb)

    with ThreadPoolExecutor(max_workers=len(pool), thread_name_prefix="embed") as ex:
        futures = [ex.submit(run, i) for i in range(len(slices))]
        for fut in futures:  # in submission order: progress and results stay deterministic
            yield fut.result()


def warm(pool: Sequence[Embedder], text: str, on_done: Callable[[], None] | None = None) -> None:
    """Load every session before a clock starts (each embeds ``text`` once)."""
    with ThreadPoolExecutor(max_workers=len(pool)) as ex:
        list(ex.map(lambda e: e.passage_embed([text]), pool))
    if on_done:
        on_done()
