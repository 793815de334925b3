"""Schema partitions' vectors in the object store, so a fan-in on another machine finds them.

A ``schema_embeddings`` partition writes its vectors to the local embedding cache; on one
machine (``schemarag build --jobs N``) that is all the database's run needs. On a multi-node
executor each pod has its own local cache, so when the artifacts live in an object store
(``s3://...``) the partition also writes its schema's vectors as one shard, through the same
``pyarrow.fs`` layer as the artifacts::

    <artifacts>/_cache/embedding_shards/<model checksum[:16]>-<dim>[-alone]/<tenant or _>/<db>/<schema>.npz

and the database's ``chunk_embeddings`` step loads its shards into its local cache before
embedding. A shard holds every vector of its schema's texts (cached or new), keyed like the
cache (SHA-256 of the text), so it is self-contained; it is written to a temporary object and
moved into place, so a reader sees the old shard or the new one. Shards are a cache: a stale
or missing one only means those texts are embedded again.
"""

from __future__ import annotations

import io
import logging
import os
import time
from urllib.parse import quote

import numpy as np

from schemarag.assets.lib.embedding_cache import EmbeddingCache
from schemarag.runtime.artifact.remote import filesystem
from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.names import check_name

log = logging.getLogger(__name__)

SHARDS = "_cache/embedding_shards"


def shard_folder(base: str, embedder: Embedder, db: str, tenant: str | None) -> str:
    owner = check_name(tenant, "tenant") if tenant else "_"
    model = embedder.vectors_id
    return f"{base}/{SHARDS}/{model}/{owner}/{check_name(db, 'database')}"


def push_shard(
    uri: str | None,
    tenant: str | None,
    db: str,
    schema: str,
    embedder: Embedder,
    vectors: dict[str, np.ndarray],
) -> str | None:
    """Write ``vectors`` as ``db``'s shard for ``schema`` under ``uri``; its path (None: local)."""
    if not uri:
        return None
    fs, base = filesystem(uri)
    folder = shard_folder(base, embedder, db, tenant)
    keys = sorted(vectors)
    buf = io.BytesIO()
    matrix = np.stack([vectors[k] for k in keys]) if keys else np.zeros((0, embedder.dimension))
    np.savez(buf, keys=np.array(keys, dtype="U64"), vectors=matrix.astype(np.float32))
    fs.create_dir(folder, recursive=True)
    target = f"{folder}/{quote(schema, safe='')}.npz"
    tmp = f"{target}.tmp-{os.getpid()}-{time.monotonic_ns()}"
    with fs.open_output_stream(tmp) as fh:
        fh.write(buf.getvalue())
    fs.move(tmp, target)
    log.info("wrote %d vectors to %s", len(keys), target)
    return target


def pull_shards(
    uri: str | None, tenant: str | None, db: str, embedder: Embedder, cache: EmbeddingCache
) -> int:
    """Load every shard of ``db`` under ``uri`` into ``cache``; how many vectors were new to it."""
    if not uri:
        return 0
    import pyarrow.fs as pafs

    fs, base = filesystem(uri)
    selector = pafs.FileSelector(shard_folder(base, embedder, db, tenant), allow_not_found=True)
    added = 0
    for info in fs.get_file_info(selector):
        if info.type != pafs.FileType.File or not info.path.endswith(".npz"):
            continue
        with fs.open_input_stream(info.path) as fh:
            data = np.load(io.BytesIO(fh.read()), allow_pickle=False)
        keys, vectors = [str(k) for k in data["keys"]], data["vectors"]
        if vectors.ndim != 2 or vectors.shape[1] != embedder.dimension or len(keys) != len(vectors):
            log.warning("%s: not a shard of %d-dimensional vectors; ignored", info.path, embedder.dimension)
            continue
        known = cache.get_many(keys)
        new = {k: v for k, v in zip(keys, vectors, strict=True) if k not in known}
        if new:
            cache.put_many(new)
        added += len(new)
    return added
