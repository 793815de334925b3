"""A database's stored query history -> the arrays its index version carries (issue 38).

``schemarag import queries`` parsed every statement once and stored, per distinct statement, the
schema tables it reads, its equi-join edges and the columns it uses (:mod:`.query_history`).
The build only counts: :func:`build_history_arrays` turns those rows into

* per table: runs (sum of the statements' ``count``) and statements reading it;
* co-usage pairs: two tables read by one statement, with the same two counts;
* join edges: (left table, left column, right table, right column) with the two counts;
* per column: the two counts of the statements using it;
* example chunks: question + SQL where the log had a question, else the SQL with the tables it
  reads, each with its tables as a CSR list, and their BM25 index (the chunks' tokenizer and
  layout, a vocabulary of their own so a logged question's words count too), which example
  evidence scores a question against (:mod:`schemarag.runtime.ranking.history`). An example is
  indexed with the words the schema's documentation has for the coded names it reads
  (:class:`DocWords`): in a warehouse of codes (``KNA1.KUNNR``) the SQL shares no word with a
  question, the dictionary does. Those words are indexed, never shown.

Tables are row numbers of ``tables.parquet`` (the schema's table order), columns positions in
their table's column list, so the runtime memory-maps plain integer arrays and parses nothing
per request (:mod:`schemarag.runtime.artifact.history`). Names were resolved against the schema
when the log was imported; a name the current schema no longer has (the schema changed since)
is dropped and counted, with one build warning saying to import again.

Whether a database has a history decides its key: :func:`history_params` adds the history's
content hash to the key's parameters only when one exists, so an index without a history keeps
exactly the key and files it had before histories existed (docs/artifacts.md "Query history").

>>> from schemarag.runtime.core.schema import parse_schema
>>> db = parse_schema({"name": "s", "tables": [
...     {"name": "orders", "columns": [{"name": "id"}, {"name": "customer_id"}]},
...     {"name": "customers", "columns": [{"name": "id"}, {"name": "name"}]}]})
>>> counter = HistoryCounter(db)
>>> counter.add({"sql": "SELECT ...", "question": None, "count": 3, "tables": ["orders", "customers"],
...     "joins": [{"left_table": "customers", "left_column": "id",
...                "right_table": "orders", "right_column": "customer_id"}],
...     "columns": [{"table": "customers", "column": "name"}]})
>>> arrays = counter.finish()
>>> arrays.tables.tolist(), arrays.pairs.tolist(), arrays.joins.tolist()
([[3, 1], [3, 1]], [[0, 1, 3, 1]], [[0, 1, 1, 0, 3, 1]])
>>> arrays.examples["text"]
['-- tables: orders, customers\\nSELECT ...']
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.assets.lib.bm25 import build_bm25
from schemarag.assets.lib.query_history import open_queries, read_manifest
from schemarag.runtime.artifact.format import HISTORY_EXAMPLE_COLUMNS
from schemarag.runtime.core.bm25 import BM25Arrays
from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.paths import history_dir
from schemarag.runtime.core.schema import Database
from schemarag.runtime.core.text_tokens import tokenize

# Bump when the arrays computed from the same history and schema change (it is part of the key).
# 2: the examples' BM25 index (history_example_term_*). 3: examples indexed with the doc words of
# the coded names they read.
HISTORY_ARRAYS_VERSION = 3
# Of each description an example's tables and columns carry, the first DOC_WORDS tokens are
# indexed with it (its opening says what the thing is; a long description's tail says how it
# is loaded, and would let every example that reads a documented table match any question).
DOC_WORDS = 16
# A statement reading more tables than this adds no co-usage pairs (a generated union of dozens
# of tables says little about which go together, and would add n^2/2 pairs); its tables, joins,
# columns and example still count.
MAX_PAIR_TABLES = 32
_BATCH = 8_192
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass
class HistoryArrays:
    """The history part of one index version (written by :mod:`.artifact_store`)."""

    tables: np.ndarray  # int64 [tables x 2]: runs, statements
    pairs: np.ndarray  # int64 [P x 4]: table a < table b, runs, statements
    joins: np.ndarray  # int64 [J x 6]: left table, left column, right table, right column, runs, statements
    columns: np.ndarray  # int64 [C x 4]: table, column, runs, statements
    example_indptr: np.ndarray  # int64 [E + 1]
    example_tables: np.ndarray  # int32 [nnz]
    examples: dict[str, list[Any]]  # HISTORY_EXAMPLE_COLUMNS -> values, one per example
    summary: dict[str, Any] = field(default_factory=dict)  # the manifest's "history" object
    warnings: list[str] = field(default_factory=list)
    example_terms: BM25Arrays | None = None  # the examples' BM25 index (None: no example)


def history_params(data: Path, db: str, tenant: str | None) -> dict[str, Any]:
    """``{"query_history": {...}}`` for the key when ``db`` (of ``tenant``) has an imported
    history, else ``{}``: a database without one keeps the key it always had."""
    folder = history_dir(data, db, tenant)
    manifest = read_manifest(folder)
    if manifest is None:
        return {}
    digest = manifest.get("queries_sha256")
    if not isinstance(digest, str) or not _SHA256.match(digest):
        raise ImportFormatError(
            f"{folder / 'manifest.json'}: no valid queries_sha256; run schemarag import queries again"
        )
    return {"query_history": {"queries_sha256": digest, "arrays": HISTORY_ARRAYS_VERSION}}


def _index(names: list[str]) -> tuple[dict[str, int], dict[str, int]]:
    """Exact name -> position, and lower-cased name -> position for names unique in any case."""
    exact = {n: i for i, n in enumerate(names)}
    lower: dict[str, int] = {}
    clash: set[str] = set()
    for i, n in enumerate(names):
        key = n.lower()
        if key in lower:
            clash.add(key)
        lower[key] = i
    return exact, {k: v for k, v in lower.items() if k not in clash}


def _find(name: Any, index: tuple[dict[str, int], dict[str, int]]) -> int | None:
    if not isinstance(name, str):
        return None
    exact, lower = index
    hit = exact.get(name)
    return hit if hit is not None else lower.get(name.lower())


def _example_text(question: str | None, sql: str, tables: list[str]) -> str:
    if question:
        return f"{question}\n{sql}"
    return f"-- tables: {', '.join(tables)}\n{sql}"


class DocWords:
    """The words the schema's documentation has for a table or a column whose name is a code,
    each looked up once: an example is indexed with those of the tables it reads and the columns
    it uses, so a question in the dictionary's words finds the past query that read the coded
    tables it means.

    A name that shares a word with its documentation (``trip_start`` "Start time of the trip")
    already brings its words with the SQL, and adds nothing: the words stand in for codes only
    (``KUNNR`` "Customer number", ``A11`` "average salary"). A table's label is always added (an
    importer sets one only where it says more than the name); of a description, its opening.

    >>> from schemarag.runtime.core.schema import parse_schema
    >>> db = parse_schema({"name": "s", "tables": [{"name": "KNA1", "label": "customer master",
    ...     "columns": [{"name": "KUNNR", "description": "Customer number"}, {"name": "LAND1"},
    ...                 {"name": "city_name", "description": "Name of the city"}]}]})
    >>> DocWords(db).of([0], [(0, 0), (0, 1), (0, 2)])
    ['custom', 'master', 'number']
    """

    def __init__(self, database: Database, limit: int = DOC_WORDS) -> None:
        self.database = database
        self.limit = limit
        self._tables: dict[int, list[str]] = {}
        self._columns: dict[tuple[int, int], list[str]] = {}

    def _for_code(self, name: str, text: str) -> list[str]:
        """The opening of ``text`` when ``name`` shares no word with it, else nothing. Only a
        bounded prefix is tokenized, so a huge description costs what a short one does."""
        words = tokenize(text[: self.limit * 24])[: self.limit]
        return [] if set(tokenize(name)) & set(words) else words

    def table(self, t: int) -> list[str]:
        hit = self._tables.get(t)
        if hit is None:
            table = self.database.tables[t]
            label = tokenize(table.label or "")
            hit = self._tables[t] = label + self._for_code(table.name, table.description)
        return hit

    def column(self, t: int, c: int) -> list[str]:
        hit = self._columns.get((t, c))
        if hit is None:
            column = self.database.tables[t].columns[c]
            hit = self._columns[(t, c)] = self._for_code(column.name, column.description)
        return hit

    def of(self, tables: list[int], columns: Any) -> list[str]:
        """The distinct doc words of ``tables`` and ``columns`` ((table, column) positions)."""
        parts = [self.table(t) for t in tables] + [self.column(t, c) for t, c in sorted(columns)]
        return list(dict.fromkeys(itertools.chain.from_iterable(parts)))


def _sorted_rows(counts: dict[tuple[int, ...], list[int]], width: int) -> np.ndarray:
    """``{index tuple: [runs, statements]}`` as an int64 matrix sorted by the index columns."""
    if not counts:
        return np.zeros((0, width), dtype=np.int64)
    return np.array([[*k, *v] for k, v in sorted(counts.items())], dtype=np.int64).reshape(-1, width)


def example_bm25(texts: list[str], doc_words: list[list[str]] | None = None) -> BM25Arrays:
    """The BM25 index of the example chunks' ``texts`` (what example evidence matches a question
    against), each with its ``doc_words`` (:class:`DocWords`) when given: the chunks' tokenizer
    and weights, over the examples alone, so a term every logged statement shares (``select``, a
    hub table's name) weighs little and a rare one much."""
    extra = doc_words if doc_words is not None else [[] for _ in texts]
    return build_bm25([tokenize(t) + words for t, words in zip(texts, extra, strict=True)])


class HistoryCounter:
    """Counts the rows of ``queries.parquet`` (as dicts) against ``database``; :meth:`finish`."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.names = [t.name for t in database.tables]
        self._tables = _index(self.names)
        self._columns = [_index([c.name for c in t.columns]) for t in database.tables]
        self.table_counts = np.zeros((len(self.names), 2), dtype=np.int64)
        self.pairs: dict[tuple[int, ...], list[int]] = {}
        self.joins: dict[tuple[int, ...], list[int]] = {}
        self.columns: dict[tuple[int, ...], list[int]] = {}
        self.examples: dict[str, list[Any]] = {c: [] for c in HISTORY_EXAMPLE_COLUMNS}
        self.doc_words = DocWords(database)
        self.example_doc_words: list[list[str]] = []
        self.indptr = [0]
        self.example_tables: list[int] = []
        self.rows = self.runs = self.no_table = self.wide = 0
        self.dropped = {"tables": 0, "columns": 0, "joins": 0}

    def _column(self, table: Any, column: Any) -> tuple[int, int] | None:
        t = _find(table, self._tables)
        if t is None:
            return None
        c = _find(column, self._columns[t])
        return None if c is None else (t, c)

    @staticmethod
    def _bump(counts: dict[tuple[int, ...], list[int]], key: tuple[int, ...], runs: int) -> None:
        slot = counts.get(key)
        if slot is None:
            counts[key] = [runs, 1]
        else:
            slot[0] += runs
            slot[1] += 1

    def add(self, row: dict[str, Any]) -> None:
        """Count one stored statement."""
        self.rows += 1
        runs = max(1, int(row.get("count") or 1))
        self.runs += runs
        tables: list[int] = []
        for name in row.get("tables") or ():
            t = _find(name, self._tables)
            if t is None:
                self.dropped["tables"] += 1
            elif t not in tables:
                tables.append(t)
        if not tables:
            self.no_table += 1  # every table it read left the schema: nothing to count
            return
        for t in tables:
            self.table_counts[t, 0] += runs
            self.table_counts[t, 1] += 1
        ordered = sorted(tables)
        if len(ordered) > MAX_PAIR_TABLES:
            self.wide += 1
        else:
            for pair in itertools.combinations(ordered, 2):
                self._bump(self.pairs, pair, runs)
        edges: set[tuple[int, ...]] = set()
        for j in row.get("joins") or ():
            left = self._column(j.get("left_table"), j.get("left_column"))
            right = self._column(j.get("right_table"), j.get("right_column"))
            if left is None or right is None or left == right:
                self.dropped["joins"] += 1
                continue
            edges.add((*min(left, right), *max(left, right)))
        for edge in edges:
            self._bump(self.joins, edge, runs)
        used: set[tuple[int, ...]] = set()
        for c in row.get("columns") or ():
            hit = self._column(c.get("table"), c.get("column"))
            if hit is None:
                self.dropped["columns"] += 1
            else:
                used.add(hit)
        for col in used:
            self._bump(self.columns, col, runs)
        sql = str(row.get("sql") or "")
        question = row.get("question") or None
        names = [self.names[t] for t in tables]
        ident = hashlib.sha256(f"{question or ''}\x1f{sql}".encode()).hexdigest()[:20]
        values = (ident, question, sql, names, runs, _example_text(question, sql, names))
        for name, value in zip(HISTORY_EXAMPLE_COLUMNS, values, strict=True):
            self.examples[name].append(value)
        self.example_doc_words.append(self.doc_words.of(tables, used))
        self.example_tables.extend(tables)
        self.indptr.append(len(self.example_tables))

    def finish(self) -> HistoryArrays:
        counts = {
            "tables": int(np.count_nonzero(self.table_counts[:, 1])),
            "pairs": len(self.pairs),
            "joins": len(self.joins),
            "columns": len(self.columns),
            "examples": len(self.indptr) - 1,
            "questions": sum(q is not None for q in self.examples["question"]),
        }
        return HistoryArrays(
            tables=self.table_counts,
            pairs=_sorted_rows(self.pairs, 4),
            joins=_sorted_rows(self.joins, 6),
            columns=_sorted_rows(self.columns, 4),
            example_indptr=np.array(self.indptr, dtype=np.int64),
            example_tables=np.array(self.example_tables, dtype=np.int32),
            examples=self.examples,
            example_terms=example_bm25(self.examples["text"], self.example_doc_words),
            summary={
                "rows": self.rows,
                "runs": self.runs,
                "counts": counts,
                "skipped": {"no_known_table": self.no_table, "pairs_over_max_tables": self.wide},
                "dropped": dict(self.dropped),
                "max_pair_tables": MAX_PAIR_TABLES,
            },
        )


def build_history_arrays(
    folder: Path, database: Database, queries_sha256: str, schema_sha256: str | None = None
) -> HistoryArrays:
    """The arrays of the history stored in ``folder``, resolved against ``database`` (the schema
    the index is built from). ``queries_sha256`` is the hash the key was computed with: a history
    re-imported since then fails the build rather than publish arrays under another key.
    ``schema_sha256`` (of the schema file's bytes) adds a warning when the history was resolved
    against another schema."""
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("queries_sha256") != queries_sha256:
        raise ImportFormatError(
            f"{folder}: the query history changed while the index was being built; build again"
        )
    parquet = open_queries(folder)  # checks queries.parquet against the manifest
    counter = HistoryCounter(database)
    wanted = ["sql", "question", "count", "tables", "joins", "columns"]
    for batch in parquet.iter_batches(batch_size=_BATCH, columns=wanted):
        for row in batch.to_pylist():
            counter.add(row)
    arrays = counter.finish()
    arrays.summary = {
        "queries_sha256": queries_sha256,
        "arrays_version": HISTORY_ARRAYS_VERSION,
        "dialect": manifest.get("dialect"),
        "literals": manifest.get("literals"),
        "schema_sha256": manifest.get("schema_sha256"),
        **arrays.summary,
    }
    dropped = sum(arrays.summary["dropped"].values())
    if schema_sha256 and manifest.get("schema_sha256") not in (None, schema_sha256):
        arrays.warnings.append(
            f"{folder}: the query history was resolved against another version of the schema"
            + (f"; {dropped} name(s) it uses are no longer in it and were left out" if dropped else "")
            + f"; run schemarag import queries --db {database.name} --append (or import the log again)"
        )
    return arrays
