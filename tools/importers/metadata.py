"""BIRD ``dev_metadata.json``: human descriptions, samples and statistics per column.

Only human-written fields are read. The file's ``ai_description`` fields are machine-written
summaries; using them would leak another model's work into headline numbers, so this module
never touches them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ImportFormatError

MAX_SAMPLES = 8
MAX_VALUE_CHARS = 80
_STAT_FIELDS = ("null_fraction", "unique_count", "unique_fraction", "min_value", "max_value")


@dataclass
class ColumnMeta:
    description: str = ""
    value_description: str = ""
    sample_values: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


@dataclass
class TableMeta:
    row_count: int | None = None
    columns: dict[str, ColumnMeta] = field(default_factory=dict)  # by lower-cased stripped name


def bounded_value(value: Any) -> str:
    """A sample value as a short single string (long texts would bloat every prompt)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _column_meta(raw: dict[str, Any]) -> ColumnMeta:
    samples = raw.get("sample_values") or []
    stats: dict[str, Any] = {}
    for key in _STAT_FIELDS:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, float):
            value = round(value, 6)
        elif not isinstance(value, int | bool):
            value = bounded_value(value)
        stats[key] = value
    return ColumnMeta(
        description=_text(raw.get("description")),
        value_description=_text(raw.get("value_description")),
        sample_values=[bounded_value(v) for v in samples[:MAX_SAMPLES] if v is not None],
        stats=stats,
    )


def load_metadata(paths: list[Path]) -> dict[str, dict[str, TableMeta]]:
    """``{db_id: {lower table name: TableMeta}}`` from one or more metadata files."""
    out: dict[str, dict[str, TableMeta]] = {}
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ImportFormatError(f"{path}: metadata file not found; check --metadata") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ImportFormatError(f"{path}: not a JSON metadata file ({exc}); check --metadata") from None
        if not isinstance(data, list):
            raise ImportFormatError(
                f"{path}: expected a JSON list of databases with 'name' and 'tables' (BIRD dev_metadata.json)"
            )
        for db in data:
            if not isinstance(db, dict) or not isinstance(db.get("name"), str):
                continue
            tables = out.setdefault(db["name"], {})
            for table in db.get("tables") or []:
                if not isinstance(table, dict) or not isinstance(table.get("name"), str):
                    continue
                row_count = table.get("row_count")
                meta = TableMeta(row_count=row_count if isinstance(row_count, int) else None)
                for col in table.get("columns") or []:
                    if isinstance(col, dict) and isinstance(col.get("name"), str):
                        meta.columns[col["name"].strip().lower()] = _column_meta(col)
                tables[table["name"].strip().lower()] = meta
    return out
