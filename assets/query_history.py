"""Stage 2b: the imported query history as the index's arrays (issue 38; docs/query-history.md).

Counts what ``schemarag import queries`` stored beside the schema (tables, co-usage pairs, join
edges, columns, example chunks: :mod:`.lib.history_arrays`); ``published_index`` writes them
into the version. No history: nothing is produced and the version is what it always was.
"""

import time

import dagster as dg
from dagster import AssetExecutionContext

from schemarag.assets.lib.history_arrays import HistoryArrays, build_history_arrays
from schemarag.assets.partitions import databases_partitions
from schemarag.assets.run_log import report_warnings
from schemarag.assets.source_snapshot import SourceSnapshot


@dg.asset(partitions_def=databases_partitions, group_name="index", compute_kind="pyarrow")
def query_history(
    context: AssetExecutionContext, source_snapshot: SourceSnapshot
) -> dg.Output[HistoryArrays | None]:
    """Table usage, co-usage pairs, join edges, column usage and example chunks of the database's
    stored query history; skipped when it has none or the version is already built."""
    snap = source_snapshot
    if snap.history is None:
        return dg.Output(None, metadata={"skipped": "no query history"})
    if snap.existing:
        return dg.Output(None, metadata={"skipped": "artifact already built"})
    start = time.perf_counter()
    arrays = build_history_arrays(
        snap.history,
        snap.database,
        snap.params["query_history"]["queries_sha256"],
        snap.inputs["schema"]["sha256"],
    )
    report_warnings(context, arrays.warnings)
    return dg.Output(
        arrays,
        metadata={
            "seconds": round(time.perf_counter() - start, 3),
            "rows": arrays.summary["rows"],
            "runs": arrays.summary["runs"],
            **arrays.summary["counts"],
            "dropped": dg.MetadataValue.json(arrays.summary["dropped"]),
        },
    )
