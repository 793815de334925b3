"""Fan-out stage: embed one schema of a big database into the embedding cache.

One partition per ``<database>/<schema>``. Each run reads and chunks the whole database (cheap
and deterministic: chunk ids, the embedding plan and which schema owns a text shared by several
schemas all depend on the whole database), then embeds only the texts its schema owns, in the
batches the single-process build would use (:mod:`~schemarag.assets.lib.embed_shards`), and
writes them to the embedding cache. The database's ``build_index`` run (the fan-in) then finds
every vector cached and only assembles: BM25, artifact, publish, byte-identical to a build
without the fan-out. Its output is the cache, not a Dagster value: nothing is pickled.
"""

import time

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.chunk_embeddings import chunk_groups, embed_missing, embed_text
from schemarag.assets.doc_chunks import make_chunks
from schemarag.assets.lib import progress
from schemarag.assets.lib.cache_shards import push_shard
from schemarag.assets.lib.datasources.tenancy import check_build_tenant
from schemarag.assets.lib.embed_plan import plan_for, unique_missing
from schemarag.assets.lib.embed_shards import database_schemas, split_partition_key
from schemarag.assets.lib.embedding_cache import EmbeddingCache, text_key
from schemarag.assets.lib.inputs import read_sources
from schemarag.assets.partitions import schema_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import embedding_cache_dir


@dg.asset(partitions_def=schema_partitions, group_name="schema_fanout", compute_kind="fastembed")
def schema_embeddings(
    context: AssetExecutionContext, index_paths: IndexPaths, embedding_model: EmbeddingModel
) -> dg.MaterializeResult:
    """The vectors of one schema's texts, written to the embedding cache for the database's run."""
    db, schema = split_partition_key(context.partition_key)
    progress.stage(db, f"schema_embeddings {schema}")
    start = time.perf_counter()
    embedder = embedding_model.embedder()
    snap = read_sources(
        index_paths.data_path(),
        db,
        embedder.identity,
        index_paths.artifacts_path(),
        tenant=index_paths.tenant,
        column_vectors=embedding_model.column_tier(),
    )
    check_build_tenant(snap.database, index_paths.tenant)
    if snap.existing:
        return dg.MaterializeResult(metadata={"skipped": "artifact already built", "key": snap.key})
    schemas = database_schemas(snap.database)
    if schema not in schemas:
        raise ConfigError(
            f"schema partition {context.partition_key!r}: database {db!r} has no schema {schema!r} "
            f"(its schemas: {', '.join(schemas) or 'none'}); delete the stale partition"
        )
    chunks = make_chunks(snap).chunks
    plan = plan_for(chunks, snap.database, snap.params)
    texts = plan if plan is not None else [embed_text(c) for c in chunks]
    keys = [text_key(t) if t is not None else None for t in texts]
    groups = chunk_groups(chunks, snap.database)
    mine = [i for i in unique_missing(keys, {}) if groups[i] == schemas.index(schema)]
    cache = EmbeddingCache.for_embedder(embedding_cache_dir(index_paths.artifacts_path()), embedder)
    try:
        cached = cache.get_many([keys[i] for i in mine])  # type: ignore[misc]
        missing = [i for i in mine if keys[i] not in cached]
        fresh = embed_missing(texts, keys, missing, embedder, groups)
        if fresh:
            cache.put_many(fresh)
    finally:
        cache.close()
    vectors = {keys[i]: cached.get(keys[i], fresh.get(keys[i])) for i in mine}  # type: ignore[arg-type]
    pushed = push_shard(index_paths.remote_artifacts(), snap.tenant, db, schema, embedder, vectors)
    context.log.info(f"{db}/{schema}: embedded {len(fresh)} texts, {len(mine) - len(missing)} from cache")
    return dg.MaterializeResult(
        metadata={
            "key": snap.key,
            "texts": len(mine),
            "embedded": len(fresh),
            "cache_hits": len(mine) - len(missing),
            "shard": pushed or "",
            "seconds": round(time.perf_counter() - start, 3),
            "model": embedder.spec.name,
        }
    )
