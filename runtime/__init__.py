"""schemarag's runtime: open a published index and retrieve focused schemas in milliseconds.

Query services import only this package; it never imports Dagster. Heavy modules load on
first use of the name that needs them.

>>> import runtime
>>> 'Retriever' in runtime.__all__ and 'retrieve' in runtime.__all__
True
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Retriever": "runtime.retriever",
    "retrieve": "runtime.api",
    "RetrievalResult": "runtime.results",
    "ScoredChunk": "runtime.results",
    "TableRanking": "runtime.results",
    "IndexArtifact": "runtime.artifact_reader",
    "load_schema": "runtime.schema",
    "Database": "runtime.schema",
    "format_full_schema": "runtime.formatting",
    "format_focused_schema": "runtime.formatting",
    "SchemaragError": "runtime.errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
