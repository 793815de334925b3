"""The build job: every asset of the index group, one run per database partition."""

import dagster as dg

from schemarag.assets.partitions import databases_partitions

build_index_job = dg.define_asset_job(
    "build_index",
    selection=dg.AssetSelection.groups("index"),
    partitions_def=databases_partitions,
    description="Build and publish the retrieval index of one database.",
)
