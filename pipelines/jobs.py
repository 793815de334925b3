"""The build jobs: every asset of the index group, one run per database partition; and the
embedding fan-out of big databases, one run per ``<database>/<schema>`` partition."""

from typing import Any

import dagster as dg

from schemarag.assets.partitions import databases_partitions, schema_partitions


def build_jobs(executor: Any = None, where: str = "") -> tuple[Any, Any]:
    """``(build_index, embed_schema)`` on ``executor`` (None: Dagster's default, local
    processes); ``where`` ends each description ("on a Celery worker")."""
    build = dg.define_asset_job(
        "build_index",
        selection=dg.AssetSelection.groups("index"),
        partitions_def=databases_partitions,
        executor_def=executor,
        description=f"Build and publish the retrieval index of one database{where}.",
    )
    embed = dg.define_asset_job(
        "embed_schema",
        selection=dg.AssetSelection.groups("schema_fanout"),
        partitions_def=schema_partitions,
        executor_def=executor,
        description=f"Embed one schema of a big database into the embedding cache{where}, before its "
        "build_index run.",
    )
    return build, embed


build_index_job, embed_schema_job = build_jobs()
