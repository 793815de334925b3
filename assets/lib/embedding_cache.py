"""Per-model embedding cache keyed by the SHA-256 of the passage text.

SQLite (stdlib) because several Dagster processes may build partitions at once: it gives
atomic, concurrent-safe upserts without a server. Editing one doc re-embeds only the chunks
whose text changed; everything else is a cache hit.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from schemarag.runtime.core.embedding.embedder import Embedder


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """``get_many``/``put_many`` of float32 vectors for one model identity.

    ``name`` is :attr:`Embedder.vectors_id <schemarag.runtime.core.embedding.embedder.Embedder.vectors_id>`:
    one file per kind of vectors, so a cache filled by a batched build is never read by a build
    that embeds each text alone."""

    def __init__(self, folder: Path, name: str, dimension: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{name}.sqlite"
        self.dimension = dimension
        self._conn = sqlite3.connect(self.path, timeout=60)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS vectors (k TEXT PRIMARY KEY, v BLOB NOT NULL)")

    @classmethod
    def for_embedder(cls, folder: Path, embedder: Embedder) -> EmbeddingCache:
        return cls(folder, embedder.vectors_id, embedder.dimension)

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = f"SELECT k, v FROM vectors WHERE k IN ({','.join('?' * len(part))})"
            for k, v in self._conn.execute(q, part):
                vec = np.frombuffer(v, dtype=np.float32)
                if vec.shape[0] == self.dimension:
                    out[k] = vec
        return out

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors (k, v) VALUES (?, ?)",
                [(k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )

    def close(self) -> None:
        self._conn.close()
