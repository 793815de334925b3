"""Generic adapter: any database with a SQLAlchemy dialect, read through ``Inspector`` reflection.

``kind: sqlalchemy`` with ``connection: mysql+pymysql://root@127.0.0.1:3306/test`` (or ``env:VAR``).
The dedicated SQLite, DuckDB and PostgreSQL adapters stay the better choice for those (they read
planner row estimates and ``pg_catalog`` privileges); this one reaches MySQL/MariaDB, SQL Server,
Snowflake, BigQuery... with whatever driver is installed. Reflection uses the ``get_multi_*``
calls (one catalog query per schema on dialects that implement them, a loop elsewhere). The session
is made read-only and time-bounded where the dialect has a statement for it; MySQL gets
``ANSI_QUOTES`` (after reflection) so the shared profiling SQL's double-quoted identifiers work unchanged.
Passwords never appear in messages (``render_as_string(hide_password=True)``).
"""

from __future__ import annotations

import contextlib
import logging
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

log = logging.getLogger(__name__)

# SQLAlchemy dialect name -> our schema dialect (sqlglot's name); others fall back to postgres
DIALECTS = {
    "postgresql": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
    "sqlite": "sqlite",
    "duckdb": "duckdb",
    "mssql": "tsql",
    "snowflake": "snowflake",
    "bigquery": "bigquery",
}
_TIMEOUT_WORDS = (
    "max_statement_time",
    "max_execution_time",
    "statement timeout",
    "canceling statement",
    "query execution was interrupted",
    "timeout",
)


def _session_setup(name: str, timeout_ms: int) -> list[str]:
    """Best-effort read-only + timeout statements per dialect (a failing one is skipped)."""
    if name in ("mysql", "mariadb"):
        return [
            "SET SESSION TRANSACTION READ ONLY",
            f"SET SESSION max_statement_time = {timeout_ms / 1000:.3f}",  # MariaDB
            f"SET SESSION max_execution_time = {int(timeout_ms)}",  # MySQL
        ]
    if name == "postgresql":
        return ["SET default_transaction_read_only = on", f"SET statement_timeout = {int(timeout_ms)}"]
    return []


class SQLAlchemyAdapter(Adapter):
    """Reflection through SQLAlchemy; ``dialect`` is set from the URL at connect time."""

    dialect = ""
    _shown = "<url>"

    def connect(self) -> None:
        import sqlalchemy as sa
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

        self._sa = sa
        raw = self.entry.resolve_connection()
        try:
            url = sa.engine.make_url(raw)
        except ArgumentError:
            raise self.error("invalid SQLAlchemy URL", "expected dialect+driver://user@host/db") from None
        self._shown = url.render_as_string(hide_password=True)
        try:
            self.engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
            self.conn = self.engine.connect()
        except NoSuchModuleError as exc:
            raise self.error(f"no SQLAlchemy dialect for {url.drivername!r}", exc) from None
        except ModuleNotFoundError as exc:
            raise self.error(
                f"driver for {url.drivername!r} not installed", f"{exc}; pip install 'schemarag[sources]'"
            ) from None
        except SQLAlchemyError as exc:
            raise self.error(f"cannot connect to {self._shown!r}", self._clean(exc)) from None
        name = self.engine.dialect.name
        self.dialect = DIALECTS.get(name, "postgres")
        for stmt in _session_setup(name, self.sampling.timeout_ms):
            try:
                self.conn.exec_driver_sql(stmt)
            except SQLAlchemyError:
                log.debug("%s: session statement not supported: %s", self.entry.name, stmt)
                self.conn.rollback()

    def close(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()
            self.engine.dispose()

    def _clean(self, exc: BaseException) -> str:
        text = str(getattr(exc, "orig", None) or exc)
        return " ".join(text.split())[:500]

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        from sqlalchemy.exc import SQLAlchemyError

        try:
            result = self.conn.exec_driver_sql(sql, params) if params else self.conn.exec_driver_sql(sql)
            return [tuple(r) for r in result.fetchall()] if result.returns_rows else []
        except SQLAlchemyError as exc:
            self.conn.rollback()
            message = self._clean(exc)
            if any(w in message.lower() for w in _TIMEOUT_WORDS):
                raise QueryTimeout(f"timed out after {self.sampling.timeout_ms} ms") from None
            raise self.error("query failed", message) from None

    def _sql_name(self, schema: str | None, table: str) -> str:
        return f"{quote_ident(schema)}.{quote_ident(table)}" if schema else quote_ident(table)

    def tables(self) -> list[RawTable]:
        from sqlalchemy.exc import SQLAlchemyError

        inspector = self._sa.inspect(self.conn)
        schemas: list[str | None] = list(self.entry.schemas or []) or [None]
        qualify = len(schemas) > 1
        out: list[RawTable] = []
        try:
            for schema in schemas:
                out.extend(self._reflect(inspector, schema, qualify))
        except SQLAlchemyError as exc:
            raise self.error(f"cannot read the catalog of {self._shown!r}", self._clean(exc)) from None
        if self.engine.dialect.name in ("mysql", "mariadb"):
            # after reflection: SQLAlchemy parses SHOW CREATE TABLE expecting backticks
            self.query("SET SESSION sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')")
        for t in out:
            with contextlib.suppress(QueryTimeout):
                t.row_count = int(self.query(f"SELECT COUNT(*) FROM {t.sql_name}")[0][0])
        return out

    def _reflect(self, inspector: Any, schema: str | None, qualify: bool) -> list[RawTable]:
        def name_of(sch: str | None, rel: str) -> str:
            return f"{sch or schema}.{rel}" if qualify and (sch or schema) else rel

        columns = inspector.get_multi_columns(schema=schema)
        pks = inspector.get_multi_pk_constraint(schema=schema)
        fks = inspector.get_multi_foreign_keys(schema=schema)
        try:
            comments = inspector.get_multi_table_comment(schema=schema)
        except NotImplementedError:
            comments = {}
        tables = []
        for key in sorted(columns, key=lambda k: k[1]):
            rel = key[1]
            name = name_of(schema, rel)
            if not self.entry.table_selected(name):
                continue
            cols = []
            for c in columns[key]:
                ctype = self._type_sql(c["type"])
                cols.append(
                    RawColumn(
                        c["name"],
                        ctype,
                        bool(c.get("nullable", True)),
                        str(c.get("comment") or ""),
                        looks_textual(ctype),
                    )
                )
            t = RawTable(
                name,
                self._sql_name(schema, rel),
                cols,
                comment=str((comments.get(key) or {}).get("text") or ""),
            )
            t.primary_key = list((pks.get(key) or {}).get("constrained_columns") or [])
            for fk in fks.get(key) or []:
                if fk.get("referred_table"):
                    ref = name_of(fk.get("referred_schema"), fk["referred_table"])
                    t.foreign_keys.append(
                        RawForeignKey(
                            list(fk["constrained_columns"]),
                            ref,
                            list(fk["referred_columns"]),
                            fk.get("name") or "",
                        )
                    )
            tables.append(t)
        return tables

    def _type_sql(self, type_: Any) -> str:
        try:
            return str(type_.compile(dialect=self.engine.dialect))
        except Exception:  # a reflected type the dialect cannot print (NullType): name it
            return type(type_).__name__.upper()
