"""Import Spider/BIRD ``tables.json`` catalogs (plus BIRD descriptions and metadata).

Each catalog entry becomes a :class:`~schemarag.runtime.core.schema.Database` whose columns carry what the
benchmark knows: declared type, keys, the human description and value description, bounded
sample values and statistics. Rendering to markdown is :mod:`schemarag.assets.lib.docs_writer`'s job, so an
imported database looks exactly like a hand-documented one.

With ``union`` every database is pooled into one datasource whose tables are named
``<db>__<table>`` (double underscore, only to keep names unique; names are otherwise kept
verbatim, spaces included) and carry their source in ``Table.database``, which is what the
retriever routes by; foreign keys stay within their source database. That is the BirdUnion
setting: the retriever must find the right database as well as the right tables.

Example:
    >>> entry = {"db_id": "shop", "table_names_original": ["users"],
    ...          "column_names_original": [[-1, "*"], [0, "id"]], "column_types": ["text", "integer"],
    ...          "primary_keys": [1], "foreign_keys": []}
    >>> db = build_database(entry, [])
    >>> db.tables[0].columns[0].primary_key, db.tables[0].columns[0].type
    (True, 'INTEGER')
    >>> union = union_databases([db], "all")
    >>> union.tables[0].name, union.tables[0].database
    ('shop__users', 'shop')
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import LABEL_MAX_CHARS, Column, Database, ForeignKey, Table
from schemarag.runtime.search.named_tables import label_for
from schemarag.tools.importers.catalog import describe_column, describe_table, informative, read_catalogs
from schemarag.tools.importers.descriptions import (
    DescriptionRow,
    find_description_files,
    read_description_csv,
)
from schemarag.tools.importers.metadata import ColumnMeta, TableMeta

log = logging.getLogger(__name__)

UNION_SEPARATOR = "__"

__all__ = ["UNION_SEPARATOR", "build_database", "read_catalogs", "union_databases", "union_table_name"]


def union_table_name(db_id: str, table: str) -> str:
    """``("california_schools", "frpm")`` -> ``"california_schools__frpm"``."""
    return f"{db_id}{UNION_SEPARATOR}{table}"


def _primary_key_indices(entry: dict[str, Any]) -> set[int]:
    out: set[int] = set()
    for pk in entry.get("primary_keys") or []:
        if isinstance(pk, int):
            out.add(pk)
        elif isinstance(pk, list):
            out.update(i for i in pk if isinstance(i, int))
    return out


def _csv_rows(
    db_id: str, table: str, files: dict[str, Path] | None, warnings: list[str]
) -> list[DescriptionRow]:
    if files is None:
        return []
    path = files.get(table.strip().lower())
    if path is None:
        warnings.append(f"{db_id}.{table}: no description file {table}.csv; columns keep their names only")
        return []
    rows, problems = read_description_csv(path)
    warnings.extend(problems)
    return rows


def _match_rows(
    db_id: str, table: str, col_names: list[str], rows: list[DescriptionRow], warnings: list[str]
) -> dict[str, DescriptionRow]:
    """CSV rows by lower-cased column name; rows naming unknown columns are reported."""
    known = {n.strip().lower() for n in col_names}
    out: dict[str, DescriptionRow] = {}
    for row in rows:
        key = row.original_column_name.strip().lower()
        if key not in known and row.column_name.strip().lower() in known:
            key = row.column_name.strip().lower()  # some files swap the two name columns
        if key not in known:
            warnings.append(
                f"{db_id}.{table}: description CSV lists unknown column {row.original_column_name!r}; ignored"
            )
            continue
        out.setdefault(key, row)
    return out


def _entry_lists(entry: dict[str, Any], source: str) -> tuple[list[str], list[Any]]:
    tables = entry.get("table_names_original") or entry.get("table_names")
    columns = entry.get("column_names_original") or entry.get("column_names")
    if not isinstance(tables, list) or not isinstance(columns, list):
        raise ImportFormatError(
            f"{source}: database {entry.get('db_id')!r} needs 'table_names_original' and "
            "'column_names_original' lists (Spider tables.json format)"
        )
    return [str(t) for t in tables], columns


def _columns_per_table(
    db_id: str, table_names: list[str], raw_columns: list[Any], source: str, warnings: list[str]
) -> list[list[tuple[int, str]]]:
    """``[(global column index, name), ...]`` per table; the ``*`` pseudo column is dropped."""
    per_table: list[list[tuple[int, str]]] = [[] for _ in table_names]
    for idx, pair in enumerate(raw_columns):
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], int):
            warnings.append(f"{source}: {db_id}: column entry #{idx} {pair!r} is not [table_index, name]")
            continue
        t_idx, name = pair
        if t_idx < 0:
            continue
        if t_idx >= len(table_names) or not str(name).strip():
            warnings.append(f"{source}: {db_id}: column #{idx} {name!r} names no valid table; skipped")
            continue
        per_table[t_idx].append((idx, str(name)))
    return per_table


def natural_label(name: str, natural: str) -> str | None:
    """The catalog's natural table name as the table's label when it says what the name does
    not (``frpm``: "free and reduced-price meals", a coded ``SRX9``: "circuits"); None when it
    only spells the name out (``user_reviews``: "user reviews"), so a schema whose names say it
    all is imported exactly as before.

    >>> natural_label("frpm", "free and reduced-price meals"), natural_label("user_reviews", "user reviews")
    ('free and reduced-price meals', None)
    """
    natural = " ".join(natural.split())[:LABEL_MAX_CHARS]
    return label_for(name, natural) if informative(name, natural) else None


def _make_column(
    idx: int,
    name: str,
    entry: dict[str, Any],
    row: DescriptionRow | None,
    meta: ColumnMeta | None,
    pk_indices: set[int],
) -> Column:
    """One column, merging the CSV row (preferred) with the metadata (fills gaps)."""
    natural_columns = entry.get("column_names") or []
    types = entry.get("column_types") or []
    natural = ""
    if idx < len(natural_columns) and isinstance(natural_columns[idx], list | tuple):
        natural = str(natural_columns[idx][1])
    if row and row.column_name:
        natural = row.column_name
    col_type = str(types[idx] if idx < len(types) and types[idx] else "text").upper()
    stats = dict(meta.stats) if meta else {}
    if row and row.data_format and row.data_format.lower() != col_type.lower():
        stats["data_format"] = row.data_format
    description = (row.column_description if row else "") or (meta.description if meta else "")
    value_description = (row.value_description if row else "") or (meta.value_description if meta else "")
    return Column(
        name=name,
        type=col_type,
        nullable=idx not in pk_indices,
        primary_key=idx in pk_indices,
        description=describe_column(name, natural, description),
        value_description=value_description,
        sample_values=list(meta.sample_values) if meta else [],
        stats=stats,
    )


def _is_primary_key(columns: dict[int, tuple[str, Column]], fk: ForeignKey) -> bool:
    return any(t == fk.table and c.name == fk.column and c.primary_key for t, c in columns.values())


def _apply_foreign_keys(
    db_id: str,
    entry: dict[str, Any],
    columns: dict[int, tuple[str, Column]],
    source: str,
    warnings: list[str],
) -> None:
    """Set ``Column.foreign_key`` from index pairs; a column keeps its first reference."""
    for pair in entry.get("foreign_keys") or []:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            warnings.append(f"{source}: {db_id}: foreign key {pair!r} is not [column_index, column_index]")
            continue
        src, ref = pair
        if src not in columns or ref not in columns:
            warnings.append(f"{db_id}: foreign key {pair!r} points at a skipped or unknown column; dropped")
            continue
        src_table, column = columns[src]
        target = ForeignKey(table=columns[ref][0], column=columns[ref][1].name)
        kept = column.foreign_key
        replace = kept is not None and kept != target and columns[ref][1].primary_key
        if replace and not _is_primary_key(columns, kept):
            # A reference to a primary key is the real parent; the other is a sibling link.
            column.foreign_key, target = target, kept
            kept = column.foreign_key
        if kept is not None and kept != target:
            warnings.append(
                f"{db_id}.{src_table}.{column.name}: second foreign key to {target.table}.{target.column} "
                f"dropped (one reference per column; kept {kept.table}.{kept.column})"
            )
            continue
        column.foreign_key = target


def build_database(
    entry: dict[str, Any],
    warnings: list[str],
    *,
    descriptions: Path | None = None,
    metadata: dict[str, dict[str, TableMeta]] | None = None,
    source: str = "<tables.json>",
    kind: str = "bird",
) -> Database:
    """One catalog entry as a :class:`Database` (dialect sqlite); problems go to ``warnings``."""
    db_id = str(entry.get("db_id") or "")
    if not db_id:
        raise ImportFormatError(f"{source}: an entry has no 'db_id'; every database needs a name")
    table_names, raw_columns = _entry_lists(entry, source)
    natural_tables = entry.get("table_names") or []
    pk_indices = _primary_key_indices(entry)
    files = find_description_files(descriptions, db_id) if descriptions else None
    if descriptions and files is None:
        log.info("%s: no description folder under %s", db_id, descriptions)
    db_meta = (metadata or {}).get(db_id, {})

    by_index: dict[int, tuple[str, Column]] = {}
    tables: list[Table] = []
    per_table = _columns_per_table(db_id, table_names, raw_columns, source, warnings)
    for t_idx, table_name in enumerate(table_names):
        cols = per_table[t_idx]
        if not cols:
            warnings.append(f"{db_id}.{table_name}: table has no columns; skipped")
            continue
        csv_rows = _csv_rows(db_id, table_name, files, warnings)
        rows = _match_rows(db_id, table_name, [n for _, n in cols], csv_rows, warnings)
        tmeta = db_meta.get(table_name.strip().lower(), TableMeta())
        built: list[Column] = []
        seen: set[str] = set()
        for idx, name in cols:
            key = name.strip().lower()
            if key in seen:
                warnings.append(f"{db_id}.{table_name}: duplicate column {name!r}; kept the first")
                continue
            seen.add(key)
            column = _make_column(idx, name, entry, rows.get(key), tmeta.columns.get(key), pk_indices)
            built.append(column)
            by_index[idx] = (table_name, column)
        natural = str(natural_tables[t_idx]) if t_idx < len(natural_tables) else ""
        tables.append(
            Table(
                name=table_name,
                description=describe_table(db_id, table_name, natural),
                columns=built,
                row_count=tmeta.row_count,
                label=natural_label(table_name, natural),
            )
        )
    _apply_foreign_keys(db_id, entry, by_index, source, warnings)
    if not tables:
        raise ImportFormatError(f"{source}: database {db_id!r} has no table with columns; nothing to import")
    label = "BIRD" if kind == "bird" else "Spider"
    return Database(
        name=db_id,
        description=f"{label} database `{db_id}` ({len(tables)} tables), imported from {Path(source).name}.",
        dialect="sqlite",
        tables=tables,
    )


def union_databases(dbs: list[Database], name: str, kind: str = "bird") -> Database:
    """Pool ``dbs`` into one database named ``name`` with tables ``<db>__<table>``."""
    tables: list[Table] = []
    for db in dbs:
        for table in db.tables:
            columns = []
            for col in table.columns:
                fk = col.foreign_key
                if fk is not None:
                    fk = fk.model_copy(update={"table": union_table_name(db.name, fk.table)})
                columns.append(col.model_copy(update={"foreign_key": fk}))
            tables.append(
                table.model_copy(
                    update={
                        "name": union_table_name(db.name, table.name),
                        "columns": columns,
                        "database": db.name,
                    }
                )
            )
    label = "BIRD" if kind == "bird" else "Spider"
    names = ", ".join(db.name for db in dbs)
    return Database(
        name=name,
        description=(
            f"Union of {len(dbs)} {label} databases ({names}). Each table is named "
            f"`<database>{UNION_SEPARATOR}<table>`; foreign keys stay within a source database."
        ),
        dialect="sqlite",
        tables=tables,
    )


def schema_json(db: Database) -> str:
    """The ``<db>.json`` text: defaults omitted to keep 600-table unions readable."""
    data = db.model_dump(mode="json", exclude_defaults=True)
    data["dialect"] = db.dialect
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


__all__ += ["informative", "schema_json"]
