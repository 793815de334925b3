"""Opening an artifact: validate the manifest and checksums, then memory-map the arrays.

An :class:`IndexArtifact` is one immutable index version: everything a request needs is
decoded here, once per version and process (the vocabulary dict, the schema, the DDL pieces,
the derived lookups of :meth:`IndexArtifact.warm`), before any request sees it. A request
pins one such object and reads only it, so a rebuild published mid-request cannot mix two
versions. Dropping the last reference unmaps the files.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.runtime.artifact.chunk_model import Chunk
from schemarag.runtime.artifact.ddl import TableDDL, assemble, ddl_keyword, table_note
from schemarag.runtime.artifact.format import CURRENT, LANCE_DIR, MANIFEST, NPY_FILES, sha256_file
from schemarag.runtime.artifact.history import QueryHistory, read_history
from schemarag.runtime.artifact.manifest import Manifest, check_identity, read_manifest, read_pointer
from schemarag.runtime.artifact.naming import join_like
from schemarag.runtime.core.errors import ArtifactError, ChecksumMismatchError, ManifestMismatchError
from schemarag.runtime.core.schema import Database, parse_schema
from schemarag.runtime.core.text_tokens import TOKENIZER_CONFIG

log = logging.getLogger(__name__)


def current_key(db_root: Path) -> str | None:
    """The key ``<db_root>/CURRENT`` names (checked to be a plain key), None if unpublished."""
    return read_pointer(db_root / CURRENT)


def verify_files(folder: Path, manifest: Manifest, full: bool = True) -> None:
    """Check every listed file exists inside ``folder`` with the recorded size and, when
    ``full``, the SHA-256 of every file this runtime reads (``lance/`` is for other readers:
    its sizes are checked; hashing it would only slow down opening a version)."""
    files = manifest.files
    for required in (*NPY_FILES, "chunks.parquet", "tables.parquet", "schema.json", "vocab.json"):
        if required not in files:
            raise ArtifactError(
                f"{folder / MANIFEST}: 'files' does not list {required}; rebuild the artifact"
            )
    base = folder.resolve()
    for rel, info in files.items():
        path = folder / rel
        if not path.resolve().is_relative_to(base):
            raise ArtifactError(f"{path}: resolves outside {folder} (a symlink?); rebuild the artifact")
        if not path.is_file():
            raise ChecksumMismatchError(f"{path}: missing (listed in the manifest); rebuild the artifact")
        size = path.stat().st_size
        if size != info.bytes:
            raise ChecksumMismatchError(
                f"{path}: size {size} bytes, manifest says {info.bytes}; the file is corrupted, rebuild"
            )
        if full and not rel.startswith(LANCE_DIR + "/"):
            digest = sha256_file(path)
            if digest != info.sha256:
                raise ChecksumMismatchError(
                    f"{path}: sha256 {digest[:12]}..., manifest says {info.sha256[:12]}...; "
                    "the file is corrupted, rebuild the artifact"
                )


def _check_built_with(info: Manifest, folder: Path, expected_model: dict[str, Any] | None) -> None:
    """The index was built with the query side's model (when given) and tokenizer: a vector or a
    BM25 term from another one would match nothing it should."""
    if expected_model is not None:
        built = info.model.model_dump()
        for name in ("name", "onnx_sha256", "tokenizer_sha256", "dimension"):
            if built.get(name) != expected_model.get(name):
                raise ManifestMismatchError(
                    f"{folder}: built with model {name}={built.get(name)!r}, but the query model has "
                    f"{name}={expected_model.get(name)!r}; rebuild the index or load the same model"
                )
    built_tok = info.params.get("tokenizer")
    if built_tok != TOKENIZER_CONFIG:
        raise ManifestMismatchError(
            f"{folder}: built with tokenizer {built_tok!r}, this runtime tokenizes with "
            f"{TOKENIZER_CONFIG!r}; rebuild the index with `schemarag build`"
        )


def _map_arrays(folder: Path, info: Manifest) -> dict[str, np.ndarray]:
    """Every ``.npy`` file memory-mapped, by file name; the embeddings' shape checked."""
    # np.asarray drops the memmap subclass (no copy): arithmetic on plain views skips
    # memmap's per-operation wrapping, which costs more than the math on small indexes.
    mm = {name: np.asarray(np.load(folder / name, mmap_mode="r", allow_pickle=False)) for name in NPY_FILES}
    dim = info.model.dimension
    emb = mm["embeddings.npy"]
    if emb.ndim != 2 or emb.shape[1] != dim or emb.shape[0] != info.counts.chunks:
        raise ManifestMismatchError(
            f"{folder}: embeddings.npy has shape {emb.shape}, manifest says "
            f"{info.counts.chunks} x {dim}; rebuild the artifact"
        )
    return mm


def _table_ddl(tables: list[dict[str, Any]], schema: Database) -> dict[str, TableDDL]:
    """``tables.parquet``'s rows as :class:`TableDDL` pieces. The file stores the rendered SQL
    only; the statement keyword (``VIEW``...) and the shard note are derived from the schema."""
    kinds = {t.name: t.kind for t in schema.tables}
    return {
        t["name"]: TableDDL(
            name=t["name"],
            name_sql=t["name_sql"],
            columns=tuple(t["columns"]),
            column_sql=tuple(t["column_sql"]),
            comments=tuple(t["comments"]),
            key_columns=tuple(t["key_columns"]),
            pk_sql=t["pk_sql"],
            fk_sql=tuple(zip(t["fk_columns"], t["fk_sql"], strict=True)),
            keyword=ddl_keyword(kinds.get(t["name"])),
            note=table_note(schema.table(t["name"]), schema.dialect),
        )
        for t in tables
    }


@dataclass(frozen=True, eq=False)
class IndexArtifact:
    """A validated, memory-mapped index version (immutable: a request's snapshot)."""

    path: Path
    manifest: dict[str, Any]  # the raw JSON (compatibility); ``info`` is the typed form
    schema: Database
    vocab: dict[str, int]
    vocab_terms: list[str]
    bm25_indptr: np.ndarray
    bm25_indices: np.ndarray
    bm25_data: np.ndarray
    bm25_idf: np.ndarray
    typo_keys: np.ndarray
    typo_terms: np.ndarray
    embeddings: np.ndarray
    chunk_table: np.ndarray
    table_names: list[str]
    ddl: dict[str, TableDDL]
    _chunks: dict[str, list[Any]]  # chunks.parquet, column -> values in row order
    info: Manifest = field(repr=False)
    # the imported query history's arrays (runtime/artifact/history.py); empty without one
    history: QueryHistory = field(default_factory=QueryHistory.empty, repr=False)

    @property
    def key(self) -> str:
        return self.info.key

    @property
    def n_chunks(self) -> int:
        return int(self.embeddings.shape[0])

    @classmethod
    def open(
        cls,
        folder: Path,
        expected_model: dict[str, Any] | None = None,
        verify: bool = True,
        database: str | None = None,
        tenant: str | None = None,
    ) -> IndexArtifact:
        """Validate, then map. ``expected_model`` is the query-side model identity; with
        ``database``, the manifest must name that database and ``tenant`` (its namespace)."""
        from schemarag.runtime.artifact.parquet_rows import read_columns, read_rows

        info, manifest = read_manifest(folder)
        check_identity(info, folder, database, tenant)
        _check_built_with(info, folder, expected_model)
        verify_files(folder, info, full=verify)
        mm = _map_arrays(folder, info)
        schema = parse_schema(json.loads((folder / "schema.json").read_bytes()), folder / "schema.json")
        terms = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        tables = read_rows(folder / "tables.parquet")
        history = read_history(folder, info, [len(t["columns"]) for t in tables])
        return cls(
            path=folder,
            manifest=manifest,
            schema=schema,
            vocab={t: i for i, t in enumerate(terms)},
            vocab_terms=terms,
            bm25_indptr=mm["bm25_indptr.npy"],
            bm25_indices=mm["bm25_indices.npy"],
            bm25_data=mm["bm25_data.npy"],
            bm25_idf=mm["bm25_idf.npy"],
            typo_keys=mm["typo_keys.npy"],
            typo_terms=mm["typo_terms.npy"],
            embeddings=mm["embeddings.npy"],
            chunk_table=mm["chunk_table.npy"],
            table_names=[t["name"] for t in tables],
            ddl=_table_ddl(tables, schema),
            _chunks=read_columns(folder / "chunks.parquet"),
            info=info,
            history=history,
        )

    @cached_property
    def _chunk_columns(self) -> dict[str, list[Any]]:
        return self._chunks

    @cached_property
    def table_sources(self) -> tuple[np.ndarray, list[str]]:
        """Per table, the index of its source database in a union (``Table.database``), and the names."""
        names: list[str] = []
        index: dict[str, int] = {}
        ids = np.empty(len(self.table_names), dtype=np.int32)
        for i, t in enumerate(self.table_names):
            table = self.schema.table(t)
            src = (table.database or "") if table is not None else ""
            if src not in index:
                index[src] = len(names)
                names.append(src)
            ids[i] = index[src]
        return ids, names

    @cached_property
    def table_index(self) -> dict[str, int]:
        """Table name -> its row in ``tables.parquet`` (the index of every per-table array, the
        query history's included); built once per opened version, never per request."""
        return {t: i for i, t in enumerate(self.table_names)}

    @cached_property
    def table_source(self) -> dict[str, int]:
        """Table name -> its source index in :attr:`table_sources`."""
        src_ids, _ = self.table_sources
        return {t: int(src_ids[i]) for i, t in enumerate(self.table_names)}

    @cached_property
    def source_schema_chars(self) -> np.ndarray:
        """Per source database (as in :attr:`table_sources`), the characters of its full schema
        rendered as CREATE TABLE statements: what a focused schema's share is measured against
        (``ColumnPolicy.context_share``). One rendering per opened version, not per request."""
        src_ids, names = self.table_sources
        out = np.zeros(len(names), dtype=np.int64)
        for i, t in enumerate(self.table_names):
            piece = self.ddl.get(t)
            if piece is not None:
                out[src_ids[i]] += len(assemble(piece)) + 2
        return out

    @cached_property
    def chunk_sources(self) -> np.ndarray:
        """Per chunk, its table's source index in :attr:`table_sources` (-1: no table)."""
        src_ids, _ = self.table_sources
        ct = np.asarray(self.chunk_table)
        return np.where(ct >= 0, src_ids[np.maximum(ct, 0)], -1).astype(np.int32)

    @cached_property
    def column_chunks(self) -> dict[str, np.ndarray]:
        """Lower-cased column name -> indices of that column's chunks (any table)."""
        out: dict[str, list[int]] = {}
        cols = self._chunk_columns
        for i, (ctype, col) in enumerate(zip(cols["chunk_type"], cols["column"], strict=True)):
            if ctype == "column" and col:
                out.setdefault(col.lower(), []).append(i)
        return {k: np.array(v, dtype=np.int64) for k, v in out.items()}

    @cached_property
    def table_column_chunks(self) -> dict[str, list[tuple[str, np.ndarray]]]:
        """Table -> [(exact column name, indices of that column's chunks)]."""
        out: dict[str, dict[str, list[int]]] = {}
        cols = self._chunk_columns
        for i, (ctype, table, col) in enumerate(
            zip(cols["chunk_type"], cols["table"], cols["column"], strict=True)
        ):
            if ctype != "column" or not col or table not in self.ddl:
                continue
            exact = next((c for c in self.ddl[table].columns if c.lower() == col.lower()), None)
            if exact is not None:
                out.setdefault(table, {}).setdefault(exact, []).append(i)
        return {t: [(c, np.array(ix, dtype=np.int64)) for c, ix in d.items()] for t, d in out.items()}

    @cached_property
    def column_name_tokens(self) -> dict[str, frozenset[str]]:
        """Column name -> its BM25 tokens (``"Enrollment (K-12)"`` -> {enrol, k, 12}), for name matching."""
        from schemarag.runtime.core.text_tokens import tokenize

        return {c: frozenset(tokenize(c.replace("_", " "))) for d in self.ddl.values() for c in d.columns}

    @cached_property
    def implicit_join_columns(self) -> dict[str, set[str]]:
        """Per table, id/code-named columns whose name another table of the same source also has
        (``transactions.CustomerID`` ~ ``customers.CustomerID``): undeclared join keys."""
        src_ids, _ = self.table_sources
        source = {t: int(src_ids[i]) for i, t in enumerate(self.table_names)}
        seen: dict[tuple[int, str], set[str]] = {}
        for t, d in self.ddl.items():
            for c in d.columns:
                if join_like(c):
                    seen.setdefault((source.get(t, -1), c.lower()), set()).add(t)
        out: dict[str, set[str]] = {}
        for t, d in self.ddl.items():
            for c in d.columns:
                if len(seen.get((source.get(t, -1), c.lower()), ())) > 1:
                    out.setdefault(t, set()).add(c)
        return out

    def chunk(self, i: int) -> Chunk:
        cols = self._chunk_columns
        return Chunk.from_dict({k: v[i] for k, v in cols.items()})

    @cached_property
    def dense_rows(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(row indices, their vectors)`` of the chunks that have a vector, when fewer than half
        do, else None. A warehouse built with the sparse embedding plan stores a zero row for
        every undocumented column (96% of a 120,000-column catalog's chunks); scoring only the
        real rows reads 7 MB per question instead of 190 MB. Found in blocks, so no full-size
        temporary is made."""
        emb = self.embeddings
        n = emb.shape[0]
        parts = [
            start + np.flatnonzero(np.any(np.asarray(emb[start : start + 16_384]) != 0, axis=1))
            for start in range(0, n, 16_384)
        ]
        rows = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        if rows.size * 2 >= n:
            return None
        return rows, np.ascontiguousarray(emb[rows], dtype=np.float32)

    def all_chunks(self) -> list[Chunk]:
        return [self.chunk(i) for i in range(self.n_chunks)]

    def warm(self) -> None:
        """Touch the mapped pages and compute every derived lookup, so the first request is as
        fast as the rest and requests only ever read this object (never fill it in)."""
        _ = self._chunk_columns, self.column_chunks, self.table_sources, self.table_column_chunks
        _ = self.column_name_tokens, self.implicit_join_columns, self.dense_rows
        float(np.asarray(self.embeddings).sum())
        float(np.asarray(self.bm25_data).sum())
