"""The one Definitions object of the schemarag code location (``dagster dev`` loads this)."""

import dagster as dg

from assets.bm25_statistics import bm25_statistics
from assets.chunk_embeddings import chunk_embeddings
from assets.doc_chunks import doc_chunks
from assets.live_schema import live_schema_snapshot
from assets.published_index import published_index
from assets.resources import EmbeddingModel, IndexPaths
from assets.source_snapshot import source_snapshot
from pipelines.automation import daily_index_build, datasource_snapshot_sensor, docs_changed_sensor
from pipelines.jobs import build_index_job

INDEX_ASSETS = [
    live_schema_snapshot,
    source_snapshot,
    doc_chunks,
    bm25_statistics,
    chunk_embeddings,
    published_index,
]

defs = dg.Definitions(
    assets=INDEX_ASSETS,
    jobs=[build_index_job],
    schedules=[daily_index_build],
    sensors=[docs_changed_sensor, datasource_snapshot_sensor],
    resources={"index_paths": IndexPaths(), "embedding_model": EmbeddingModel()},
)
