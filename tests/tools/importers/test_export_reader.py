"""Reading an export part stops its reader when done: pyarrow's streaming CSV reader reads ahead
on a thread of its own, and one left to interpreter shutdown can abort the import process after
it wrote everything (apache/arrow#34314; it lost a database in a warehouse run). That thread reads
Arrow's own native stream: a Python file object there hung or aborted the process at exit."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv
import pytest

from schemarag.tools.importers.export_reader import read_batches
from schemarag.tools.importers.limits import ImportLimitError, ImportLimits

WANTED = {"table": ("table_name",), "column": ("column_name",)}


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each streaming reader opened, and whether it was closed."""
    closed: list[bool] = []
    real = pacsv.open_csv

    class Recorded:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self.reader = real(*args, **kwargs)
            self.slot = len(closed)
            closed.append(False)

        def __iter__(self) -> Any:
            return iter(self.reader)

        def close(self) -> None:
            closed[self.slot] = True
            self.reader.close()

    monkeypatch.setattr(pacsv, "open_csv", Recorded)
    return closed


def test_every_part_reader_is_closed_once_read(tmp_path: Path, closes: list[bool]) -> None:
    parts = []
    for i in range(2):
        parts.append(tmp_path / f"part{i}.csv.gz")
        parts[-1].write_bytes(gzip.compress(f"table_name,column_name\nt{i},c\nt{i},d\n".encode()))
    rows = [cols for _, _, cols in read_batches(parts, WANTED)]
    assert [r["table"] for r in rows] == [["t0", "t0"], ["t1", "t1"]]
    assert closes == [True, True]


def test_a_limit_reached_mid_part_still_closes_the_reader(tmp_path: Path, closes: list[bool]) -> None:
    big = tmp_path / "big.csv"
    big.write_text("table_name,column_name\n" + "".join(f"t,c{i}\n" for i in range(10)))
    with pytest.raises(ImportLimitError, match=r"big\.csv"):
        list(read_batches([big], WANTED, ImportLimits(rows=5)))
    assert closes == [True]


# A reader dropped after two of many blocks, the interpreter exiting while Arrow reads ahead.
_EARLY_EXIT = """
import sys
from pathlib import Path
from schemarag.tools.importers.export_reader import _open_batches, read_batches
from schemarag.tools.importers.limits import ImportLimits
limits = ImportLimits(line_bytes=1 << 16)
for n, _ in enumerate(read_batches([Path(sys.argv[1])], {"table": ("table_name",)}, limits)):
    if n == 1:
        break
batches = iter(_open_batches(Path(sys.argv[1]), None, frozenset(), limits)[2])
next(batches)  # left open at exit
print("read")
"""


def test_a_reader_dropped_mid_part_does_not_hang_or_abort_the_process(tmp_path: Path) -> None:
    """With the old Python-file source, about one run in two hung or aborted here (rc 134)."""
    export = tmp_path / "columns.csv.gz"
    rows = "".join(f"t{i},c{i},{'x' * 40}\n" for i in range(60_000))
    export.write_bytes(gzip.compress(("table_name,column_name,comment\n" + rows).encode()))
    for _ in range(4):
        done = subprocess.run(
            [sys.executable, "-c", _EARLY_EXIT, str(export)], capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stdout.strip()) == (0, "read"), done.stderr[-2000:]


def test_a_gzip_bomb_stops_within_a_block_of_the_limit(tmp_path: Path) -> None:
    bomb = tmp_path / "columns.csv.gz"
    bomb.write_bytes(gzip.compress(b"table_name,column_name\n" + b"t,c\n" * 2_000_000))
    limits = ImportLimits(decompressed_bytes=1 << 20, line_bytes=1 << 16)
    seen = 0
    with pytest.raises(ImportLimitError, match=r"columns\.csv\.gz: the decompressed size"):
        for _, _, cols in read_batches([bomb], WANTED, limits):
            seen += 4 * len(cols["table"])
    assert seen <= (1 << 20) + (1 << 16)  # at most one block past the limit was handed out
