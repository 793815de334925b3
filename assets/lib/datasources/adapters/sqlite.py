"""SQLite adapter (stdlib ``sqlite3``), opened read-only so a snapshot can never write.

SQLite has no comments and no permissions; keys come from ``PRAGMA table_info`` and
``PRAGMA foreign_key_list``. Long statements are cut off by a progress handler, SQLite's only
interrupt hook.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from typing import Any

from schemarag.assets.lib.datasources.adapters.base import (
    Adapter,
    QueryTimeout,
    RawColumn,
    RawForeignKey,
    RawTable,
    looks_textual,
    quote_ident,
)


class SQLiteAdapter(Adapter):
    dialect = "sqlite"

    def connect(self) -> None:
        path = self.entry.connection_path()
        if not path.is_file():
            raise self.error("cannot open database file", f"{path} does not exist; check 'connection'")
        uri = path.resolve().as_uri() + "?mode=ro"
        try:
            self.conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self.conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
        except sqlite3.Error as exc:
            raise self.error(f"cannot read {path} as SQLite", exc) from None
        self._deadline = 0.0
        self.conn.set_progress_handler(self._over_deadline, 10_000)

    def _over_deadline(self) -> int:
        return 1 if self._deadline and time.monotonic() > self._deadline else 0

    def close(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        self._deadline = time.monotonic() + self.sampling.timeout_ms / 1000
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise QueryTimeout(f"timed out after {self.sampling.timeout_ms} ms") from None
            raise self.error("query failed", exc) from None
        except sqlite3.Error as exc:
            raise self.error("query failed", exc) from None
        finally:
            self._deadline = 0.0

    def tables(self) -> list[RawTable]:
        names = [
            r[0]
            for r in self.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        out = []
        for name in names:
            if not self.entry.table_selected(name):
                continue
            out.append(self._table(name))
        return out

    def _table(self, name: str) -> RawTable:
        q = quote_ident(name)
        cols, pk = [], []
        for _cid, col, ctype, notnull, _default, pk_pos in self.query(f"PRAGMA table_info({q})"):
            cols.append(
                RawColumn(col, ctype or "", nullable=not notnull and not pk_pos, is_text=looks_textual(ctype))
            )
            if pk_pos:
                pk.append((pk_pos, col))
        fks: dict[int, RawForeignKey] = {}
        for fk_id, _seq, ref_table, src, ref_col, *_ in self.query(f"PRAGMA foreign_key_list({q})"):
            fk = fks.setdefault(fk_id, RawForeignKey([], ref_table, [], name=f"fk{fk_id}"))
            fk.columns.append(src)
            fk.ref_columns.append(ref_col or "")  # empty: the target's primary key, filled later
        row_count = None
        with contextlib.suppress(QueryTimeout):  # keep the estimate (or None)
            row_count = int(self.query(f"SELECT COUNT(*) FROM {q}")[0][0])
        return RawTable(
            name=name,
            sql_name=q,
            columns=cols,
            primary_key=[c for _, c in sorted(pk)],
            foreign_keys=[fks[k] for k in sorted(fks)],
            row_count=row_count,
        )
