"""The build jobs: every asset of the index group, one run per database partition; and the
embedding fan-out of big databases, one run per ``<database>/<schema>`` partition."""

import dagster as dg

from schemarag.assets.partitions import databases_partitions, schema_partitions

build_index_job = dg.define_asset_job(
    "build_index",
    selection=dg.AssetSelection.groups("index"),
    partitions_def=databases_partitions,
    description="Build and publish the retrieval index of one database.",
)

embed_schema_job = dg.define_asset_job(
    "embed_schema",
    selection=dg.AssetSelection.groups("schema_fanout"),
    partitions_def=schema_partitions,
    description="Embed one schema of a big database into the embedding cache, before its build_index run.",
)
