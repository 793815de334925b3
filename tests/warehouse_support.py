"""A warehouse catalog export as users write it (``<engine>/<db>/columns.csv.gz``), for the
warehouse evaluation's tests."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

HEADER = ["table_catalog", "table_schema", "table_name", "column_name", "field_path",
          "ordinal_position", "data_type", "is_nullable", "column_comment"]  # fmt: skip


def write_export(
    root: Path, engine: str, db: str, tables: dict[str, list[tuple[str, str]]], schema: str
) -> None:
    """``root/engine/db/columns.csv.gz`` with ``tables`` ({table: [(column, comment), ...]}) in
    ``schema`` of the catalog ``proj``, every column a nullable STRING."""
    folder = root / engine / db
    folder.mkdir(parents=True)
    with gzip.open(folder / "columns.csv.gz", "wt", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        for table, cols in tables.items():
            for i, (col, comment) in enumerate(cols, start=1):
                w.writerow(["proj", schema, table, col, col, i, "STRING", "YES", comment])
