"""schemarag: schema-documentation retrieval for text-to-SQL.

The import root of the project. ``schemarag.runtime`` is the small query package a service
imports (re-exported here, loaded on first use); ``schemarag.assets`` and
``schemarag.pipelines`` build the index with Dagster; ``schemarag.tools`` holds importers,
evaluation and benchmarks.

>>> import schemarag
>>> 'Retriever' in schemarag.__all__ and schemarag.__version__.count('.') >= 2
True
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

_RUNTIME_EXPORTS = (
    "Retriever",
    "retrieve",
    "RetrievalResult",
    "ScoredChunk",
    "TableRanking",
    "IndexArtifact",
    "load_schema",
    "Database",
    "format_full_schema",
    "format_focused_schema",
    "SchemaragError",
)
__all__ = ["__version__", *sorted(_RUNTIME_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _RUNTIME_EXPORTS:
        return getattr(importlib.import_module("schemarag.runtime"), name)
    raise AttributeError(f"module 'schemarag' has no attribute {name!r}")
