"""The one Definitions object of the schemarag code location (``dagster dev`` loads this)."""

import dagster as dg

from schemarag.assets.bm25_statistics import bm25_statistics
from schemarag.assets.chunk_embeddings import chunk_embeddings
from schemarag.assets.doc_chunks import doc_chunks
from schemarag.assets.live_schema import live_schema_snapshot
from schemarag.assets.published_index import published_index
from schemarag.assets.query_history import query_history
from schemarag.assets.resources import EmbeddingModel, IndexPaths
from schemarag.assets.schema_embeddings import schema_embeddings
from schemarag.assets.source_snapshot import source_snapshot
from schemarag.pipelines.automation import daily_index_build, datasource_snapshot_sensor, docs_changed_sensor
from schemarag.pipelines.jobs import build_index_job, embed_schema_job

INDEX_ASSETS = [
    live_schema_snapshot,
    source_snapshot,
    doc_chunks,
    query_history,
    bm25_statistics,
    chunk_embeddings,
    published_index,
]
FANOUT_ASSETS = [schema_embeddings]

defs = dg.Definitions(
    assets=[*INDEX_ASSETS, *FANOUT_ASSETS],
    jobs=[build_index_job, embed_schema_job],
    schedules=[daily_index_build],
    sensors=[docs_changed_sensor, datasource_snapshot_sensor],
    resources={"index_paths": IndexPaths(), "embedding_model": EmbeddingModel()},
)
