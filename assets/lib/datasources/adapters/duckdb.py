"""DuckDB adapter, read-only, from the ``duckdb_tables()/duckdb_columns()/duckdb_constraints()``
catalog functions (they carry comments, which ``information_schema`` does not).

DuckDB has no statement timeout, so a timer calls ``connection.interrupt()``.
"""

from __future__ import annotations

import contextlib
import threading
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


class DuckDBAdapter(Adapter):
    dialect = "duckdb"

    def connect(self) -> None:
        import duckdb

        self._duckdb = duckdb
        path = self.entry.connection_path()
        if not path.is_file():
            raise self.error("cannot open database file", f"{path} does not exist; check 'connection'")
        try:
            self.conn = duckdb.connect(str(path), read_only=True)
        except duckdb.Error as exc:
            raise self.error(f"cannot open {path} as DuckDB", exc) from None

    def close(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        timer = threading.Timer(self.sampling.timeout_ms / 1000, self.conn.interrupt)
        timer.start()
        try:
            return self.conn.execute(sql, list(params)).fetchall()
        except self._duckdb.InterruptException:
            raise QueryTimeout(f"timed out after {self.sampling.timeout_ms} ms") from None
        except self._duckdb.Error as exc:
            raise self.error("query failed", exc) from None
        finally:
            timer.cancel()

    def tables(self) -> list[RawTable]:
        schemas = self.entry.effective_schemas()
        qualify = len(schemas) > 1
        rows = self.query(
            "SELECT schema_name, table_name, comment FROM duckdb_tables() "
            "WHERE database_name = current_database() AND NOT internal AND NOT temporary "
            "AND list_contains(?, schema_name) "
            "ORDER BY schema_name, table_name",
            (schemas,),
        )
        out = []
        for schema, table, comment in rows:
            name = f"{schema}.{table}" if qualify else table
            if self.entry.table_selected(name):
                out.append(self._table(schema, table, name, comment or "", qualify))
        return out

    def _table(self, schema: str, table: str, name: str, comment: str, qualify: bool) -> RawTable:
        cols = [
            RawColumn(
                col, dtype, nullable=bool(nullable), comment=ccomment or "", is_text=looks_textual(dtype)
            )
            for col, dtype, nullable, ccomment in self.query(
                "SELECT column_name, data_type, is_nullable, comment FROM duckdb_columns() "
                "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
                "ORDER BY column_index",
                (schema, table),
            )
        ]
        pk: list[str] = []
        fks: list[RawForeignKey] = []
        for ctype, names, ref_table, ref_cols, cname in self.query(
            "SELECT constraint_type, constraint_column_names, referenced_table, referenced_column_names, "
            "constraint_name FROM duckdb_constraints() "
            "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
            "AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') "
            "ORDER BY constraint_index",
            (schema, table),
        ):
            if ctype == "PRIMARY KEY":
                pk = list(names)
            else:
                ref = f"{schema}.{ref_table}" if qualify else ref_table
                fks.append(RawForeignKey(list(names), ref, list(ref_cols), name=cname or ""))
        sql_name = f"{quote_ident(schema)}.{quote_ident(table)}"
        row_count = None
        with contextlib.suppress(QueryTimeout):  # keep the estimate (or None)
            row_count = int(self.query(f"SELECT COUNT(*) FROM {sql_name}")[0][0])
        return RawTable(
            name, sql_name, cols, comment=comment, primary_key=pk, foreign_keys=fks, row_count=row_count
        )
