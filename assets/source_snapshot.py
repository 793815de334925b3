"""Stage 1: the exact input bytes of one database (schema JSON + docs) and its content key."""

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.lib import progress
from schemarag.assets.lib.datasources.tenancy import check_build_tenant
from schemarag.assets.lib.inputs import SourceSnapshot, read_sources
from schemarag.assets.live_schema import live_schema_snapshot
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.assets.run_log import report_warnings


@dg.asset(
    partitions_def=databases_partitions,
    group_name="index",
    compute_kind="python",
    deps=[live_schema_snapshot],  # a live datasource's JSON + docs are written there first
)
def source_snapshot(
    context: AssetExecutionContext, index_paths: IndexPaths, embedding_model: EmbeddingModel
) -> dg.Output[SourceSnapshot]:
    """Schema JSON and markdown docs of one database, hashed into the artifact key."""
    progress.stage(context.partition_key, "source_snapshot")
    db = context.partition_key
    model = embedding_model.embedder().identity
    snap = read_sources(
        index_paths.data_path(),
        db,
        model,
        index_paths.artifacts_path(),
        tenant=index_paths.tenant,
        column_vectors=embedding_model.column_tier(),
    )
    check_build_tenant(snap.database, index_paths.tenant)
    report_warnings(context, snap.warnings)
    return dg.Output(
        snap,
        metadata={
            "key": snap.key,
            "tenant": snap.tenant or "",
            "already_built": snap.existing,
            "tables": len(snap.database.tables),
            "doc_files": len(snap.doc_bytes),
        },
    )
