"""Read an artifact's small Parquet tables (chunks, tables) into Python lists with DuckDB.

Why DuckDB and not pyarrow: the query side already needs DuckDB (generated SQL is bound against
empty tables), and pyarrow is 170 MB of a 550 MB base install that only ever read these two
files. Reading them with DuckDB keeps ``pip install schemarag`` under its 450 MB budget
(measured in docs/embedding-model.md); the build side still writes them with pyarrow.

Rows come back in file order (``file_row_number``), so row ``i`` is chunk ``i`` as the arrays
index it. DuckDB expands glob characters in paths; a path holding any is read through a
private symlink, so an artifacts folder named ``idx[1]`` or ``a*b`` reads exactly one file.

>>> import tempfile, pathlib, duckdb
>>> p = pathlib.Path(tempfile.mkdtemp()) / "t[1].parquet"
>>> duckdb.sql("SELECT 2 AS n, ['a'] AS l").write_parquet(str(p))
>>> read_columns(p)
{'n': [2], 'l': [['a']]}
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ArtifactError

_GLOB_CHARS = frozenset("*?[]{}")
_QUERY = (
    "SELECT * EXCLUDE (file_row_number) FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number"
)


def _fetch(path: Path) -> dict[str, list[Any]]:
    import duckdb
    import numpy as np

    con = duckdb.connect(":memory:")
    try:
        # fetchnumpy + tolist is ~2x faster than fetchall for wide text columns
        arrays = con.execute(_QUERY, [str(path)]).fetchnumpy()
    finally:
        con.close()
    out: dict[str, list[Any]] = {}
    for name, arr in arrays.items():
        values = arr.tolist()
        if arr.dtype == object and any(isinstance(v, np.ndarray) for v in values):
            values = [v.tolist() if isinstance(v, np.ndarray) else v for v in values]
        out[name] = values
    return out


def read_columns(path: Path) -> dict[str, list[Any]]:
    """Column name -> values in file order (lists stay lists, NULL is None)."""
    import duckdb

    try:
        if not _GLOB_CHARS.intersection(str(path)):
            return _fetch(path)
        with tempfile.TemporaryDirectory(prefix="schemarag-parquet-") as tmp:
            link = Path(tmp) / "table.parquet"
            os.symlink(path.resolve(), link)
            return _fetch(link)
    except duckdb.Error as exc:
        raise ArtifactError(f"{path}: unreadable Parquet file ({exc}); rebuild the artifact") from None


def read_rows(path: Path) -> list[dict[str, Any]]:
    """One dict per row, in file order (pyarrow's ``Table.to_pylist`` shape)."""
    cols = read_columns(path)
    names = list(cols)
    return [dict(zip(names, row, strict=True)) for row in zip(*cols.values(), strict=True)]
