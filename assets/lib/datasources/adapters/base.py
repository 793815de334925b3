"""What every adapter returns, and the bounded column profiling they share.

An adapter reads the catalog (tables, columns, keys, comments) into :class:`RawTable` and
answers small, bounded queries. Profiling SQL is the same in SQLite, DuckDB and PostgreSQL
(double-quoted identifiers, ``LIMIT`` in a sub-select), so it lives here; each adapter only
supplies ``query`` with its own statement timeout and error translation.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from schemarag.assets.lib.datasources.config import DatasourceEntry, Sampling
from schemarag.runtime.core.errors import DatasourceError

log = logging.getLogger(__name__)

_TEXT_TYPE = re.compile(r"char|text|clob|string|varchar|enum|citext|name\b", re.IGNORECASE)


class QueryTimeout(DatasourceError):
    """A bounded query hit the statement timeout (profiling then skips that column)."""


@dataclass
class RawColumn:
    name: str
    type: str
    nullable: bool = True
    comment: str = ""
    is_text: bool = False


@dataclass
class RawForeignKey:
    """One (possibly composite) FK; ``ref_table`` is the snapshot name of the target."""

    columns: list[str]
    ref_table: str
    ref_columns: list[str]
    name: str = ""


@dataclass
class RawTable:
    name: str  # name as it appears in the snapshot (schema-qualified when several schemas)
    sql_name: str  # quoted, possibly schema-qualified, for use in SQL
    columns: list[RawColumn]
    comment: str = ""
    primary_key: list[str] = field(default_factory=list)
    foreign_keys: list[RawForeignKey] = field(default_factory=list)
    row_count: int | None = None
    readable: bool = True


@dataclass
class Profile:
    distinct_count: int
    null_fraction: float
    rows_scanned: int
    values: list[str]


def quote_ident(name: str) -> str:
    """Standard SQL identifier quoting, valid in all three dialects."""
    return '"' + name.replace('"', '""') + '"'


def looks_textual(type_name: str) -> bool:
    return bool(_TEXT_TYPE.search(type_name or ""))


class Adapter(ABC):
    """A connection to one datasource. Use as a context manager."""

    dialect: str = ""

    def __init__(self, entry: DatasourceEntry) -> None:
        self.entry = entry
        self.sampling: Sampling = entry.sampling

    def __enter__(self) -> Adapter:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @abstractmethod
    def connect(self) -> None: ...

    @abstractmethod
    def close(self) -> None: ...

    @abstractmethod
    def tables(self) -> list[RawTable]:
        """Every selected table with columns, keys, comments and (cheap) row counts."""

    @abstractmethod
    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run one bounded statement; raise :class:`QueryTimeout` when it exceeds the timeout."""

    def error(self, what: str, exc: BaseException | str) -> DatasourceError:
        return DatasourceError(f"datasource {self.entry.name!r} ({self.entry.kind}): {what}: {exc}")

    def profile(self, table: RawTable, column: str) -> Profile | None:
        """Distinct count, null fraction and the most frequent values, reading <= scan_rows rows.

        Values are fetched only when the scanned cardinality is at most ``max_distinct``, so a
        free-text or ID column costs one aggregate and returns no values.
        """
        s = self.sampling
        col = quote_ident(column)
        scan = f"(SELECT {col} AS v FROM {table.sql_name} LIMIT {int(s.scan_rows)}) AS s"
        try:
            rows = self.query(f"SELECT COUNT(*), COUNT(v), COUNT(DISTINCT v) FROM {scan}")
            total, non_null, distinct = (int(x or 0) for x in rows[0])
            values: list[str] = []
            if 0 < distinct <= s.max_distinct and s.max_values > 0:
                rows = self.query(
                    f"SELECT v, COUNT(*) AS n FROM {scan} WHERE v IS NOT NULL "
                    f"GROUP BY v ORDER BY n DESC, v LIMIT {int(s.max_values)}"
                )
                values = [str(r[0]) for r in rows if len(str(r[0])) <= s.max_value_chars]
        except QueryTimeout:
            log.warning("%s: profiling %s.%s timed out; no samples", self.entry.name, table.name, column)
            return None
        null_fraction = round((total - non_null) / total, 4) if total else 0.0
        return Profile(distinct, null_fraction, total, values)
