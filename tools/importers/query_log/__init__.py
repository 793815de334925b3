"""``schemarag import queries``: a warehouse's query log as evidence for retrieval (issue 38).

:mod:`.sources` reads the inputs, :mod:`.formats` tells the warehouse exports apart,
:mod:`.statements` parses and resolves each statement once, :mod:`.importer` ties them together
and writes the stored, versioned history the build reads (its layout:
:mod:`schemarag.assets.lib.query_history`, where the build can import it).
"""

from schemarag.runtime.core.paths import history_dir
from schemarag.tools.importers.query_log.importer import QueryImportReport, import_queries

__all__ = ["QueryImportReport", "history_dir", "import_queries"]
