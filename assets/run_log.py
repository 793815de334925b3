"""Build warnings reach the user once and the run's history once.

An asset's warning (a skipped doc file, an unreadable part) goes to the Dagster event log with
``context.log`` (the UI shows it on the run) and to the console through the ``schemarag`` logger.
The build runs Dagster's own console logger at ERROR (``pipelines.runs.QUIET``), so the same
warning is not printed a second time in Dagster's format; library code returns its warnings
instead of logging them, and the caller reports them here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from dagster import AssetExecutionContext

log = logging.getLogger("schemarag.build")


def report_warnings(context: AssetExecutionContext, warnings: Iterable[str]) -> None:
    """Each warning once on the console (``schemarag.build``) and once in the run's event log."""
    for message in warnings:
        context.log.warning(message)
        log.warning("%s: %s", context.partition_key, message)
