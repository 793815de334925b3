"""schemarag's runtime: open a published index and retrieve focused schemas in milliseconds.

Query services import only this package; it never imports Dagster. Heavy modules load on
first use of the name that needs them.

>>> import schemarag.runtime
>>> 'Retriever' in schemarag.runtime.__all__ and 'retrieve' in schemarag.runtime.__all__
True
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Retriever": "schemarag.runtime.search.retriever",
    "retrieve": "schemarag.runtime.api",
    "RetrievalResult": "schemarag.runtime.search.results",
    "ScoredChunk": "schemarag.runtime.search.results",
    "TableRanking": "schemarag.runtime.search.results",
    "IndexArtifact": "schemarag.runtime.artifact.reader",
    "load_schema": "schemarag.runtime.core.schema",
    "Database": "schemarag.runtime.core.schema",
    "format_full_schema": "schemarag.runtime.formatting",
    "format_focused_schema": "schemarag.runtime.formatting",
    "SchemaragError": "schemarag.runtime.core.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
