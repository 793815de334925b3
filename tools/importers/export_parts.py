"""Which files one catalog export is: a file, a folder of parts, or a glob of parts.

Warehouses unload big results in parts (Snowflake ``COPY INTO @stage/columns/`` writes
``data_0_0_0.csv.gz``, ``data_0_1_0.csv.gz``...; BigQuery ``EXPORT DATA`` with
``uri = 'gs://b/columns/*.csv.gz'`` writes ``000000000000.csv.gz``...; Spark/Databricks writes
``part-00000-....csv.gz`` beside ``_SUCCESS``), so ``--columns`` takes any of:

- a file: read as named (the user chose it, symlink or not);
- a folder: every export file under it (``.csv``/``.tsv``/``.parquet``, optionally ``.gz``, ``.bz2``,
  ``.zst``, or no data extension at all as Redshift and BigQuery name parts), in name order;
  marker files (``_SUCCESS``, ``.crc``, names starting with ``_`` or ``.``) are skipped quietly,
  anything else with an unknown extension with one warning;
- a glob (``exports/columns_*.csv.gz``, ``exports/**/*.parquet``): the matches, in name order.

For a folder or a glob the parts must stay inside the folder the user named (the folder, or the
glob's leading folder without wildcards): every part is resolved (symlinks followed, ``..``
folded) through :mod:`.safe_paths`, and one that lands outside is refused with one warning naming
it. A symlinked sub-folder that leads outside is refused the same way, once.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("data_0_1_0.csv.gz", "data_0_0_0.csv.gz", "_SUCCESS"):
    ...     _ = (root / name).write_bytes(b"")
    >>> [p.name for p in export_parts(str(root), [])]
    ['data_0_0_0.csv.gz', 'data_0_1_0.csv.gz']
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.safe_paths import inside

DATA_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
# file suffix -> pyarrow codec name
COMPRESSION: dict[str, str] = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}
_MAGIC = set("*?[")


def file_format(name: str) -> tuple[str, str | None] | None:
    """``(data suffix, codec or None)`` of an export file name, or None when it is not one.

    >>> file_format("data_0_0_0.CSV.GZ"), file_format("part-0.snappy.parquet"), file_format("x.json")
    (('.csv', 'gzip'), ('.parquet', None), None)
    """
    lower = name.lower()
    codec = None
    for suffix, name_of_codec in COMPRESSION.items():
        if lower.endswith(suffix):
            lower, codec = lower[: -len(suffix)], name_of_codec
            break
    data = next((s for s in DATA_SUFFIXES if lower.endswith(s)), None)
    return None if data is None else (data, codec)


def is_export_file(name: str) -> bool:
    """True for ``x.csv``, ``x.csv.gz``, ``x.snappy.parquet``, ``x.tsv.zst``... (any case), and for
    the names unloads give parts without a data extension: Redshift ``UNLOAD`` writes
    ``columns_0000_part_00`` (``.gz`` with GZIP), BigQuery ``EXPORT DATA`` to a bare wildcard
    ``000000000000`` (read as CSV; compression is sniffed from the first bytes).

    >>> [is_export_file(n) for n in ("a.CSV.GZ", "columns_0000_part_00.gz", "000000000000", "notes.md")]
    [True, True, True, False]
    """
    if file_format(name) is not None:
        return True
    stem = name.lower()
    for suffix in COMPRESSION:
        stem = stem.removesuffix(suffix)
    return "." not in stem


def _is_marker(name: str) -> bool:
    """Files a writer leaves beside its parts: ``_SUCCESS``, ``_committed_1``, ``.part.crc``."""
    return name.startswith(("_", ".")) or name.lower().endswith(".crc")


def _glob_root(spec: str) -> tuple[Path, str]:
    """``exports/2024/*/cols_*.csv`` -> (``exports/2024``, ``*/cols_*.csv``)."""
    parts = Path(spec).parts
    literal: list[str] = []
    for part in parts:
        if _MAGIC & set(part):
            break
        literal.append(part)
    root = Path(*literal) if literal else Path(".")
    return root, str(Path(*parts[len(literal) :]))


def _walk(root: Path, warnings: list[str], what: str) -> list[Path]:
    """Export files under ``root``: symlinked folders are not descended (a folder inside the root
    is reached through its real path; one that leads outside is refused with one warning)."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        for d in list(dirs):
            sub = Path(folder) / d
            if sub.is_symlink():
                dirs.remove(d)
                inside(root, sub, warnings, f"{what} folder")  # warns only when it leads outside
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if _is_marker(name):
                continue
            if not is_export_file(name):
                warnings.append(
                    f"{path}: skipped: not an export file (expected .csv, .tsv, .parquet, "
                    "optionally .gz/.bz2/.zst)"
                )
                continue
            found.append(path)
    return found


def export_parts(spec: str, warnings: list[str], what: str = "export") -> list[Path]:
    """The files ``spec`` names (a file, a folder or a glob), each inside the folder named.

    Raises :class:`ImportFormatError` when nothing readable is left, naming ``spec`` and the fix.
    """
    path = Path(spec)
    if not (_MAGIC & set(spec)):
        if path.is_file():
            return [path]
        if not path.is_dir():
            raise ImportFormatError(f"{spec}: {what} not found; give a file, a folder of parts or a glob")
        root, candidates = path, _walk(path, warnings, what)
    else:
        root, pattern = _glob_root(spec)
        if not root.is_dir():
            raise ImportFormatError(f"{spec}: folder {root} not found; check the {what} glob")
        candidates = sorted(
            Path(p) for p in glob.glob(str(root / pattern), recursive=True) if not _is_marker(Path(p).name)
        )
        candidates = [p for p in candidates if p.is_file() or p.is_symlink()]
    parts: list[Path] = []
    seen: set[Path] = set()
    for candidate in candidates:
        real = inside(root, candidate, warnings, f"{what} part")
        if real is None or real in seen or not real.is_file():
            continue
        seen.add(real)
        parts.append(candidate)
    if not parts:
        raise ImportFormatError(
            f"{spec}: no {what} files found inside {root} (expected .csv, .tsv or .parquet, "
            "optionally .gz/.bz2/.zst); check the path"
        )
    return parts
