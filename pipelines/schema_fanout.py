"""``schemarag build --jobs N``, first phase: big databases' embedding fanned out by schema.

A database with at least two schemas and ``min_columns`` columns
(:func:`~schemarag.assets.lib.embed_shards.fanout_schemas`) gets one ``embed_schema`` run per
``<database>/<schema>`` partition. The runs go to ``N`` worker processes, each on Dagster's
multiprocess executor exactly like a ``build_index`` run (:mod:`schemarag.pipelines.fanout`),
and leave their vectors in the embedding cache (and, for an object-store artifacts location,
as shards next to the artifacts: :mod:`~schemarag.assets.lib.cache_shards`). The databases'
``build_index`` runs come second and find those vectors cached.

A failed schema run costs time, not correctness: its database's run embeds whatever is missing.
Live datasources are not fanned out: their schema is only known after the run's own snapshot.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dagster as dg

from schemarag.assets.lib.datasources.tenancy import find_datasource
from schemarag.assets.lib.embed_shards import fanout_schemas, partition_key, split_partition_key
from schemarag.assets.lib.inputs import built_key
from schemarag.assets.partitions import schema_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.pipelines.definitions import FANOUT_ASSETS
from schemarag.pipelines.fanout import in_workers, partition_run, require_persistent
from schemarag.pipelines.jobs import embed_schema_job
from schemarag.pipelines.runs import run_error, run_metadata, run_tags
from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.core.paths import schema_path

log = logging.getLogger(__name__)


@dataclass
class SchemaReport:
    partition: str
    ok: bool
    embedded: int = 0
    cache_hits: int = 0
    error: str = ""


def schema_job(resources: dict[str, Any]) -> dg.JobDefinition:
    defs = dg.Definitions(assets=FANOUT_ASSETS, jobs=[embed_schema_job], resources=resources)
    return defs.resolve_job_def(embed_schema_job.name)


def reconstruct_schema_job() -> dg.JobDefinition:
    """``embed_schema`` with resources configured from run config (what ``reconstructable`` loads)."""
    return schema_job(
        {
            "index_paths": IndexPaths(),
            "embedding_model": EmbeddingModel(),
            "io_manager": dg.FilesystemIOManager(),
        }
    )


def schema_partition_keys(
    dbs: list[str], index_paths: IndexPaths, model: dict, min_columns: int, column_vectors: str | None = None
) -> list[str]:
    """``<db>/<schema>`` for every schema of every big, file-based, not yet built database."""
    data, artifacts = index_paths.data_path(), index_paths.artifacts_path()
    keys: list[str] = []
    for db in dbs:
        try:
            if find_datasource(db, index_paths.datasources, index_paths.tenant) is not None:
                continue
            schemas = fanout_schemas(schema_path(data, db), min_columns)
            if (
                schemas
                and built_key(
                    data, db, model, artifacts, tenant=index_paths.tenant, column_vectors=column_vectors
                )
                is None
            ):
                keys.extend(partition_key(db, s) for s in schemas)
        except SchemaragError:
            continue  # the database's own run reports it
    return keys


def run_schema_partition(
    instance_ref: Any, key: str, paths: dict[str, Any], model: dict[str, Any]
) -> SchemaReport:
    """One ``embed_schema`` run in this (worker) process; its summary."""
    db, schema = split_partition_key(key)
    tags = {**run_tags(db, IndexPaths(**paths)), "schemarag/schema": schema, "dagster/partition": key}
    with partition_run(reconstruct_schema_job, instance_ref, paths, model, tags) as result:
        if not result.success:
            return SchemaReport(partition=key, ok=False, error=run_error(result))
        meta = run_metadata(result, "schema_embeddings")
        return SchemaReport(
            partition=key,
            ok=True,
            embedded=int(meta.get("embedded", 0)),
            cache_hits=int(meta.get("cache_hits", 0)),
        )


def embed_schemas_in_parallel(
    dbs: list[str],
    index_paths: IndexPaths,
    embedding_model: EmbeddingModel,
    instance: dg.DagsterInstance,
    jobs: int,
    min_columns: int,
    progress: Callable[[str], None] | None = None,
) -> list[SchemaReport]:
    """Run the schema partitions of the big databases among ``dbs``, up to ``jobs`` at once."""
    keys = schema_partition_keys(
        dbs, index_paths, embedding_model.embedder().identity, min_columns, embedding_model.column_tier()
    )
    if not keys:
        return []
    require_persistent(instance)
    known = set(instance.get_dynamic_partitions(schema_partitions.name))
    if new := [k for k in keys if k not in known]:
        instance.add_dynamic_partitions(schema_partitions.name, new)
    workers = min(jobs, len(keys))
    if progress:
        progress(f"{len(keys)} schema partition(s) ({', '.join(keys)}) on {workers} worker process(es)")
    paths = index_paths.model_dump(exclude_none=True)
    model = embedding_model.model_dump(exclude_none=True)
    # one ONNX session per core by default: N partitions side by side would each start one
    # thread per core and fight over them (same vectors either way: tests/assets/test_embed_shards.py)
    model.setdefault("threads", max(1, (os.cpu_count() or 1) // workers))
    reports = in_workers(run_schema_partition, instance, keys, paths, model, workers)
    for r in reports:
        if not r.ok:  # the database's run embeds what this one did not: slower, still correct
            log.warning("schema partition %s failed (its database's run embeds it): %s", r.partition, r.error)
            if progress:
                progress(f"schema partition {r.partition} failed, its database's run embeds it: {r.error}")
    return reports
