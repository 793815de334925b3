"""PostgreSQL adapter (psycopg 3) over ``pg_catalog``.

``pg_catalog`` rather than ``information_schema``: the latter hides columns of tables the role
cannot read, while we want to report such tables precisely (``on_permission_denied``). The
session is read-only with a ``statement_timeout``; comments come from ``obj_description`` and
``col_description``; composite foreign keys keep their column order (``conkey``/``confkey``).
DSNs are redacted (password -> ``***``) in every message.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from schemarag.assets.lib.datasources.adapters.base import (
    Adapter,
    QueryTimeout,
    RawColumn,
    RawForeignKey,
    RawTable,
    quote_ident,
)

_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)([^@\s]*)(@)")
_KV_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)

_TABLES_SQL = """
SELECT c.oid, n.nspname, c.relname, COALESCE(obj_description(c.oid, 'pg_class'), ''),
       c.reltuples::float8, has_table_privilege(c.oid, 'SELECT')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname = ANY(%s)
ORDER BY n.nspname, c.relname
"""
_COLUMNS_SQL = """
SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       COALESCE(col_description(a.attrelid, a.attnum), ''), t.typcategory = 'S' OR t.typtype = 'e'
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = ANY(%s) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""
_CONSTRAINTS_SQL = """
SELECT con.conrelid, con.contype, con.conname,
       ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
       rn.nspname, rc.relname,
       ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i)
FROM pg_constraint con
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
WHERE con.conrelid = ANY(%s) AND con.contype IN ('p', 'f')
ORDER BY con.conrelid, con.conname
"""


def redact_dsn(dsn: str) -> str:
    """Hide the password in URL (``user:pw@``) and keyword (``password=pw``) DSNs.

    >>> redact_dsn("postgresql://app:s3cret@db:5432/x"), redact_dsn("host=db password='a b' dbname=x")
    ('postgresql://app:***@db:5432/x', 'host=db password=*** dbname=x')
    """
    return _KV_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1***\3", dsn))


def _password(dsn: str) -> str | None:
    try:
        from psycopg.conninfo import conninfo_to_dict

        return conninfo_to_dict(dsn).get("password") or None  # type: ignore[return-value]
    except Exception:
        return None


class PostgresAdapter(Adapter):
    dialect = "postgres"

    _dsn = _shown = ""
    _secret: str | None = None

    def _scrub(self, text: str) -> str:
        text = text.replace(self._dsn, self._shown) if self._dsn else text
        return text.replace(self._secret, "***") if self._secret else text

    def error(self, what: str, exc: BaseException | str) -> Any:
        return super().error(what, " ".join(self._scrub(str(exc)).split()))

    def connect(self) -> None:
        import psycopg

        self._pg = psycopg
        self._dsn = self.entry.resolve_connection()
        self._shown = redact_dsn(self._dsn)
        self._secret = _password(self._dsn)
        timeout = max(2, self.sampling.timeout_ms // 1000)
        try:
            self.conn = psycopg.connect(
                self._dsn, autocommit=True, connect_timeout=timeout, application_name="schemarag-snapshot"
            )
        except psycopg.ProgrammingError as exc:
            raise self.error(f"invalid connection string {self._shown!r}", exc) from None
        except psycopg.Error as exc:
            raise self.error(f"cannot connect to {self._shown!r}", exc) from None
        self.query("SET default_transaction_read_only = on")
        self.query(f"SET statement_timeout = {int(self.sampling.timeout_ms)}")
        self.query(f"SET lock_timeout = {int(self.sampling.timeout_ms)}")

    def close(self) -> None:
        conn = getattr(self, "conn", None)
        if conn is not None:
            conn.close()

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        errors = self._pg.errors
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql, params or None)
                return cur.fetchall() if cur.description else []
        except errors.QueryCanceled:
            raise QueryTimeout(f"timed out after {self.sampling.timeout_ms} ms") from None
        except errors.InsufficientPrivilege as exc:
            raise self.error("permission denied", exc) from None
        except self._pg.OperationalError as exc:
            raise self.error("connection lost during introspection", exc) from None
        except self._pg.Error as exc:
            raise self.error("query failed", exc) from None

    def tables(self) -> list[RawTable]:
        schemas = self.entry.effective_schemas()
        qualify = len(schemas) > 1

        def name_of(schema: str, rel: str) -> str:
            return f"{schema}.{rel}" if qualify else rel

        tables: dict[int, RawTable] = {}
        for oid, schema, rel, comment, reltuples, readable in self.query(_TABLES_SQL, (schemas,)):
            name = name_of(schema, rel)
            if not self.entry.table_selected(name):
                continue
            sql_name = f"{quote_ident(schema)}.{quote_ident(rel)}"
            t = RawTable(name, sql_name, [], comment=comment, readable=bool(readable))
            t.row_count = int(reltuples) if reltuples >= 0 else None
            tables[oid] = t
        oids = list(tables)
        for oid, col, ctype, notnull, comment, is_text in self.query(_COLUMNS_SQL, (oids,)):
            tables[oid].columns.append(RawColumn(col, ctype, not notnull, comment, bool(is_text)))
        for oid, kind, cname, cols, ref_schema, ref_rel, ref_cols in self.query(_CONSTRAINTS_SQL, (oids,)):
            if kind == "p":
                tables[oid].primary_key = list(cols)
            else:
                ref = name_of(ref_schema, ref_rel)
                tables[oid].foreign_keys.append(RawForeignKey(list(cols), ref, list(ref_cols), cname))
        for t in tables.values():
            if t.readable:
                self._count_rows(t)
        return list(tables.values())

    def _count_rows(self, table: RawTable) -> None:
        """Exact ``COUNT(*)`` for small or never-analysed tables; the planner estimate otherwise."""
        if table.row_count is not None and table.row_count >= self.sampling.count_rows_below:
            return
        with contextlib.suppress(QueryTimeout):  # keep the estimate (or None)
            table.row_count = int(self.query(f"SELECT COUNT(*) FROM {table.sql_name}")[0][0])
