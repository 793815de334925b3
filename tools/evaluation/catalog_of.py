"""An import folder written back out as the catalog export a warehouse would give of it.

``import catalog`` is how a warehouse's schema usually arrives: ``INFORMATION_SCHEMA.COLUMNS``
and ``TABLES`` with their comments, no sample values, no value descriptions, no keys when the
warehouse declares none. To score what the ranking gets from such an export (a table comment
read as the table's label, say) on a set whose questions we have, this writes each database of
an import folder (``import bird --strip-foreign-keys``, the coded set of
:mod:`.coded_names`) as a Snowflake-style export: a column's comment is its description, a
table's comment its label (an ERP dictionary's short text) or, without one, nothing.

    python -m schemarag.tools.evaluation.catalog_of --data build/coded/dev_nofk --out DIR
    schemarag import catalog --columns DIR/<db>/columns.csv --tables DIR/<db>/tables.csv \\
        --database <db> --dialect sqlite --out DATA

writes ``DIR/<db>/columns.csv`` and ``DIR/<db>/tables.csv`` for every ``<db>.json`` of
``--data``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

from schemarag.runtime.core.paths import list_databases
from schemarag.runtime.core.schema import Database, load_schema

COLUMNS_HEADER = [
    "TABLE_CATALOG",
    "TABLE_SCHEMA",
    "TABLE_NAME",
    "COLUMN_NAME",
    "ORDINAL_POSITION",
    "DATA_TYPE",
    "IS_NULLABLE",
    "COMMENT",
]
TABLES_HEADER = ["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "COMMENT"]


def write_export(db: Database, target: Path) -> tuple[Path, Path]:
    """``db`` as ``target/columns.csv`` and ``target/tables.csv``, one schema (``PUBLIC``) in a
    catalog named as the database, so ``import catalog`` names the tables as ``db`` does."""
    target.mkdir(parents=True, exist_ok=True)
    catalog = db.name.upper()
    columns, tables = target / "columns.csv", target / "tables.csv"
    with open(columns, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(COLUMNS_HEADER)
        for t in db.tables:
            for i, c in enumerate(t.columns, 1):
                nullable = "YES" if c.nullable else "NO"
                out.writerow([catalog, "PUBLIC", t.name, c.name, i, c.type, nullable, c.description])
    with open(tables, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(TABLES_HEADER)
        for t in db.tables:
            out.writerow([catalog, "PUBLIC", t.name, "BASE TABLE", t.label or ""])
    return columns, tables


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="an import folder (<db>.json files)")
    parser.add_argument("--out", type=Path, required=True, help="where <db>/columns.csv, tables.csv go")
    args = parser.parse_args(argv)
    names = list_databases(args.data)
    if not names:
        print(f"{args.data}: no <db>.json schema files; pass an import folder as --data", file=sys.stderr)
        return 2
    for name in names:
        db = load_schema(args.data / f"{name}.json")
        write_export(db, args.out / db.name)
        print(f"{db.name}: {len(db.tables)} tables -> {args.out / db.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
