"""Introspect a live datasource into a versioned :class:`~schemarag.runtime.core.schema.Database`.

The fingerprint covers structure only (tables, columns, types, nullability, keys, comments);
row counts and sampled values drift with the data and must not force a rebuild. The version
``YYYYMMDDhhmmss_<fp8>`` is what chunk IDs embed.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate(
    ...     {"name": "x", "tables": [{"name": "t", "columns": [{"name": "a"}]}]})
    >>> fp = fingerprint(db)
    >>> fp == fingerprint(db.model_copy(update={"schema_version": "other"}))
    True
    >>> import datetime as dt
    >>> when = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
    >>> make_version(fp, when) == "20260102030405_" + fp[:8]
    True
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from schemarag.assets.lib.datasources.adapters.base import Adapter, RawTable
from schemarag.assets.lib.datasources.config import DatasourceEntry
from schemarag.assets.lib.datasources.pii import pii_reason
from schemarag.assets.lib.datasources.value_joins import infer_value_joins
from schemarag.assets.lib.join_inference import infer_foreign_keys
from schemarag.runtime.core.errors import DatasourceError
from schemarag.runtime.core.schema import Column, Database, ForeignKey, Table

log = logging.getLogger(__name__)


@dataclass
class SnapshotResult:
    database: Database
    fingerprint: str
    seconds: float
    skipped_tables: list[str] = field(default_factory=list)
    pii_columns: list[str] = field(default_factory=list)  # "table.column (category)"
    dropped_foreign_keys: list[str] = field(default_factory=list)
    inferred_joins: list[str] = field(default_factory=list)  # "t.col -> p.key (values|names)"


def adapter_for(entry: DatasourceEntry) -> Adapter:
    if entry.kind == "sqlite":
        from schemarag.assets.lib.datasources.adapters.sqlite import SQLiteAdapter

        return SQLiteAdapter(entry)
    if entry.kind == "duckdb":
        from schemarag.assets.lib.datasources.adapters.duckdb import DuckDBAdapter

        return DuckDBAdapter(entry)
    if entry.kind == "sqlalchemy":
        from schemarag.assets.lib.datasources.adapters.sqlalchemy import SQLAlchemyAdapter

        return SQLAlchemyAdapter(entry)
    from schemarag.assets.lib.datasources.adapters.postgres import PostgresAdapter

    return PostgresAdapter(entry)


def structure(db: Database) -> dict[str, Any]:
    """The part of a snapshot the fingerprint covers, in canonical order."""
    tables = []
    for t in sorted(db.tables, key=lambda t: t.name.lower()):
        cols = [
            {
                "name": c.name,
                "type": c.type,
                "nullable": c.nullable,
                "primary_key": c.primary_key,
                "description": c.description,
                "foreign_key": _fk_structure(c.foreign_key),
            }
            for c in t.columns
        ]
        tables.append({"name": t.name, "description": t.description, "columns": cols})
    return {"dialect": db.dialect, "tables": tables}


def _fk_structure(fk: ForeignKey | None) -> list[str] | None:
    """Declared: ``[table, column]`` as always; inferred: plus its evidence, so switching
    ``infer_joins`` (or a join the data no longer supports) is a new version, while snapshots
    without inference keep their fingerprint."""
    if fk is None:
        return None
    return [fk.table, fk.column, "inferred", fk.evidence or "names"] if fk.inferred else [fk.table, fk.column]


def fingerprint(db: Database) -> str:
    """SHA-256 hex of :func:`structure`; equal for structurally equal snapshots."""
    blob = json.dumps(structure(db), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def make_version(fp: str, when: dt.datetime | None = None) -> str:
    when = (when or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    return f"{when:%Y%m%d%H%M%S}_{fp[:8]}"


def take_snapshot(entry: DatasourceEntry, now: dt.datetime | None = None) -> SnapshotResult:
    """Connect, introspect, profile text columns, and build the versioned Database."""
    start = time.perf_counter()
    result_info: dict[str, list[str]] = {"skipped": [], "pii": [], "fks": [], "inferred": []}
    with adapter_for(entry) as adapter:
        raw = _readable(entry, adapter.tables(), result_info["skipped"])
        tables = _build_tables(entry, adapter, raw, result_info)
        tables = _infer_joins(entry, adapter, raw, tables, result_info["inferred"])
        dialect = adapter.dialect or entry.kind  # sqlalchemy: known only once connected
    if not tables:
        raise DatasourceError(
            f"datasource {entry.name!r}: no tables found in schema(s) "
            f"{', '.join(entry.effective_schemas())}; "
            "check 'schemas', 'include_tables' and 'exclude_tables'"
        )
    try:
        db = Database(
            name=entry.name,
            description=entry.description,
            dialect=dialect,
            tables=tables,
            tenant=entry.tenant,
        )
    except ValidationError as exc:
        raise DatasourceError(f"datasource {entry.name!r}: snapshot is not a valid schema: {exc}") from None
    fp = fingerprint(db)
    db.schema_version = make_version(fp, now)
    return SnapshotResult(
        db,
        fp,
        time.perf_counter() - start,
        result_info["skipped"],
        result_info["pii"],
        result_info["fks"],
        result_info["inferred"],
    )


def snapshot_datasource(entry: DatasourceEntry) -> Database:
    """The snapshot as a Database with ``schema_version`` and ``tenant`` set (for the Dagster sensor)."""
    return take_snapshot(entry).database


def _infer_joins(
    entry: DatasourceEntry, adapter: Adapter, raw: list[RawTable], tables: list[Table], inferred: list[str]
) -> list[Table]:
    """Apply ``infer_joins``: values first (checked on the data), then names for columns still
    without a join, except pairs the data refutes (over half of the child's values missing)."""
    if entry.infer_joins == "off" or not tables:
        return tables
    refuted: set[tuple[str, str, str, str]] = set()
    if entry.infer_joins in ("values", "both"):
        tables, report = infer_value_joins(entry, adapter, raw, tables)
        refuted = report.refuted
        inferred.extend(f"{j} (values)" for j in report.inferred)
    if entry.infer_joins in ("names", "both"):
        named = infer_foreign_keys(Database(name=entry.name, tables=tables)).tables
        out = []
        for before, after in zip(tables, named, strict=True):
            columns = []
            for old, new in zip(before.columns, after.columns, strict=True):
                fk = new.foreign_key
                if old.foreign_key is None and fk is not None:
                    if (before.name, old.name, fk.table, fk.column) in refuted:
                        new = old  # the data says no: most of the child's values are not in the parent
                    else:
                        new = new.model_copy(
                            update={"foreign_key": fk.model_copy(update={"evidence": "names"})}
                        )
                        inferred.append(f"{before.name}.{old.name} -> {fk.table}.{fk.column} (names)")
                columns.append(new)
            out.append(after.model_copy(update={"columns": columns}))
        tables = out
    return tables


def _readable(entry: DatasourceEntry, raw: list[RawTable], skipped: list[str]) -> list[RawTable]:
    denied = [t.name for t in raw if not t.readable]
    if denied and entry.on_permission_denied == "error":
        raise DatasourceError(
            f"{entry.source}: permission denied: the connecting role cannot SELECT from table(s) "
            f"{', '.join(denied)}; GRANT SELECT, list them in exclude_tables, or set "
            "on_permission_denied: skip"
        )
    for name in denied:
        log.warning("datasource %r: skipping table %s (permission denied)", entry.name, name)
    skipped.extend(denied)
    out = []
    for t in raw:
        if t.readable and not t.columns:
            log.warning("datasource %r: skipping table %s (no columns)", entry.name, t.name)
            skipped.append(t.name)
        elif t.readable:
            out.append(t)
    return out


def _build_tables(
    entry: DatasourceEntry, adapter: Adapter, raw: list[RawTable], info: dict[str, list[str]]
) -> list[Table]:
    by_name = {t.name: t for t in raw}
    tables = []
    for t in raw:
        fk_map = _column_fks(entry, t, by_name, info["fks"])
        columns = []
        for rc in t.columns:
            col = Column(
                name=rc.name,
                type=rc.type or "ANY",
                nullable=rc.nullable and rc.name not in t.primary_key,
                primary_key=rc.name in t.primary_key,
                description=rc.comment,
                foreign_key=fk_map.get(rc.name),
            )
            reason = pii_reason(rc.name)
            if reason:
                col.pii = True
                info["pii"].append(f"{t.name}.{rc.name} ({reason})")
            allowed = not col.pii or entry.pii_allowed(t.name, rc.name)
            if (
                rc.is_text
                and allowed
                and entry.sampling.enabled
                and not entry.column_excluded(t.name, rc.name)
            ):
                _add_profile(adapter, t, col)
            columns.append(col)
        tables.append(Table(name=t.name, description=t.comment, columns=columns, row_count=t.row_count))
    return tables


def _column_fks(
    entry: DatasourceEntry, t: RawTable, by_name: dict[str, RawTable], dropped: list[str]
) -> dict[str, ForeignKey]:
    """Column -> ForeignKey; composite keys map pairwise, targets outside the snapshot are dropped."""
    out: dict[str, ForeignKey] = {}
    for fk in t.foreign_keys:
        target = by_name.get(fk.ref_table)
        if target is None:
            dropped.append(f"{t.name}({', '.join(fk.columns)}) -> {fk.ref_table}")
            log.warning(
                "datasource %r: FK %s -> %s dropped: target not in snapshot", entry.name, t.name, fk.ref_table
            )
            continue
        ref_cols = fk.ref_columns if all(fk.ref_columns) else target.primary_key
        for src, ref in zip(fk.columns, ref_cols, strict=False):
            if src not in out and any(c.name == ref for c in target.columns):
                out[src] = ForeignKey(table=target.name, column=ref)
    return out


def _add_profile(adapter: Adapter, t: RawTable, col: Column) -> None:
    prof = adapter.profile(t, col.name)
    if prof is None:
        return
    stats: dict[str, Any] = {"distinct_count": prof.distinct_count, "null_fraction": prof.null_fraction}
    partial = prof.rows_scanned >= adapter.sampling.scan_rows
    if partial:
        stats["profiled_rows"] = prof.rows_scanned
    if prof.values and not partial and prof.distinct_count <= len(prof.values):
        stats["sample_complete"] = True
    col.sample_values = prof.values
    col.stats = stats
