"""Read the parts of one catalog export as record batches, whatever the warehouse wrote.

CSV/TSV or Parquet, plain or compressed (gzip, bzip2, zstd: detected from the first bytes, so an
unload named ``000000000000`` or a ``columns.csv`` that is really gzip still reads), one file or
many parts of one unload read as one table. Files are streamed with pyarrow
(``pyarrow.csv.open_csv`` / ``ParquetFile.iter_batches``), so memory follows the batch size, not
the size of the export; every value comes out as a string (or None), and headers are matched to
canonical names case-insensitively through an alias table (:mod:`.catalog_headers`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from pathlib import Path

import pyarrow as pa

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.export_parts import file_format

BATCH_ROWS = 65_536
_MAGIC_CODECS = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\x28\xb5\x2f\xfd", "zstd"))

Batch = dict[str, list[str | None]]


def _head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(4)


def codec_of(path: Path) -> str | None:
    """The compression of ``path`` from its first bytes, else from its extension."""
    head = _head(path)
    for magic, codec in _MAGIC_CODECS:
        if head.startswith(magic):
            return codec
    fmt = file_format(path.name)
    return None if head.startswith(b"PAR1") or fmt is None else fmt[1]


def _open_batches(
    path: Path, header: list[str] | None, known: frozenset[str]
) -> tuple[list[str], bool, Iterator[pa.RecordBatch]]:
    """``(column names, has a header row, record batches)`` of one part.

    ``header``: the first part's names, used when this part has no header row of its own (a
    part whose first row has the same width and names no known header ``known``)."""
    codec = codec_of(path)
    fmt = file_format(path.name)
    if (fmt is not None and fmt[0] in (".parquet", ".pq")) or (codec is None and _head(path) == b"PAR1"):
        import pyarrow.parquet as pq

        source = pa.BufferReader(pa.input_stream(str(path), compression=codec).read()) if codec else path
        reader = pq.ParquetFile(source)
        return reader.schema_arrow.names, True, reader.iter_batches(batch_size=BATCH_ROWS)
    import pyarrow.csv as pacsv

    delimiter = "\t" if fmt is not None and fmt[0] == ".tsv" else ","
    with pa.input_stream(str(path), compression=codec) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        first = next(csv.reader(text, delimiter=delimiter), [])
    if not first:
        raise ImportFormatError(f"{path}: empty file; expected a header row")
    headerless = (
        header is not None
        and len(first) == len(header)
        and not any(n.strip().lower() in known for n in first)
    )
    names = header if headerless and header is not None else first
    stream = pacsv.open_csv(
        pa.input_stream(str(path), compression=codec),
        read_options=pacsv.ReadOptions(
            block_size=1 << 22, column_names=names, skip_rows=0 if headerless else 1
        ),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names}, strings_can_be_null=True
        ),
    )
    return names, not headerless, iter(stream)


def read_batches(
    paths: list[Path], wanted: Mapping[str, tuple[str, ...]]
) -> Iterator[tuple[Path, int, Batch]]:
    """``(part, line of the batch's first row, {canonical name: values})`` per record batch of
    every part, in the order given: an unload split in parts reads as one table.

    ``wanted`` maps each canonical name to its accepted headers, most specific first; a header
    the part does not have is simply absent from the batch (the caller decides what is required).
    """
    known = frozenset(a for aliases in wanted.values() for a in aliases)
    header: list[str] | None = None
    for path in paths:
        if not path.is_file():
            raise ImportFormatError(f"{path}: file not found; check the path")
        try:
            names, has_header, batches = _open_batches(path, header, known)
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            raise ImportFormatError(f"{path}: cannot read as CSV or Parquet: {exc}") from None
        header = header or names
        lower = {n.strip().lower(): n for n in names}
        mapping: dict[str, str] = {}
        for canon, aliases in wanted.items():
            hit = next((lower[a] for a in aliases if a in lower), None)
            if hit is not None:
                mapping[canon] = hit
        line = 2 if has_header else 1
        try:
            for batch in batches:
                cols = {c: batch.column(src).cast(pa.string()).to_pylist() for c, src in mapping.items()}
                yield path, line, cols
                line += batch.num_rows
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            raise ImportFormatError(f"{path}: bad row after line {line}: {exc}") from None
