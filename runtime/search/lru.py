"""A small thread-safe LRU map: the query-embedding cache and the registry of open indexes.

Both are read by every request thread, so a bare ``OrderedDict`` (whose ``move_to_end`` and
``popitem`` race) is not enough; both must also stay bounded, because a long-running service
sees unboundedly many distinct questions and databases. Evicted values are simply dropped:
whoever still holds one (an in-flight request) keeps it alive, and the last reference frees
it (for an index, that unmaps its files).

>>> cache = LRU[str, int](maxsize=2)
>>> cache.put("a", 1), cache.put("b", 2), cache.get("a"), cache.put("c", 3)
([], [], 1, [2])
>>> sorted(cache.keys())
['a', 'c']
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """Bounded least-recently-used map; ``maxsize`` 0 stores nothing."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> list[V]:
        """Store ``value``; returns what was evicted to make room."""
        with self._lock:
            if self.maxsize <= 0:
                return [value]
            self._data[key] = value
            self._data.move_to_end(key)
            return self._trim()

    def _trim(self) -> list[V]:
        evicted = []
        while len(self._data) > self.maxsize:
            evicted.append(self._data.pop(next(iter(self._data))))
        return evicted

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def keys(self) -> list[K]:
        with self._lock:
            return list(self._data)

    def __len__(self) -> int:
        # under the lock: ``put`` briefly holds maxsize + 1 entries before trimming
        with self._lock:
            return len(self._data)
