"""Read the parts of one catalog export as record batches, whatever the warehouse wrote.

CSV/TSV or Parquet, plain or compressed (gzip, bzip2, zstd: detected from the first bytes, so an
unload named ``000000000000`` or a ``columns.csv`` that is really gzip still reads), one file or
many parts of one unload read as one table. Files are streamed with pyarrow
(``pyarrow.csv.open_csv`` / ``ParquetFile.iter_batches``), so memory follows the batch size, not
the size of the export; every value comes out as a string (or None), and headers are matched to
canonical names case-insensitively through an alias table (:mod:`.catalog_headers`).

Every read is bounded by :class:`~.limits.ImportLimits` (issue 39): decompressed bytes are counted
as they stream (a gzip bomb stops at the limit, never inflates in memory; a CSV part is counted per
block of Arrow's native stream, :class:`_CountedBatches`), the header row is read
in pieces up to the line limit (never ``csv.reader`` over an unbounded line), the CSV block size
is the line limit (a longer row is a one-line error, a shorter one always parses, however long
its comment), rows are counted, and a compressed Parquet file is inflated to an anonymous
temporary file (Parquet needs random access) under the same byte limit.
"""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.export_parts import file_format
from schemarag.tools.importers.limits import DEFAULT_LIMITS, ImportLimitError, ImportLimits

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


class _Counted(io.RawIOBase):
    """A decompressing stream that raises :class:`ImportLimitError` past ``decompressed_bytes``."""

    def __init__(self, path: Path, codec: str | None, limits: ImportLimits) -> None:
        super().__init__()
        self._raw = pa.input_stream(str(path), compression=codec)
        self._path, self._limits, self.seen = path, limits, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        data = self._raw.read(len(buffer))
        self.seen += len(data)
        if self.seen > self._limits.decompressed_bytes:
            raise self._limits.exceeded(self._path, "decompressed_bytes", "the decompressed size")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_decompressed(path: Path, limits: ImportLimits = DEFAULT_LIMITS) -> io.BufferedReader:
    """``path`` as a binary stream, inflated (codec sniffed from the first bytes, else from the
    extension) and counted: reading past ``limits.decompressed_bytes`` raises
    :class:`ImportLimitError`. For line-oriented inputs (``.sql``, ``.jsonl``) of any importer."""
    return io.BufferedReader(_Counted(path, codec_of(path), limits), buffer_size=1 << 16)


def _first_line(path: Path, codec: str | None, limits: ImportLimits) -> bytes:
    """The bytes of the first line, read in 64 KiB pieces: at most ``line_bytes`` are held."""
    out = bytearray()
    with _Counted(path, codec, limits) as raw:
        while True:
            piece = raw.read(64 * 1024)
            if not piece:
                return bytes(out)
            end = piece.find(b"\n")
            if end >= 0:
                return bytes(out + piece[: end + 1])
            out += piece
            if len(out) > limits.line_bytes:
                raise limits.exceeded(path, "line_bytes", "the header row (no line end found)")


def _parquet_source(path: Path, codec: str | None, limits: ImportLimits) -> Path | IO[bytes]:
    """``path`` itself, or for a compressed file an anonymous temporary file holding it inflated
    (Parquet reads its footer first, so it needs a seekable file; memory stays one piece)."""
    if not codec:
        return path
    spool = tempfile.TemporaryFile()  # noqa: SIM115 - ParquetFile reads it after we return
    with _Counted(path, codec, limits) as raw:
        piece = raw.read(1 << 20)
        if not piece.startswith(b"PAR1"):  # not Parquet: say so before inflating the rest
            spool.close()
            raise ImportFormatError(
                f"{path}: decompressed, it does not start with Parquet's PAR1; not a Parquet file"
            )
        while piece:
            spool.write(piece)
            piece = raw.read(1 << 20)
    spool.seek(0)
    return spool


def _open_batches(
    path: Path, header: list[str] | None, known: frozenset[str], limits: ImportLimits = DEFAULT_LIMITS
) -> tuple[list[str], bool, Iterable[pa.RecordBatch]]:
    """``(column names, has a header row, record batches)`` of one part (a reader to close once
    read: :func:`_close`).

    ``header``: the first part's names, used when this part has no header row of its own (a
    part whose first row has the same width and names no known header ``known``)."""
    codec = codec_of(path)
    fmt = file_format(path.name)
    if (fmt is not None and fmt[0] in (".parquet", ".pq")) or (codec is None and _head(path) == b"PAR1"):
        import pyarrow.parquet as pq

        reader = pq.ParquetFile(_parquet_source(path, codec, limits))
        return reader.schema_arrow.names, True, reader.iter_batches(batch_size=BATCH_ROWS)
    import pyarrow.csv as pacsv

    delimiter = "\t" if fmt is not None and fmt[0] == ".tsv" else ","
    line = _first_line(path, codec, limits).decode("utf-8-sig")
    try:
        first = next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error as exc:  # e.g. a header field over csv's 131,072-byte field limit
        raise ImportFormatError(
            f"{path}: header row is not a CSV header ({exc}); export with a header row"
        ) from None
    if not first:
        raise ImportFormatError(f"{path}: empty file; expected a header row")
    headerless = (
        header is not None
        and len(first) == len(header)
        and not any(n.strip().lower() in known for n in first)
    )
    names = header if headerless and header is not None else first
    stream = pacsv.open_csv(
        # a native stream: Arrow reads ahead on an IO thread of its own, and a Python file object
        # there (the counting wrapper this used to be) deadlocks or aborts the process when a
        # reader is dropped early or the interpreter exits mid-read; counted per batch instead
        pa.input_stream(str(path), compression=codec),
        read_options=pacsv.ReadOptions(
            block_size=limits.line_bytes, column_names=names, skip_rows=0 if headerless else 1
        ),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names}, strings_can_be_null=True
        ),
    )
    return names, not headerless, _CountedBatches(stream, path, limits)


class _CountedBatches:
    """A CSV part's record batches, raising :class:`ImportLimitError` once the text they hold
    passes ``decompressed_bytes``: each value's bytes plus one separator per value, never more
    than the decompressed text (short of it by the quotes and escapes). Counted after each block,
    so a bomb stops within one block (``line_bytes``) of the limit."""

    def __init__(self, stream: Any, path: Path, limits: ImportLimits) -> None:
        self._stream, self._path, self._limits, self.seen = stream, path, limits, 0

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for batch in self._stream:
            self.seen += batch.num_rows * batch.num_columns + sum(_value_bytes(c) for c in batch.columns)
            if self.seen > self._limits.decompressed_bytes:
                raise self._limits.exceeded(self._path, "decompressed_bytes", "the decompressed size")
            yield batch

    def close(self) -> None:
        self._stream.close()


def _value_bytes(column: pa.Array) -> int:
    """The bytes of a string column's values (its data buffer), else its whole size."""
    buffers = column.buffers()
    if pa.types.is_string(column.type) and len(buffers) == 3 and buffers[2] is not None:
        return buffers[2].size
    return column.nbytes


def _sliced(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """At most ``BATCH_ROWS`` rows each: a CSV block (up to the line limit, 16 MiB) of short rows
    is over a million rows, and the caller turns a batch into Python strings."""
    for batch in batches:
        for start in range(0, batch.num_rows, BATCH_ROWS):
            yield batch.slice(start, BATCH_ROWS)


def _arrow_error(path: Path, exc: Exception, line: int, limits: ImportLimits) -> ImportFormatError:
    """One line for a pyarrow error: a row longer than the block is the line limit."""
    if isinstance(exc, ImportLimitError):
        return exc
    text = " ".join(str(exc).split())
    if "straddling" in text or "straddles" in text:
        return limits.exceeded(path, "line_bytes", f"a row after line {line:,}")
    return ImportFormatError(f"{path}: bad row after line {line:,}: {text[:300]}")


def read_batches(
    paths: list[Path], wanted: Mapping[str, tuple[str, ...]], limits: ImportLimits = DEFAULT_LIMITS
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
            names, has_header, batches = _open_batches(path, header, known, limits)
        except ImportLimitError:
            raise
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            if "straddl" in str(exc):
                raise _arrow_error(path, exc, 1, limits) from None
            raise ImportFormatError(
                f"{path}: cannot read as CSV or Parquet: {' '.join(str(exc).split())[:300]}"
            ) from None
        header = header or names
        lower = {n.strip().lower(): n for n in names}
        mapping: dict[str, str] = {}
        for canon, aliases in wanted.items():
            hit = next((lower[a] for a in aliases if a in lower), None)
            if hit is not None:
                mapping[canon] = hit
        line = 2 if has_header else 1
        try:
            for batch in _sliced(iter(batches)):
                if line + batch.num_rows > limits.rows:
                    raise limits.exceeded(
                        path, "rows", f"the number of rows ({line + batch.num_rows - 1:,}+)"
                    )
                cols = {c: _strings(batch.column(src)) for c, src in mapping.items()}
                yield path, line, cols
                line += batch.num_rows
        except ImportLimitError:
            raise
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
            raise _arrow_error(path, exc, line, limits) from None
        finally:
            _close(batches)


def _strings(column: Any) -> list[str | None]:
    """A column's values as text. A nested value (BigQuery's ``referenced_tables``, an array of
    structs, or its ``error_result`` struct, in a Parquet export) is its JSON text, as
    ``TO_JSON_STRING`` would write it in a CSV export; anything else is cast.

    >>> _strings(pa.array([[{"table_id": "t"}], None]))
    ['[{"table_id": "t"}]', None]
    >>> _strings(pa.array([1, None]))
    ['1', None]
    """
    if pa.types.is_nested(column.type):
        return [None if v is None else json.dumps(v, default=str) for v in column.to_pylist()]
    return column.cast(pa.string()).to_pylist()


def _close(batches: Any) -> None:
    """Stop a part's reader now. pyarrow's streaming CSV reader reads ahead on a thread of its
    own; left to interpreter shutdown, that thread can outlive Arrow and abort the process
    ("terminate called without an active exception", apache/arrow#34314) after the import has
    written everything: a crash at random that lost a whole database in a warehouse run."""
    close = getattr(batches, "close", None)
    if close is not None:
        close()
