"""Stage 0: the live schema snapshot of a configured datasource, upstream of its source files.

For a partition that names a datasource in the datasources file (of the tenant being built),
the asset introspects the live database and runs ``docs init`` into the data folder: the schema
JSON (with ``schema_version`` and ``tenant``) and merged docs. An unchanged fingerprint keeps
the JSON byte-identical, so the downstream key, and the published artifact, stay the same.
Any other database is a static ``<db>.json`` and this asset only records that.

A snapshot failure (bad DSN, refused or dropped connection, permission denied) fails this
step before anything is written, so the run stops and the published artifact is untouched.
"""

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.lib import progress
from schemarag.assets.lib.datasources.docs_init import docs_init
from schemarag.assets.lib.datasources.tenancy import find_datasource
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.resources import IndexPaths


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="sql")
def live_schema_snapshot(context: AssetExecutionContext, index_paths: IndexPaths) -> dg.MaterializeResult:
    """Snapshot + docs init of a live datasource (fingerprint, version, changed) or a no-op."""
    progress.stage(context.partition_key, "live_schema_snapshot")
    db = context.partition_key
    entry = find_datasource(db, index_paths.datasources_path(), index_paths.tenant)
    if entry is None:
        return dg.MaterializeResult(metadata={"source": "static schema file", "live": False})
    result = docs_init(entry, index_paths.data_path())
    context.log.info(
        f"{db} (tenant {result.tenant}): version {result.version}, "
        f"{'changed' if result.changed else 'unchanged'} ({result.snapshot_seconds:.2f}s introspection)"
    )
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.fingerprint),
        metadata={
            "source": f"live {entry.kind} datasource",
            "live": True,
            "tenant": result.tenant,
            "fingerprint": result.fingerprint,
            "version": result.version,
            "changed": result.changed,
            "tables": result.tables,
            "columns": result.columns,
            "docs_created": dg.MetadataValue.json(result.created),
            "docs_merged": dg.MetadataValue.json(result.merged),
            "skipped_tables": dg.MetadataValue.json(result.skipped_tables),
            "pii_columns": dg.MetadataValue.json(result.pii_columns),
            "inferred_joins": dg.MetadataValue.json(result.inferred_joins),
            "snapshot_seconds": round(result.snapshot_seconds, 3),
        },
    )
