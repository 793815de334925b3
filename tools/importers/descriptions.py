"""BIRD ``database_description/<table>.csv`` files, read defensively.

The released CSVs are a mix of UTF-8 (with and without BOM), cp1252 and CRLF line endings,
sometimes list columns the database does not have and sometimes are missing. None of that
should stop an import: every oddity becomes a warning and the column simply has less text.

Example:
    >>> decode_bytes(b"caf\\xe9", "x.csv")[0]
    'café'
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

_ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")
_FIELDS = ("original_column_name", "column_name", "column_description", "data_format", "value_description")


@dataclass(frozen=True)
class DescriptionRow:
    """One CSV row, stripped; empty strings where the file had nothing."""

    original_column_name: str
    column_name: str
    column_description: str
    data_format: str
    value_description: str


def decode_bytes(raw: bytes, source: str) -> tuple[str, list[str]]:
    """Decode with utf-8-sig, then cp1252, then latin-1 (which never fails); warn on fallback."""
    for encoding in _ENCODINGS:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        warnings = [] if encoding == "utf-8-sig" else [f"{source}: not UTF-8, decoded as {encoding}"]
        return text, warnings
    raise AssertionError("latin-1 decodes every byte string")  # pragma: no cover


def _clean(value: str | None) -> str:
    if value is None:
        return ""
    text = value.strip()
    # pandas-written files spell missing values as "nan"; they carry no meaning.
    return "" if text.lower() in {"nan", "null", "none"} else text


def read_description_csv(path: Path) -> tuple[list[DescriptionRow], list[str]]:
    """Rows of one description CSV and the warnings met while reading it."""
    text, warnings = decode_bytes(path.read_bytes(), str(path))
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return [], [*warnings, f"{path}: empty file"]
    except csv.Error as exc:
        return [], [*warnings, f"{path}: not a CSV file ({exc})"]
    names = [h.strip().lower().replace(" ", "_") for h in header]
    if "original_column_name" not in names:
        return [], [
            *warnings,
            f"{path}: header has no 'original_column_name' column (found {header}); file skipped",
        ]
    index = {name: names.index(name) for name in _FIELDS if name in names}
    rows: list[DescriptionRow] = []
    try:
        for line_no, record in enumerate(reader, start=2):
            if not any(cell.strip() for cell in record):
                continue
            values = {name: _clean(record[i]) if i < len(record) else "" for name, i in index.items()}
            if not values.get("original_column_name"):
                warnings.append(f"{path}:{line_no}: row without original_column_name skipped")
                continue
            rows.append(DescriptionRow(**{name: values.get(name, "") for name in _FIELDS}))
    except csv.Error as exc:
        warnings.append(f"{path}: stopped reading at a malformed row ({exc})")
    return rows, warnings


def find_description_files(descriptions: Path, db_id: str) -> dict[str, Path] | None:
    """CSV files of one database keyed by lower-cased, stripped table name.

    Accepts ``<dir>/<db>/database_description/*.csv`` (BIRD's layout) or ``<dir>/<db>/*.csv``.
    Returns ``None`` when the database has no folder at all (e.g. BIRD train).
    """
    base = descriptions / db_id
    for folder in (base / "database_description", base):
        if folder.is_dir():
            files = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".csv" and p.is_file())
            return {p.stem.strip().lower(): p for p in files}
    return None
