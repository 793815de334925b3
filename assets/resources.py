"""Resources for everything external: where inputs and artifacts live, and the embedding model.

Fields default to ``None`` and resolve at run time (``$SCHEMARAG_DATA``, ``$SCHEMARAG_ARTIFACTS``,
then the repo defaults), so the same Definitions serve the samples, a CI checkout and a
deployment without import-time environment reads.
"""

import os
from pathlib import Path

import dagster as dg

from schemarag.assets.lib.datasources.config import datasources_path
from schemarag.runtime.artifact.remote import is_remote, local_artifacts
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec
from schemarag.runtime.core.paths import data_dir


class IndexPaths(dg.ConfigurableResource):
    """Input and output folders, how many published versions to keep, and whose build this is.

    ``tenant`` (``schemarag build --tenant``) sends artifacts to ``<artifacts>/_tenants/<tenant>/``
    and restricts live datasources to that tenant's; ``None`` uses the schema file's own
    ``tenant`` field. ``datasources`` is the datasources file (None: ``$SCHEMARAG_DATASOURCES``,
    else ``data/datasources.yaml``). ``artifacts`` may be a URI (``s3://bucket/prefix``): the
    build then works in a local copy (:func:`local_artifacts`) and ``published_index`` uploads.
    """

    data: str | None = None
    artifacts: str | None = None
    keep_versions: int = 3
    write_lance: bool = True
    tenant: str | None = None
    datasources: str | None = None

    def data_path(self) -> Path:
        return data_dir(self.data)

    def datasources_path(self) -> Path:
        return datasources_path(self.datasources)

    def artifacts_path(self) -> Path:
        """The local folder the build writes (a remote location's cache copy for a URI)."""
        return local_artifacts(self.artifacts)

    def remote_artifacts(self) -> str | None:
        """The object-store URI to publish to, or None for a local artifacts folder."""
        loc = self.artifacts or os.environ.get("SCHEMARAG_ARTIFACTS")
        return loc if is_remote(loc) else None


class EmbeddingModel(dg.ConfigurableResource):
    """The passage-embedding model (offline). ``model_name``: a catalogue name or alias
    (``schemarag.runtime.core.embedding.model_catalog``; None = ``$SCHEMARAG_EMBEDDING_MODEL``, else
    all-MiniLM-L6-v2); ``model_dir=None`` = the catalogue's folder; ``dimension=None`` = the
    catalogue's. The chosen model's identity goes into every manifest and key. ``threads``: ONNX
    threads (None = one single-thread session per core); it changes no vector, only how runs
    side by side share cores. ``column_vectors``: what column chunks are embedded with
    (``full``, ``short``, ``bm25``; None = ``$SCHEMARAG_COLUMN_VECTORS``, else ``full``): part
    of the key and the manifest (``schemarag.assets.lib.embed_plan``)."""

    model_name: str | None = None
    model_dir: str | None = None
    dimension: int | None = None
    threads: int | None = None
    column_vectors: str | None = None

    def column_tier(self) -> str:
        """The column tier this build uses, checked (a typo fails before any work)."""
        from schemarag.assets.lib.embed_plan import resolve_column_vectors

        return resolve_column_vectors(self.column_vectors)

    def embedder(self) -> Embedder:
        return Embedder.get(
            ModelSpec(
                name=self.model_name, model_dir=self.model_dir, dimension=self.dimension, threads=self.threads
            )
        )
