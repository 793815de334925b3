"""The artifact format: layout, manifest and content key. Owned by ``runtime``.

An artifact is an immutable folder ``<db root>/<key>/`` holding:

========================  ==========================================================
``manifest.json``          format version, key, inputs and their hashes, parameters,
                           model identity, counts, per-file SHA-256 and size
``chunks.parquet``         one row per chunk: text and all metadata
``tables.parquet``         one row per table: DDL (CREATE TABLE, pre-rendered), columns
``schema.json``            the authoritative schema the index was built from
``vocab.json``             the BM25 vocabulary (term list; position = term id)
``bm25_*.npy``             CSC BM25 weights: indptr, indices, data, idf
``typo_*.npy``             delete-neighbourhood typo index: keys, terms
``embeddings.npy``         float32 [chunks x dimension], L2-normalised
``chunk_table.npy``        int32 table index per chunk (-1 = database-level chunk)
``lance/``                 LanceDB table ``chunks`` (vectors + full-text index)
``history_*``              only when the database has an imported query history
                           (:data:`HISTORY_FILES`, docs/artifacts.md "Query history")
========================  ==========================================================

``<db root>/CURRENT`` names the published key. The key hashes every input byte and every
parameter that changes the output, never a timestamp, so equal inputs give equal keys.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

FORMAT_VERSION = 5  # 4: key_columns include FK targets; 5: no comments that restate the name
MANIFEST = "manifest.json"
CURRENT = "CURRENT"
KEY_LENGTH = 16
LANCE_DIR = "lance"
LANCE_TABLE = "chunks"

# What a column chunk is embedded with (recorded in the manifest as ``column_vectors``; every
# other chunk kind is embedded with the model as it always was). ``full``: the column's chunk
# text (title + text; above ``embed_all_columns_up_to`` columns, the column name + its doc);
# ``short``: column name, type and description only (docs' markdown labels and nullability
# left out: about 2.4x fewer tokens, so about 2.4x less embedding CPU per distinct column);
# ``bm25``: no vector (a zero row): the column is found through BM25 and its table's vector.
COLUMN_VECTOR_TIERS = ("full", "short", "bm25")
DEFAULT_COLUMN_VECTORS = "full"

NPY_FILES = (
    "bm25_indptr.npy",
    "bm25_indices.npy",
    "bm25_data.npy",
    "bm25_idf.npy",
    "typo_keys.npy",
    "typo_terms.npy",
    "embeddings.npy",
    "chunk_table.npy",
)

# The query history's arrays (docs/artifacts.md "Query history"), written only when the database
# has an imported history (docs/query-history.md); an index without one lists none of them and
# its key and files are what they were before histories existed. Every count pair is
# (runs: sum of the statements' ``count``, statements: distinct rows of ``queries.parquet``);
# tables are row numbers of ``tables.parquet``, columns positions in that row's ``columns``.
HISTORY_TABLES = "history_tables.npy"  # int64 [tables x 2]: runs, statements reading the table
HISTORY_PAIRS = "history_pairs.npy"  # int64 [P x 4]: table a < table b, runs, statements
HISTORY_JOINS = "history_joins.npy"  # int64 [J x 6]: left table, column, right table, column, runs, stmts
HISTORY_COLUMNS = "history_columns.npy"  # int64 [C x 4]: table, column, runs, statements
HISTORY_EXAMPLE_INDPTR = "history_example_indptr.npy"  # int64 [E + 1]: CSR row pointers
HISTORY_EXAMPLE_TABLES = "history_example_tables.npy"  # int32 [nnz]: each example's tables
HISTORY_NPY_FILES = (
    HISTORY_TABLES,
    HISTORY_PAIRS,
    HISTORY_JOINS,
    HISTORY_COLUMNS,
    HISTORY_EXAMPLE_INDPTR,
    HISTORY_EXAMPLE_TABLES,
)
HISTORY_EXAMPLES = "history_examples.parquet"  # one row per example chunk (question + SQL, or SQL)
# its columns: ``text`` is the question and the SQL, or (no question) the tables read and the SQL
HISTORY_EXAMPLE_COLUMNS = ("example_id", "question", "sql", "tables", "runs", "text")
HISTORY_FILES = (*HISTORY_NPY_FILES, HISTORY_EXAMPLES)
# The example chunks' BM25 index (the chunks' own layout, runtime/core/bm25.py: per term of the
# examples' vocabulary, the examples holding it and its weight there), for example evidence
# (runtime/ranking/history.py). Written with every history since arrays version 2; a version
# built before lists none of them and scores no example (both or neither, checked on open).
HISTORY_EXAMPLE_TERM_INDPTR = "history_example_term_indptr.npy"  # int64 [V + 1]
HISTORY_EXAMPLE_TERM_ROWS = "history_example_term_rows.npy"  # int32 [nnz]: example rows
HISTORY_EXAMPLE_TERM_WEIGHTS = "history_example_term_weights.npy"  # float32 [nnz]: BM25 weights
HISTORY_EXAMPLE_VOCAB = "history_example_vocab.json"  # the V terms, in id order
HISTORY_TERM_NPY_FILES = (
    HISTORY_EXAMPLE_TERM_INDPTR,
    HISTORY_EXAMPLE_TERM_ROWS,
    HISTORY_EXAMPLE_TERM_WEIGHTS,
)
HISTORY_TERM_FILES = (*HISTORY_TERM_NPY_FILES, HISTORY_EXAMPLE_VOCAB)


def compute_key(
    schema_bytes: bytes,
    doc_files: dict[str, bytes],
    params: dict[str, Any],
    model: dict[str, Any],
) -> str:
    """Content key over inputs and parameters (hex, :data:`KEY_LENGTH` characters).

    >>> k1 = compute_key(b"{}", {"a.md": b"x"}, {"chunking": 1}, {"name": "m"})
    >>> k1 == compute_key(b"{}", {"a.md": b"x"}, {"chunking": 1}, {"name": "m"})
    True
    >>> k1 == compute_key(b"{}", {"a.md": b"y"}, {"chunking": 1}, {"name": "m"})
    False
    """
    h = hashlib.sha256()
    h.update(f"schemarag-artifact-v{FORMAT_VERSION}\n".encode())
    h.update(hashlib.sha256(schema_bytes).digest())
    for name in sorted(doc_files):
        h.update(name.encode("utf-8") + b"\x00")
        h.update(hashlib.sha256(doc_files[name]).digest())
    h.update(json.dumps(params, sort_keys=True).encode())
    h.update(json.dumps(model, sort_keys=True).encode())
    return h.hexdigest()[:KEY_LENGTH]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_checksums(folder: Path) -> dict[str, dict[str, Any]]:
    """``{relative path: {sha256, bytes}}`` for every file under ``folder`` except the manifest."""
    out: dict[str, dict[str, Any]] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != MANIFEST:
            rel = p.relative_to(folder).as_posix()
            out[rel] = {"sha256": sha256_file(p), "bytes": p.stat().st_size}
    return out
