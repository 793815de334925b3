"""``schemarag import queries``: a warehouse's query log as evidence for retrieval (issue 38).

:mod:`.sources` reads the inputs, :mod:`.formats` tells the warehouse exports apart,
:mod:`.statements` parses and resolves each statement once, :mod:`.layout` is the stored,
versioned history the build reads, :mod:`.importer` ties them together.
"""

from schemarag.tools.importers.query_log.importer import QueryImportReport, import_queries
from schemarag.tools.importers.query_log.layout import history_dir

__all__ = ["QueryImportReport", "history_dir", "import_queries"]
