"""Which index version a database serves: one ``stat`` per check, loads off the request path.

:class:`ServedVersion` holds the pinned :class:`IndexArtifact` of one database folder. A
request calls :meth:`ServedVersion.snapshot` once and keeps the object it gets for its whole
life. At most every ``refresh_seconds`` that call ``stat``\\ s ``CURRENT``; a change starts one
background thread that reads the new key, opens and fully verifies that version (manifest,
identity, checksums), warms it, and swaps it in by one reference assignment. Requests never
wait for it and never hash a file. A version that fails to open is logged, kept in
``last_error`` and not retried until ``CURRENT`` changes again; the old version keeps serving.
The superseded version is unmapped when the last request holding it finishes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.artifact.reader import IndexArtifact, current_key
from schemarag.runtime.core.errors import ArtifactNotFoundError

log = logging.getLogger(__name__)
Stamp = tuple[int, int, int]


class ServedVersion:
    """The version of ``root`` being served (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        opener: Callable[[Path], IndexArtifact],
        refresh_seconds: float,
        not_found: Callable[[], ArtifactNotFoundError],
    ) -> None:
        self.root = root
        self.refresh_seconds = refresh_seconds
        self._opener = opener
        self._not_found = not_found
        self._lock = threading.Lock()
        self._loading = False
        self._checked = time.monotonic()
        self.last_error: Exception | None = None
        stamp = self._stat()
        if stamp is None:
            raise not_found()
        self._current: IndexArtifact = self._open_named(None)
        self._stamp: Stamp | None = stamp

    def _stat(self) -> Stamp | None:
        try:
            st = os.stat(self.root / CURRENT)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _open_named(self, current: IndexArtifact | None) -> IndexArtifact:
        key = current_key(self.root)
        if key is None:
            raise self._not_found()
        if current is not None and current.key == key:
            return current
        art = self._opener(self.root / key)
        art.warm()
        return art

    def _reload(self, stamp: Stamp) -> None:
        try:
            art = self._open_named(self._current)
            if art is not self._current:
                log.info("index %s: now serving version %s", self.root, art.key)
            self._current, self.last_error = art, None  # the swap: one reference assignment
        except Exception as exc:  # keep serving the pinned version; retry when CURRENT changes
            self.last_error = exc
            log.error("index %s: not switching to the newly published version: %s", self.root, exc)
        finally:
            self._stamp = stamp
            with self._lock:
                self._loading = False

    def snapshot(self) -> IndexArtifact:
        """The version a request pins (call once per request; costs at most one ``stat``)."""
        now = time.monotonic()
        if now - self._checked >= self.refresh_seconds:
            self._checked = now
            stamp = self._stat()
            if stamp is not None and stamp != self._stamp:
                with self._lock:
                    start, self._loading = not self._loading, True
                if start:
                    # not a daemon: interpreter exit waits for a load in progress instead of
                    # killing the thread inside DuckDB's C++ code (which aborts the process)
                    threading.Thread(target=self._reload, args=(stamp,), name="schemarag-reload").start()
        return self._current

    def refresh(self) -> str:
        """Check ``CURRENT`` now and switch before returning (for operators and tests)."""
        stamp = self._stat()
        if stamp is not None and stamp != self._stamp:
            with self._lock:
                self._loading = True
            self._reload(stamp)
        return self._current.key
