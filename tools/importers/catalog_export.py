"""``schemarag import catalog``: INFORMATION_SCHEMA exports (CSV or Parquet) -> schema JSON + docs.

Files are read in record batches with pyarrow (``pyarrow.csv.open_csv`` / ``ParquetFile.iter_batches``),
so memory follows the size of the schema kept, not of the export. Headers are matched
case-insensitively, extra columns are ignored and common aliases accepted (``comment``,
``description``, ``remarks``; ``field_path`` for BigQuery's ``COLUMN_FIELD_PATHS``, which names
nested record fields as dotted paths). Names are schema-qualified (``sales.orders``) when the
export spans more than one schema; sharded families collapse into one table (:mod:`.shards`).

Example (``docs/importing.md`` has the query per warehouse):
    schemarag import catalog --columns columns.csv --tables tables.csv \\
        --foreign-keys fks.csv --database warehouse --out data/schemas
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from schemarag.runtime.errors import ImportFormatError
from schemarag.runtime.names import check_name
from schemarag.runtime.schema import Column, Database, ForeignKey, Table
from schemarag.tools.importers.export_parts import export_parts, file_format
from schemarag.tools.importers.shards import find_families
from schemarag.tools.importers.writer import ImportReport, write_database

log = logging.getLogger(__name__)

BATCH_ROWS = 65_536
_SYSTEM_SCHEMAS = {"information_schema", "pg_catalog", "pg_toast", "sys", "mysql", "performance_schema"}
ALIASES: dict[str, tuple[str, ...]] = {
    "table_schema": ("table_schema", "schema_name", "schema", "dataset", "table_dataset"),
    "table_name": ("table_name", "table"),
    "column_name": ("field_path", "column_name", "column"),  # field_path first: nested BigQuery fields
    "ordinal_position": ("ordinal_position", "position", "column_id"),
    "data_type": ("data_type", "type", "column_type", "type_name"),
    "is_nullable": ("is_nullable", "nullable"),
    "column_comment": ("column_comment", "comment", "description", "remarks", "column_description"),
    "table_comment": ("table_comment", "comment", "description", "remarks", "table_description"),
    "table_type": ("table_type",),
    "row_count": ("row_count", "rows", "table_rows", "num_rows"),
    "referenced_table_schema": ("referenced_table_schema", "foreign_table_schema", "ref_table_schema"),
    "referenced_table_name": ("referenced_table_name", "foreign_table_name", "ref_table_name"),
    "referenced_column_name": ("referenced_column_name", "foreign_column_name", "ref_column_name"),
    "constraint_type": ("constraint_type",),
}


@dataclass
class _Table:
    schema: str
    name: str
    columns: dict[str, Column] = field(default_factory=dict)
    order: dict[str, float] = field(default_factory=dict)
    comment: str = ""
    kind: str = ""
    row_count: int | None = None


_MAGIC_CODECS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))


def _codec(path: Path) -> str | None:
    """The compression of ``path`` from its first bytes (an unload named ``000000000000`` or
    ``columns.csv`` that is really gzip still reads), else from its extension."""
    with path.open("rb") as fh:
        head = fh.read(4)
    for magic, codec in _MAGIC_CODECS:
        if head.startswith(magic):
            return codec
    fmt = file_format(path.name)
    return None if head.startswith(b"PAR1") or fmt is None else fmt[1]


def _open_batches(path: Path, header: list[str] | None) -> tuple[list[str], Iterator[pa.RecordBatch]]:
    """``(column names, record batches)`` of one part. ``header``: the first part's names, used
    when this part has no header row of its own (an unload with ``HEADER = FALSE`` on later parts)."""
    codec = _codec(path)
    fmt = file_format(path.name)
    if (fmt is not None and fmt[0] in (".parquet", ".pq")) or (codec is None and _is_parquet(path)):
        import pyarrow.parquet as pq

        source = pa.BufferReader(pa.input_stream(str(path), compression=codec).read()) if codec else path
        reader = pq.ParquetFile(source)
        return reader.schema_arrow.names, reader.iter_batches(batch_size=BATCH_ROWS)
    import csv
    import io

    import pyarrow.csv as pacsv

    delimiter = "\t" if fmt is not None and fmt[0] == ".tsv" else ","
    with pa.input_stream(str(path), compression=codec) as raw:
        first = next(
            csv.reader(io.TextIOWrapper(raw, encoding="utf-8-sig", newline=""), delimiter=delimiter), []
        )
    if not first:
        raise ImportFormatError(f"{path}: empty file; expected a header row")
    names = first
    if header is not None and len(first) == len(header) and not _known_headers(first):
        names = header  # a headerless part: its first row is data
    read = pacsv.ReadOptions(block_size=1 << 22, column_names=names, skip_rows=0 if names is header else 1)
    stream = pacsv.open_csv(
        pa.input_stream(str(path), compression=codec),
        read_options=read,
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names}, strings_can_be_null=True
        ),
    )
    return names, iter(stream)


def _is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


def _known_headers(names: list[str]) -> bool:
    """True when a row looks like a header: one of its cells is a header we know."""
    known = {a for aliases in ALIASES.values() for a in aliases}
    return any(n.strip().lower() in known for n in names)


def _batches(
    paths: list[Path], wanted: tuple[str, ...]
) -> Iterator[tuple[Path, int, dict[str, list[str | None]]]]:
    """``(part, line of the batch's first row, {canonical header: values})`` per record batch of every part
    (CSV or Parquet, plain or compressed), parts in the order given: an unload split in parts
    reads as one table."""
    header: list[str] | None = None
    for path in paths:
        if not path.is_file():
            raise ImportFormatError(f"{path}: file not found; check the path")
        try:
            names, batches = _open_batches(path, header)
        except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
            raise ImportFormatError(f"{path}: cannot read as CSV or Parquet: {exc}") from None
        header = header or names
        lower = {n.strip().lower(): n for n in names}
        mapping: dict[str, str] = {}
        for canon in wanted:
            hit = next((lower[a] for a in ALIASES[canon] if a in lower), None)
            if hit is not None:
                mapping[canon] = hit
        line = 1 if names is header and path != paths[0] else 2  # the line of the first data row
        try:
            for batch in batches:
                cols = {
                    canon: batch.column(src).cast(pa.string()).to_pylist() for canon, src in mapping.items()
                }
                yield path, line, cols
                line += batch.num_rows
        except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
            raise ImportFormatError(f"{path}: bad row after line {line}: {exc}") from None


def _require(path: Path, cols: dict[str, list], needed: tuple[str, ...]) -> None:
    missing = [n for n in needed if n not in cols]
    if missing:
        raise ImportFormatError(
            f"{path}: missing column(s) {', '.join(missing)} (accepted headers: "
            + "; ".join(f"{n}: {'/'.join(ALIASES[n])}" for n in missing)
            + ")"
        )


def _value(cols: dict[str, list], key: str, i: int) -> str:
    values = cols.get(key)
    value = values[i] if values is not None else None
    return "" if value is None else str(value).strip()


def _read_columns(paths: list[Path], tables: dict[tuple[str, str], _Table], warnings: list[str]) -> None:
    wanted = (
        "table_schema",
        "table_name",
        "column_name",
        "ordinal_position",
        "data_type",
        "is_nullable",
        "column_comment",
    )
    for path, start, cols in _batches(paths, wanted):
        _require(path, cols, ("table_name", "column_name"))
        for i in range(len(cols["table_name"])):
            schema, table, column = (
                _value(cols, k, i) for k in ("table_schema", "table_name", "column_name")
            )
            if not table or not column:
                warnings.append(f"{path}: row {start + i}: empty table or column name; row skipped")
                continue
            if schema.lower() in _SYSTEM_SCHEMAS:
                continue
            t = tables.setdefault((schema, table), _Table(schema, table))
            if column.lower() in t.columns:
                warnings.append(f"{path}: row {start + i}: {table}.{column} listed twice; first kept")
                continue
            pos = _value(cols, "ordinal_position", i)
            t.order[column.lower()] = float(pos) if pos.replace(".", "", 1).isdigit() else len(t.order) + 1e6
            t.columns[column.lower()] = Column(
                name=column,
                type=_value(cols, "data_type", i) or "TEXT",
                nullable=_value(cols, "is_nullable", i).upper() not in ("NO", "N", "FALSE", "0"),
                description=_value(cols, "column_comment", i),
            )


def _read_tables(paths: list[Path], tables: dict[tuple[str, str], _Table], warnings: list[str]) -> None:
    wanted = ("table_schema", "table_name", "table_comment", "table_type", "row_count")
    for path, _start, cols in _batches(paths, wanted):
        _require(path, cols, ("table_name",))
        for i in range(len(cols["table_name"])):
            key = (_value(cols, "table_schema", i), _value(cols, "table_name", i))
            t = tables.get(key)
            if t is None:  # a table with no column rows cannot be indexed; quietly not ours
                continue
            t.comment = _value(cols, "table_comment", i) or t.comment
            t.kind = _value(cols, "table_type", i)
            rows = _value(cols, "row_count", i)
            t.row_count = int(float(rows)) if rows.replace(".", "", 1).isdigit() else None


def _read_keys(
    paths: list[Path], tables: dict[tuple[str, str], _Table], warnings: list[str]
) -> list[tuple[tuple[str, str], str, tuple[str, str], str]]:
    wanted = (
        "table_schema",
        "table_name",
        "column_name",
        "referenced_table_schema",
        "referenced_table_name",
        "referenced_column_name",
        "constraint_type",
    )
    out = []
    for path, start, cols in _batches(paths, wanted):
        _require(path, cols, ("table_name", "column_name"))
        for i in range(len(cols["table_name"])):
            src = (_value(cols, "table_schema", i), _value(cols, "table_name", i))
            column = _value(cols, "column_name", i)
            ref_table = _value(cols, "referenced_table_name", i)
            where = f"{path}: row {start + i}"
            t = tables.get(src)
            if t is None or column.lower() not in t.columns:
                warnings.append(
                    f"{where}: {'.'.join(filter(None, src))}.{column} is not in --columns; skipped"
                )
                continue
            if not ref_table:
                if "PRIMARY" in _value(cols, "constraint_type", i).upper():
                    t.columns[column.lower()].primary_key = True
                continue
            ref = (_value(cols, "referenced_table_schema", i) or src[0], ref_table)
            out.append((src, column, ref, _value(cols, "referenced_column_name", i) or column))
    return out


def _collapse(tables: dict[tuple[str, str], _Table], names: dict[tuple[str, str], str], dialect: str):
    """Merge sharded families; returns ``{member key: family key}`` for retargeting keys."""
    signatures = {names[k]: tuple(sorted(t.columns)) for k, t in tables.items()}
    by_name = {names[k]: k for k in tables}
    moved: dict[tuple[str, str], tuple[str, str]] = {}
    for fam in find_families(signatures):
        keys = [by_name[m] for m in fam.members]
        newest = tables[keys[-1]]
        family = _Table(newest.schema, fam.name.rpartition(".")[2], kind="sharded")
        for key in reversed(keys):  # newest shard's column order first, older-only columns after
            for lname, col in tables[key].columns.items():
                if lname not in family.columns:
                    family.columns[lname] = col
                    family.order[lname] = tables[key].order[lname] + (0 if key == keys[-1] else 1e7)
        comment = next((tables[k].comment for k in reversed(keys) if tables[k].comment), "")
        family.comment = f"{comment} {fam.describe(dialect)}".strip()
        fkey = (newest.schema, family.name)
        for key in keys:
            del tables[key]
            moved[key] = fkey
        tables[fkey] = family
        names[fkey] = fam.name
    return moved


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
) -> ImportReport:
    """Import one warehouse catalog export as the datasource ``database``.

    ``columns``, ``tables`` and ``foreign_keys`` each name a file, a folder of parts or a glob
    (:func:`~schemarag.tools.importers.export_parts.export_parts`)."""
    check_name(database, "database")
    report = ImportReport()
    found: dict[tuple[str, str], _Table] = {}
    column_parts = export_parts(str(columns), report.warnings, "--columns")
    _read_columns(column_parts, found, report.warnings)
    if not found:
        raise ImportFormatError(f"{columns}: no columns outside system schemas; nothing to import")
    if tables is not None:
        _read_tables(export_parts(str(tables), report.warnings, "--tables"), found, report.warnings)
    keys = (
        _read_keys(export_parts(str(foreign_keys), report.warnings, "--foreign-keys"), found, report.warnings)
        if foreign_keys is not None
        else []
    )
    qualify = len({s for s, _ in found}) > 1
    names = {k: f"{k[0]}.{k[1]}" if qualify and k[0] else k[1] for k in found}
    moved = _collapse(found, names, dialect) if collapse_shards else {}
    for src, column, ref, ref_column in keys:
        src, ref = moved.get(src, src), moved.get(ref, ref)
        target = found.get(ref)
        if target is None or ref_column.lower() not in target.columns:
            report.warnings.append(
                f"{foreign_keys}: {names.get(src, src[1])}.{column} references "
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
                description=t.comment + (" (view)" if "VIEW" in t.kind.upper() else ""),
                columns=[t.columns[c] for c in sorted(t.columns, key=lambda c: t.order[c])],
                row_count=t.row_count,
            )
            for k, t in sorted(found.items(), key=lambda kv: names[kv[0]].lower())
        ],
    )
    report.files += write_database(db, out, all_columns_in_docs=False)
    report.add(db)
    for warning in report.warnings:
        log.warning("%s", warning)
    return report
