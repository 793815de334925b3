"""A progress hook the build stages call, so a command line can show where a build is.

``schemarag build`` runs the Dagster graph in this process; Dagster's own event stream is
written to the instance, not handed back while the run is going. So each asset announces its
stage with :func:`stage` and long stages report counts with :func:`advance`; whoever installed
a reporter with :func:`reporting` (the CLI's progress bars) sees them, and without one every
call is a no-op costing one global read. The library never prints: drawing is the reporter's
business, and a reporter that raises is logged and dropped so progress can never fail a build.

Example:
    >>> seen = []
    >>> with reporting(seen.append):
    ...     stage("shop", "doc_chunks")
    ...     advance("shop", "chunk_embeddings", 16, 51, "chunks")
    >>> [(e.database, e.stage, e.done, e.total) for e in seen]
    [('shop', 'doc_chunks', 0, 0), ('shop', 'chunk_embeddings', 16, 51)]
    >>> stage("shop", "bm25_statistics")  # nobody listening: nothing happens
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProgressEvent:
    """``stage`` started (``total == 0``) or advanced to ``done`` of ``total`` ``unit``."""

    database: str
    stage: str
    done: int = 0
    total: int = 0
    unit: str = ""


Reporter = Callable[[ProgressEvent], None]

_lock = threading.Lock()
_reporter: Reporter | None = None


def _emit(event: ProgressEvent) -> None:
    global _reporter
    reporter = _reporter
    if reporter is None:
        return
    try:
        reporter(event)
    except Exception:  # a broken progress bar must never fail a build
        log.warning("progress reporter failed; progress is off for the rest of this build", exc_info=True)
        with _lock:
            _reporter = None


def stage(database: str, name: str) -> None:
    """Stage ``name`` of ``database``'s build has started."""
    _emit(ProgressEvent(database, name))


def advance(database: str, name: str, done: int, total: int, unit: str = "") -> None:
    """``done`` of ``total`` ``unit`` of stage ``name`` are finished."""
    _emit(ProgressEvent(database, name, done, total, unit))


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Send progress events to ``reporter`` inside the block (None: keep them off)."""
    global _reporter
    with _lock:
        previous, _reporter = _reporter, reporter
    try:
        yield
    finally:
        with _lock:
            _reporter = previous
