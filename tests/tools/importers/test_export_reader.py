"""Reading an export part stops its reader when done: pyarrow's streaming CSV reader reads ahead
on a thread of its own, and one left to interpreter shutdown can abort the import process after
it wrote everything (apache/arrow#34314; it lost a database in a warehouse run)."""

from __future__ import annotations

import gzip
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
