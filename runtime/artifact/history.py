"""The query history's part of an index version, memory-mapped (issue 38; docs/artifacts.md).

A version built from a database with an imported query history lists the files of
:data:`~schemarag.runtime.artifact.format.HISTORY_FILES` in its manifest; one without lists none
of them and reads as :meth:`QueryHistory.empty` (every array with zero rows). The arrays are
checked once when the version is opened (shape, dtype, indices inside the schema), so a request
only indexes them; the example chunks' text columns are decoded once, like ``chunks.parquet``.
The examples' BM25 index (:data:`~schemarag.runtime.artifact.format.HISTORY_TERM_FILES`) has the
chunks' layout; a version built before it existed lists none of its files and scores no example.

Counts come in pairs ``(runs, statements)``: the times the statements ran (the log's ``count``),
and how many distinct stored statements did. Tables are row numbers of ``tables.parquet``
(``IndexArtifact.table_names``), columns positions in that table's DDL column list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.runtime.artifact.format import (
    HISTORY_COLUMNS,
    HISTORY_EXAMPLE_COLUMNS,
    HISTORY_EXAMPLE_INDPTR,
    HISTORY_EXAMPLE_TABLES,
    HISTORY_EXAMPLE_TERM_INDPTR,
    HISTORY_EXAMPLE_TERM_ROWS,
    HISTORY_EXAMPLE_TERM_WEIGHTS,
    HISTORY_EXAMPLE_VOCAB,
    HISTORY_EXAMPLES,
    HISTORY_FILES,
    HISTORY_JOINS,
    HISTORY_NPY_FILES,
    HISTORY_PAIRS,
    HISTORY_TABLES,
    HISTORY_TERM_FILES,
    HISTORY_TERM_NPY_FILES,
    MANIFEST,
)
from schemarag.runtime.artifact.manifest import Manifest
from schemarag.runtime.core.errors import ArtifactError

# file -> (dtype, columns; None: one-dimensional)
_SHAPES: dict[str, tuple[type, int | None]] = {
    HISTORY_TABLES: (np.int64, 2),
    HISTORY_PAIRS: (np.int64, 4),
    HISTORY_JOINS: (np.int64, 6),
    HISTORY_COLUMNS: (np.int64, 4),
    HISTORY_EXAMPLE_INDPTR: (np.int64, None),
    HISTORY_EXAMPLE_TABLES: (np.int32, None),
    HISTORY_EXAMPLE_TERM_INDPTR: (np.int64, None),
    HISTORY_EXAMPLE_TERM_ROWS: (np.int32, None),
    HISTORY_EXAMPLE_TERM_WEIGHTS: (np.float32, None),
}


def _empty(name: str) -> np.ndarray:
    dtype, width = _SHAPES[name]
    if name in (HISTORY_EXAMPLE_INDPTR, HISTORY_EXAMPLE_TERM_INDPTR):
        return np.zeros(1, dtype=dtype)
    return np.zeros((0, width) if width else 0, dtype=dtype)


@dataclass(frozen=True, eq=False)
class QueryHistory:
    """What the version's query history says; every array has zero rows when there is none."""

    tables: np.ndarray  # int64 [tables x 2]: runs, statements per table (0 rows: no history)
    pairs: np.ndarray  # int64 [P x 4]: table a < table b, runs, statements; sorted by (a, b)
    joins: np.ndarray  # int64 [J x 6]: left table, left column, right table, right column, runs, statements
    columns: np.ndarray  # int64 [C x 4]: table, column, runs, statements; sorted by (table, column)
    example_indptr: np.ndarray  # int64 [E + 1]: example i reads example_tables[indptr[i]:indptr[i+1]]
    example_tables: np.ndarray  # int32 [nnz]: table indices
    examples: dict[str, list[Any]] = field(repr=False)  # HISTORY_EXAMPLE_COLUMNS -> values
    summary: dict[str, Any] = field(default_factory=dict, repr=False)  # the manifest's "history"
    # the examples' BM25 index (HISTORY_TERM_FILES; empty: built before arrays version 2)
    example_term_indptr: np.ndarray = field(default_factory=lambda: _empty(HISTORY_EXAMPLE_TERM_INDPTR))
    example_term_rows: np.ndarray = field(default_factory=lambda: _empty(HISTORY_EXAMPLE_TERM_ROWS))
    example_term_weights: np.ndarray = field(default_factory=lambda: _empty(HISTORY_EXAMPLE_TERM_WEIGHTS))
    example_vocab: dict[str, int] = field(default_factory=dict, repr=False)

    @classmethod
    def empty(cls) -> QueryHistory:
        return cls(
            **{_FIELDS[name]: _empty(name) for name in HISTORY_NPY_FILES},
            examples={c: [] for c in HISTORY_EXAMPLE_COLUMNS},
        )

    @property
    def present(self) -> bool:
        """Whether the version was built with a query history."""
        return bool(self.summary)

    @property
    def n_examples(self) -> int:
        return int(self.example_indptr.shape[0]) - 1

    def example_table_indices(self, i: int) -> np.ndarray:
        """Table indices example ``i`` reads."""
        return self.example_tables[self.example_indptr[i] : self.example_indptr[i + 1]]


_FIELDS = {
    HISTORY_TABLES: "tables",
    HISTORY_PAIRS: "pairs",
    HISTORY_JOINS: "joins",
    HISTORY_COLUMNS: "columns",
    HISTORY_EXAMPLE_INDPTR: "example_indptr",
    HISTORY_EXAMPLE_TABLES: "example_tables",
}


def _check(folder: Path, name: str, arr: np.ndarray) -> None:
    dtype, width = _SHAPES[name]
    shape_ok = arr.ndim == 2 and arr.shape[1] == width if width else arr.ndim == 1
    if arr.dtype != dtype or not shape_ok:
        expect = f"{np.dtype(dtype).name} [n x {width}]" if width else f"{np.dtype(dtype).name} [n]"
        raise ArtifactError(
            f"{folder / name}: {arr.dtype} {arr.shape}, expected {expect}; rebuild the artifact"
        )


def _in_range(folder: Path, name: str, values: np.ndarray, limit: np.ndarray | int) -> None:
    if values.size and (values.min() < 0 or np.any(values >= limit)):
        raise ArtifactError(f"{folder / name}: an index outside the schema; rebuild the artifact")


def _listed(folder: Path, info: Manifest, names: tuple[str, ...]) -> bool:
    """Whether the manifest lists the file group ``names``: all of them (True) or none (False);
    some of them is a broken version."""
    listed = [name for name in names if name in info.files]
    if listed and len(listed) != len(names):
        missing = sorted(set(names) - set(listed))
        raise ArtifactError(f"{folder / MANIFEST}: 'files' lacks {', '.join(missing)}; rebuild the artifact")
    return bool(listed)


def _mapped(folder: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The ``.npy`` files ``names`` memory-mapped, each checked against :data:`_SHAPES`."""
    out: dict[str, np.ndarray] = {}
    for name in names:
        out[name] = np.asarray(np.load(folder / name, mmap_mode="r", allow_pickle=False))
        _check(folder, name, out[name])
    return out


def _pointers_ok(indptr: np.ndarray, rows: int, nnz: int) -> bool:
    """CSR/CSC row pointers for ``rows`` rows over ``nnz`` entries: from 0 to ``nnz``, never back."""
    return bool(
        indptr.shape[0] == rows + 1
        and indptr[0] == 0
        and indptr[-1] == nnz
        and not np.any(np.diff(indptr) < 0)
    )


def read_history(folder: Path, info: Manifest, column_counts: list[int]) -> QueryHistory:
    """The history of the version in ``folder`` (files already verified against ``info``);
    :meth:`QueryHistory.empty` when the manifest lists none. ``column_counts``: columns per
    table, in ``tables.parquet`` order."""
    if not _listed(folder, info, HISTORY_FILES):
        return QueryHistory.empty()
    from schemarag.runtime.artifact.parquet_rows import read_columns

    mm = _mapped(folder, HISTORY_NPY_FILES)
    n_tables = len(column_counts)
    widths = np.asarray(column_counts, dtype=np.int64)
    if mm[HISTORY_TABLES].shape[0] != n_tables:
        raise ArtifactError(
            f"{folder / HISTORY_TABLES}: {mm[HISTORY_TABLES].shape[0]} rows for {n_tables} tables; "
            "rebuild the artifact"
        )
    for name, table_cols in ((HISTORY_PAIRS, (0, 1)), (HISTORY_JOINS, (0, 2)), (HISTORY_COLUMNS, (0,))):
        for col in table_cols:
            _in_range(folder, name, mm[name][:, col], n_tables)
    for name, (t, c) in ((HISTORY_JOINS, (0, 1)), (HISTORY_JOINS, (2, 3)), (HISTORY_COLUMNS, (0, 1))):
        arr = mm[name]
        if arr.shape[0]:
            _in_range(folder, name, arr[:, c], widths[arr[:, t]])
    indptr, ex_tables = mm[HISTORY_EXAMPLE_INDPTR], mm[HISTORY_EXAMPLE_TABLES]
    _in_range(folder, HISTORY_EXAMPLE_TABLES, ex_tables, n_tables)
    examples = read_columns(folder / HISTORY_EXAMPLES)
    n = len(examples.get("example_id", []))
    if set(examples) != set(HISTORY_EXAMPLE_COLUMNS) or not _pointers_ok(indptr, n, ex_tables.shape[0]):
        raise ArtifactError(
            f"{folder / HISTORY_EXAMPLES}: does not match {HISTORY_EXAMPLE_INDPTR}; rebuild the artifact"
        )
    summary = info.model_extra.get("history") if info.model_extra else None
    return QueryHistory(
        **{_FIELDS[name]: mm[name] for name in HISTORY_NPY_FILES},
        examples={c: examples[c] for c in HISTORY_EXAMPLE_COLUMNS},
        summary=summary if isinstance(summary, dict) and summary else {"present": True},
        **_read_example_terms(folder, info, n),
    )


def _read_example_terms(folder: Path, info: Manifest, n_examples: int) -> dict[str, Any]:
    """The examples' BM25 index as :class:`QueryHistory` fields ({} when the version has none):
    the pointers must cover the vocabulary and the postings name examples of this history."""
    if not _listed(folder, info, HISTORY_TERM_FILES):
        return {}
    mm = _mapped(folder, HISTORY_TERM_NPY_FILES)
    terms = json.loads((folder / HISTORY_EXAMPLE_VOCAB).read_text(encoding="utf-8"))
    indptr, rows = mm[HISTORY_EXAMPLE_TERM_INDPTR], mm[HISTORY_EXAMPLE_TERM_ROWS]
    if (
        not isinstance(terms, list)
        or not all(isinstance(t, str) for t in terms)
        or not _pointers_ok(indptr, len(terms), rows.shape[0])
        or rows.shape != mm[HISTORY_EXAMPLE_TERM_WEIGHTS].shape
    ):
        raise ArtifactError(
            f"{folder / HISTORY_EXAMPLE_VOCAB}: does not match {HISTORY_EXAMPLE_TERM_INDPTR}; "
            "rebuild the artifact"
        )
    _in_range(folder, HISTORY_EXAMPLE_TERM_ROWS, rows, n_examples)
    return {
        "example_term_indptr": indptr,
        "example_term_rows": rows,
        "example_term_weights": mm[HISTORY_EXAMPLE_TERM_WEIGHTS],
        "example_vocab": {t: i for i, t in enumerate(terms)},
    }
