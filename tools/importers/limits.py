"""Bounds on what an import reads, for every importer: one place, one flag each to raise them.

An export, a dbt project or a manifest comes from whoever can write into the warehouse or the
repository, so the importer treats it as hostile bytes (issue 39: a 1 MB ``.csv.gz`` inflating to
1 GiB drove ``import catalog`` to 2.2 GB RSS; a 7.8 KB gzip of one repeated row gave 2,000,024
warnings; a manifest nested 200,000 deep overflowed the stack). Every reader streams and checks
these limits while it reads, and a limit reached is one :class:`ImportLimitError` line naming the
file, the limit and the flag that raises it.

The defaults are far above any real warehouse, so they never fire on a genuine export (the 158
Spider 2.0-lite exports import with them on, see SECURITY.md) and still stop an attack in seconds:

- ``decompressed_bytes`` 8 GiB per file: the largest real catalog export we know (Spider 2.0's
  biggest BigQuery ``COLUMN_FIELD_PATHS``) is tens of MB; 8 GiB is two orders above a 100,000-table
  warehouse with long comments, and the reader holds only a block of it at a time.
- ``line_bytes`` 16 MiB per row (also the CSV block size, so a row up to it always parses): a
  catalog row is a name, a type (at most 65,536 characters kept) and a comment.
- ``field_bytes`` 1 MiB per value: longer descriptions are cut there with a warning, a longer
  name skips its row; no warehouse allows a comment or identifier near that size.
- ``rows`` 50,000,000 per file: ten times the columns of the largest public warehouse catalogs.
- ``depth`` 512 levels of JSON/YAML nesting: dbt manifests nest about 10.
- ``yaml_nodes`` 1,000,000 nodes per YAML document after alias expansion: a 10,000-model
  ``schema.yml`` has about 500,000; the issue's 1 KB alias bomb expands to 10^9.
- ``jinja_iterations`` 1,000,000 loop iterations and calls, ``jinja_seconds`` 2 s and
  ``jinja_output_bytes`` 16 MiB per render: a real model renders in milliseconds to a few KB
  (dbt_utils' star over a 1,500-column table: about 60 KB); over a bound the text is kept
  unrendered with one warning.
- ``warnings`` 200 distinct warnings shown; repeats of one warning (the same message at another
  row) always collapse into one line with a count, and warnings past the cap are counted.

Example:
    >>> ImportLimits().line_bytes == 16 * MiB
    True
    >>> w = Warnings(ImportLimits(warnings=2))
    >>> for row in (2, 3, 4):
    ...     w.append(f"c.csv: row {row}: column a listed twice")
    >>> list(w)
    ['c.csv: row 2: column a listed twice (and 2 more like it at later rows)']
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields

from schemarag.runtime.core.errors import ImportFormatError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30


class ImportLimitError(ImportFormatError):
    """A bound of :class:`ImportLimits` was reached; the message names file, limit and flag."""


@dataclass(frozen=True)
class ImportLimits:
    """The bounds of one import (see the module docstring for each default and why)."""

    decompressed_bytes: int = 8 * GiB
    line_bytes: int = 16 * MiB
    field_bytes: int = 1 * MiB
    rows: int = 50_000_000
    depth: int = 512
    yaml_nodes: int = 1_000_000
    jinja_iterations: int = 1_000_000
    jinja_seconds: int = 2
    jinja_output_bytes: int = 16 * MiB
    warnings: int = 200

    @staticmethod
    def flag(name: str) -> str:
        """The command-line flag that raises limit ``name``."""
        return "--max-" + name.replace("_", "-")

    def exceeded(self, where: object, name: str, what: str) -> ImportLimitError:
        """The one-line error for limit ``name`` reached in ``where`` (``what`` says by what)."""
        value = getattr(self, name)
        return ImportLimitError(
            f"{where}: {what} is over the limit of {value:,} ({name.replace('_', ' ')}); if the input "
            f"is genuine, raise it with {self.flag(name)} {value * 4}"
        )


DEFAULT_LIMITS = ImportLimits()
_ACTIVE: ContextVar[ImportLimits] = ContextVar("import_limits", default=DEFAULT_LIMITS)


def active_limits() -> ImportLimits:
    """The limits of the import running in this context (:func:`use_limits`), else the defaults.
    Readers deep inside an importer (a YAML file, a Jinja render) read them here rather than
    through every signature in between."""
    return _ACTIVE.get()


@contextmanager
def use_limits(limits: ImportLimits) -> Iterator[None]:
    """Make ``limits`` the :func:`active_limits` for the duration of one import."""
    token = _ACTIVE.set(limits)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """``--max-decompressed-bytes`` ... ``--max-warnings``: each limit of :class:`ImportLimits`."""
    for f in fields(ImportLimits):
        parser.add_argument(
            ImportLimits.flag(f.name),
            type=int,
            metavar="N",
            dest=f"limit_{f.name}",
            default=None,
            help=f"import bound: {f.name.replace('_', ' ')} (default {f.default:,}; see importers/limits.py)",
        )


def limits_from_args(args: argparse.Namespace) -> ImportLimits:
    """The limits with any ``--max-*`` flag applied (a value below 1 is a usage error)."""
    given = {f.name: getattr(args, f"limit_{f.name}", None) for f in fields(ImportLimits)}
    for name, value in given.items():
        if value is not None and value < 1:
            raise ImportFormatError(f"{ImportLimits.flag(name)} {value}: give a positive number")
    return ImportLimits(**{k: v for k, v in given.items() if v is not None})


_ROW = re.compile(r"\b(row|line) \d+")


class Warnings(list):
    """A warning list that stays small: a warning repeated at other rows (same text once the
    ``row N`` / ``line N`` is set aside) becomes one line with a count, and at most
    ``limits.warnings`` distinct lines are kept (one last line counts the rest). Memory and
    output are therefore bounded whatever the input repeats."""

    def __init__(self, limits: ImportLimits = DEFAULT_LIMITS) -> None:
        super().__init__()
        self._cap = limits.warnings
        self._index: dict[str, tuple[int, str, int]] = {}  # key -> (position, first text, repeats)
        self._dropped = 0

    def append(self, message: str) -> None:  # type: ignore[override]
        key = _ROW.sub(r"\1 #", message)
        hit = self._index.get(key)
        if hit is not None:
            pos, first, repeats = hit
            self._index[key] = (pos, first, repeats + 1)
            super().__setitem__(pos, f"{first} (and {repeats + 1:,} more like it at later rows)")
            return
        if len(self._index) >= self._cap:
            self._dropped += 1
            line = f"{self._dropped:,} more distinct warning(s) not shown (raise with --max-warnings)"
            if self._dropped == 1:
                super().append(line)
            else:
                super().__setitem__(len(self) - 1, line)
            return
        super().append(message)  # below the cap nothing was dropped yet: this is the last line
        self._index[key] = (len(self) - 1, message, 0)

    def extend(self, messages) -> None:  # type: ignore[override]
        for message in messages:
            self.append(message)
