"""``schemarag import catalog``: a warehouse's catalog export -> schema JSON + docs.

The export is what the warehouse's own catalog query writes (``docs/importing.md`` has the
query per warehouse): ``INFORMATION_SCHEMA.COLUMNS`` (or BigQuery's ``COLUMN_FIELD_PATHS``),
optionally ``TABLES`` and a key-column export, each a file, a folder of unload parts or a glob
(:mod:`.export_parts`), CSV or Parquet, plain or compressed (:mod:`.export_reader`), with the
headers each warehouse uses (:mod:`.catalog_headers`).

Relations are named as the warehouse executes them, keeping what the export says: bare
``table`` for a single-schema export, ``schema.table`` across schemas, ``catalog.schema.table``
when the export spans several catalogs (Databricks' ``system.information_schema``, BigQuery
projects, Snowflake databases). Views are kept and marked (``kind``), row counts kept where
exported, sharded families collapse into one table (:mod:`.shards`).

A database is never dropped for one odd value: a column type past
:data:`~schemarag.runtime.core.schema.MAX_TYPE_CHARS` is shortened to its outer constructor
(``ARRAY<STRUCT<...>>``), a type that could break out of its DDL line becomes ``TEXT``, a
duplicate column or a table whose name differs from another only by case is skipped; each with
one warning naming the table and column.

Example (``docs/importing.md`` has the query per warehouse):
    schemarag import catalog --columns 'exports/columns/*.csv.gz' --tables tables.csv \\
        --database warehouse --dialect snowflake --out data/schemas
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.schema import (
    LABEL_MAX_CHARS,
    SUPPORTED_DIALECTS,
    Column,
    Database,
    ForeignKey,
    ShardRange,
    Table,
    control_character,
)
from schemarag.runtime.search.named_tables import label_for
from schemarag.tools.importers.catalog_headers import (
    COLUMN_HEADERS,
    KEY_HEADERS,
    PLACEHOLDER_CATALOGS,
    SYSTEM_SCHEMAS,
    TABLE_HEADERS,
    full_type,
    option_text,
    row_count,
    table_kind,
)
from schemarag.tools.importers.column_types import safe_type
from schemarag.tools.importers.export_parts import export_parts
from schemarag.tools.importers.export_reader import Batch, read_batches
from schemarag.tools.importers.limits import DEFAULT_LIMITS, ImportLimits, Warnings
from schemarag.tools.importers.shards import find_families
from schemarag.tools.importers.writer import ImportReport, write_database

log = logging.getLogger(__name__)

Key = tuple[str, str, str]  # (catalog, schema, table) exactly as exported

# The longest table comment read as a name in words: a data dictionary's short text is at most
# 60 characters (SAP's DD02T.DDTEXT, the "short description" every ERP table has: KNA1 "General
# Data in Customer Master"); a longer comment is a description, read by retrieval as one.
LABEL_COMMENT_CHARS = 60
assert LABEL_COMMENT_CHARS <= LABEL_MAX_CHARS
_SENTENCE_BREAK = re.compile(r"[.!?;]\s+\S")


def comment_label(name: str, comment: str) -> str | None:
    """The table comment as the table's label (``Table.label``, matched as a name is) when it
    reads as a name: one short phrase (at most :data:`LABEL_COMMENT_CHARS`, no sentence break)
    that says more than the name (:func:`~schemarag.runtime.search.named_tables.label_for`).
    A warehouse whose tables are codes (``KNA1``) is then found by the words its own catalog
    gives them; a sentence stays a description only, and a comment that repeats the name adds
    nothing, so such an export imports as it did.

    >>> comment_label("KNA1", "General Data in Customer Master")
    'General Data in Customer Master'
    >>> comment_label("orders", "Orders."), comment_label("t1", "One row per order. Refunds excluded.")
    (None, None)
    """
    text = " ".join(comment.split()).rstrip(".")
    if not text or len(text) > LABEL_COMMENT_CHARS or _SENTENCE_BREAK.search(text):
        return None
    return label_for(name, text)


@dataclass
class _Table:
    key: Key
    columns: dict[str, Column] = field(default_factory=dict)
    order: dict[str, float] = field(default_factory=dict)
    comment: str = ""
    label: str | None = None  # a shard family's, from its members' comment (comment_label)
    kind: str = ""
    row_count: int | None = None
    shards: ShardRange | None = None


def _rows(
    paths: list[Path],
    headers: dict[str, tuple[str, ...]],
    required: tuple[str, ...],
    limits: ImportLimits,
    warnings: list[str],
) -> Iterator:
    """``(where, {canonical: value})`` per row of every part; ``where`` is ``file: row N``.

    A value over ``limits.field_bytes`` characters: a description is cut there (one warning), a
    row whose name is that long is skipped (one warning): no real catalog holds either."""
    cap = limits.field_bytes
    for path, start, cols in read_batches(paths, headers, limits):
        _require(path, cols, required, headers)
        names = list(cols)
        for i, values in enumerate(zip(*(cols[n] for n in names), strict=True)):
            where = f"{path}: row {start + i}"
            row = {n: _text(n, v) for n, v in zip(names, values, strict=True)}
            long = [n for n, v in row.items() if len(v) > cap]
            if long and any(n in _VERBATIM for n in long):
                warnings.append(
                    f"{where}: a name is over {cap:,} characters; row skipped (--max-field-bytes)"
                )
                continue
            for n in long:
                warnings.append(f"{where}: {n} is over {cap:,} characters; cut there (--max-field-bytes)")
                row[n] = row[n][:cap]
            yield where, row


# Names are kept exactly as exported: BigQuery holds both ``accident_2015`` and `` accident_2015``
# (a leading space) in one dataset, and stripping would merge two real tables into one.
_VERBATIM = frozenset(
    {
        "table_catalog",
        "table_schema",
        "table_name",
        "column_name",
        "referenced_table_catalog",
        "referenced_table_schema",
        "referenced_table_name",
        "referenced_column_name",
    }
)


def _text(name: str, value: str | None) -> str:
    if value is None or not value.strip():
        return ""
    return value if name in _VERBATIM else value.strip()


def _require(path: Path, cols: Batch, needed: tuple[str, ...], headers: dict[str, tuple[str, ...]]) -> None:
    missing = [n for n in needed if n not in cols]
    if missing:
        raise ImportFormatError(
            f"{path}: missing column(s) {', '.join(missing)} (accepted headers: "
            + "; ".join(f"{n}: {'/'.join(headers[n])}" for n in missing)
            + "); export with a header row (Snowflake: HEADER = TRUE; BigQuery EXPORT DATA: header = true)"
        )


def _key(row: dict[str, str]) -> Key:
    catalog = row.get("table_catalog", "")
    return (
        "" if catalog.lower() in PLACEHOLDER_CATALOGS else catalog,
        row.get("table_schema", ""),
        row["table_name"],
    )


def _skipped(row: dict[str, str]) -> bool:
    """System schemas describe the warehouse; ``DELETED`` rows (Snowflake ACCOUNT_USAGE) are gone."""
    return row.get("table_schema", "").lower() in SYSTEM_SCHEMAS or bool(row.get("deleted"))


def _read_columns(
    paths: list[Path], tables: dict[Key, _Table], warnings: list[str], limits: ImportLimits
) -> int:
    """Columns into ``tables``; returns the number of raw relations seen."""
    seen_refused: set[str] = set()
    for where, row in _rows(paths, COLUMN_HEADERS, ("table_name", "column_name"), limits, warnings):
        if not row["table_name"] or not row["column_name"]:
            warnings.append(f"{where}: empty table or column name; row skipped")
            continue
        if _skipped(row):
            continue
        key = _key(row)
        column = row["column_name"]
        label = f"{'.'.join(filter(None, key))}.{column}"
        refused = _control_name(key, column)
        if refused:
            if refused not in seen_refused:  # one warning per name, not one per column row
                seen_refused.add(refused)
                warnings.append(f"{where}: {refused}")
            continue
        t = tables.setdefault(key, _Table(key))
        if column.lower() in t.columns:
            warnings.append(f"{where}: column {label} listed twice (names differ only by case?); first kept")
            continue
        pos = row.get("ordinal_position", "")
        t.order[column.lower()] = float(pos) if pos.replace(".", "", 1).isdigit() else len(t.order) + 1e6
        t.columns[column.lower()] = Column(
            name=column,
            type=safe_type(full_type(row) or "TEXT", label, warnings),
            nullable=row.get("is_nullable", "").upper() not in ("NO", "N", "FALSE", "0"),
            primary_key=row.get("column_key", "").upper() == "PRI",
            description=row.get("column_comment", ""),
        )
    return len(tables)


def _control_name(key: Key, column: str) -> str:
    """Why a name of this row is refused (a control character; SECURITY.md, "Names"), or ""."""
    for what, name in (("catalog", key[0]), ("schema", key[1]), ("table", key[2])):
        code = control_character(name)
        if code:
            return f"{what} {name!r} contains the control character {code}; the table is skipped"
    code = control_character(column)
    if code:
        table = ".".join(filter(None, key))
        return f"column {column!r} of {table!r} contains the control character {code}; skipped"
    return ""


def _match(tables: dict[Key, _Table], row: dict[str, str]) -> list[_Table]:
    """The tables a TABLES row describes: exact key, or every catalog when the row has none."""
    key = _key(row)
    if key in tables:
        return [tables[key]]
    if key[0]:
        return []
    return [t for k, t in tables.items() if k[1:] == key[1:]]


def _read_tables(
    paths: list[Path], tables: dict[Key, _Table], limits: ImportLimits, warnings: list[str]
) -> None:
    for _where, row in _rows(paths, TABLE_HEADERS, ("table_name",), limits, warnings):
        if _skipped(row):
            continue
        option = row.get("option_name", "").lower()
        for t in _match(tables, row):  # a relation with no column rows cannot be indexed: not ours
            if option:  # BigQuery TABLE_OPTIONS: one row per option
                if option == "description":
                    t.comment = option_text(row.get("option_value", "")) or t.comment
                continue
            t.comment = row.get("table_comment", "") or t.comment
            t.kind = table_kind(row["table_type"]) if row.get("table_type") else t.kind
            t.row_count = row_count(row.get("row_count", "")) if row.get("row_count") else t.row_count


def _read_keys(
    paths: list[Path], tables: dict[Key, _Table], warnings: list[str], limits: ImportLimits
) -> list[tuple[Key, str, Key, str]]:
    out = []
    for where, row in _rows(paths, KEY_HEADERS, ("table_name", "column_name"), limits, warnings):
        column = row["column_name"]
        found = _match(tables, row)
        t = found[0] if len(found) == 1 else None
        if t is None or column.lower() not in t.columns:
            warnings.append(
                f"{where}: {'.'.join(filter(None, _key(row)))}.{column} is not in --columns; skipped"
            )
            continue
        ref_table = row.get("referenced_table_name", "")
        if not ref_table:
            if "PRIMARY" in row.get("constraint_type", "").upper():
                t.columns[column.lower()].primary_key = True
            continue
        ref = (
            row.get("referenced_table_catalog") or t.key[0],
            row.get("referenced_table_schema") or t.key[1],
            ref_table,
        )
        out.append((t.key, column, ref, row.get("referenced_column_name") or column))
    return out


def relation_names(keys: list[Key]) -> dict[Key, str]:
    """The name a warehouse executes for each relation: ``catalog.schema.table`` when the export
    spans several catalogs, ``schema.table`` across schemas, else the bare table name.

    >>> relation_names([("p1", "ds", "a"), ("p2", "ds", "a")])[("p2", "ds", "a")]
    'p2.ds.a'
    >>> relation_names([("db", "sales", "a"), ("db", "web", "b")])[("db", "web", "b")]
    'web.b'
    >>> relation_names([("db", "main", "a")])[("db", "main", "a")]
    'a'
    """
    catalogs = {k[0] for k in keys}
    schemas = {k[:2] for k in keys}
    parts = 3 if len(catalogs) > 1 else 2 if len(schemas) > 1 else 1
    return {k: ".".join(p for p in k[3 - parts :] if p) or k[2] for k in keys}


def _collapse(tables: dict[Key, _Table], names: dict[Key, str], dialect: str) -> dict[Key, Key]:
    """Merge sharded families; returns ``{member key: family key}`` for retargeting keys."""
    signatures = {names[k]: tuple(sorted(t.columns)) for k, t in tables.items()}
    by_name = {names[k]: k for k in tables}
    moved: dict[Key, Key] = {}
    for fam in find_families(signatures):
        keys = [by_name[m] for m in fam.members]
        newest = tables[keys[-1]]
        fkey = (*newest.key[:2], fam.name.rpartition(".")[2])
        family = _Table(fkey, kind=newest.kind)
        family.shards = ShardRange(
            stem=fam.stem,
            pattern=fam.pattern.removeprefix(fam.stem.rpartition(".")[2]),
            first=fam.first,
            last=fam.last,
            count=len(fam.members),
        )
        for key in reversed(keys):  # newest shard's column order first, older-only columns after
            for lname, col in tables[key].columns.items():
                if lname not in family.columns:
                    family.columns[lname] = col
                    family.order[lname] = tables[key].order[lname] + (0 if key == keys[-1] else 1e7)
        comment = next((tables[k].comment for k in reversed(keys) if tables[k].comment), "")
        family.comment = f"{comment} {fam.describe(dialect)}".strip()
        family.label = comment_label(fam.name.rpartition(".")[2], comment)
        counts = [tables[k].row_count for k in keys]
        family.row_count = sum(c for c in counts if c is not None) if None not in counts else None
        for key in keys:
            del tables[key]
            moved[key] = fkey
        tables[fkey] = family
        names[fkey] = fam.name
    return moved


def _one_per_name(tables: dict[Key, _Table], names: dict[Key, str], warnings: list[str]) -> None:
    """Names that differ only by case (``"Orders"`` and ``ORDERS`` in Snowflake) cannot both be
    indexed by a case-insensitive lookup: keep the first in name order, warn about the other."""
    seen: dict[str, str] = {}
    for key in sorted(tables, key=lambda k: names[k]):
        low = names[key].lower()
        if low in seen:
            warnings.append(f"table {names[key]} differs from {seen[low]} only by case; skipped")
            del tables[key]
        else:
            seen[low] = names[key]


def _source_name(spec: str | Path, parts: list[Path]) -> str:
    """How the description names the export: the file, or the folder/glob and its part count."""
    return parts[0].name if len(parts) == 1 else f"{Path(spec).name} ({len(parts)} parts)"


def import_catalog_export(
    columns: str | Path,
    out: Path,
    *,
    database: str,
    tables: str | Path | None = None,
    foreign_keys: str | Path | None = None,
    dialect: str = "postgres",
    collapse_shards: bool = True,
    limits: ImportLimits = DEFAULT_LIMITS,
) -> ImportReport:
    """Import one warehouse catalog export as the datasource ``database``.

    ``columns``, ``tables`` and ``foreign_keys`` each name a file, a folder of parts or a glob
    (:func:`~schemarag.tools.importers.export_parts.export_parts`); every read is bounded by
    ``limits`` (:mod:`.limits`), and repeated warnings collapse into one line with a count."""
    check_name(database, "database")
    if dialect not in SUPPORTED_DIALECTS:
        raise ImportFormatError(
            f"--dialect {dialect!r} is not supported; use one of {', '.join(SUPPORTED_DIALECTS)} "
            "(for Databricks or Redshift exports: postgres)"
        )
    report = ImportReport(warnings=Warnings(limits))
    found: dict[Key, _Table] = {}
    column_parts = export_parts(str(columns), report.warnings, "--columns")
    report.raw_tables = _read_columns(column_parts, found, report.warnings, limits)
    if not found:
        raise ImportFormatError(f"{columns}: no columns outside system schemas; nothing to import")
    if tables is not None:
        _read_tables(export_parts(str(tables), report.warnings, "--tables"), found, limits, report.warnings)
    keys = []
    if foreign_keys is not None:
        keys = _read_keys(
            export_parts(str(foreign_keys), report.warnings, "--foreign-keys"), found, report.warnings, limits
        )
    names = relation_names(list(found))
    moved = _collapse(found, names, dialect) if collapse_shards else {}
    _one_per_name(found, names, report.warnings)
    for src, column, ref, ref_column in keys:
        src, ref = moved.get(src, src), moved.get(ref, ref)
        target = found.get(ref)
        if src not in found or target is None or ref_column.lower() not in target.columns:
            report.warnings.append(
                f"{foreign_keys}: {names.get(src, src[2])}.{column} references "
                f"{'.'.join(filter(None, ref))}.{ref_column}, which is not in --columns; key dropped"
            )
            continue
        found[src].columns[column.lower()].foreign_key = ForeignKey(
            table=names[ref], column=target.columns[ref_column.lower()].name
        )
    db = Database(
        name=database,
        dialect=dialect,
        description=f"Warehouse catalog `{database}` imported from {_source_name(columns, column_parts)}.",
        tables=[
            Table(
                name=names[k],
                description=t.comment,
                label=t.label if t.shards else comment_label(names[k], t.comment),
                columns=[t.columns[c] for c in sorted(t.columns, key=lambda c: t.order[c])],
                row_count=t.row_count,
                kind=t.kind or None,
                shards=t.shards,
            )
            for k, t in sorted(found.items(), key=lambda kv: names[kv[0]].lower())
        ],
    )
    report.files += write_database(db, out, all_columns_in_docs=False)
    report.add(db)
    for warning in report.warnings:
        log.debug("%s", warning)  # the CLI prints them summarized (warning_summary)
    return report
