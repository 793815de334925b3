"""The query history's arrays without Dagster: counting, the key's history part (tenant-scoped,
absent without a history), a schema changed since the import, and the reader's checks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from schemarag.assets.lib.artifact_store import _history_arrays, _write_history_examples
from schemarag.assets.lib.history_arrays import (
    HISTORY_ARRAYS_VERSION,
    MAX_PAIR_TABLES,
    HistoryCounter,
    build_history_arrays,
    history_params,
)
from schemarag.assets.lib.inputs import built_key, read_sources
from schemarag.runtime.artifact.format import (
    HISTORY_EXAMPLES,
    HISTORY_FILES,
    HISTORY_JOINS,
    HISTORY_TERM_FILES,
    file_checksums,
)
from schemarag.runtime.artifact.history import read_history
from schemarag.runtime.artifact.manifest import Manifest
from schemarag.runtime.core.errors import ArtifactError, ImportFormatError
from schemarag.runtime.core.paths import history_dir
from schemarag.runtime.core.schema import parse_schema
from schemarag.tools.importers.query_log import import_queries

MODEL = {"name": "m", "onnx_sha256": "0" * 64, "dimension": 4}
SCHEMA = {
    "name": "wh",
    "dialect": "postgres",
    "tables": [
        {"name": "users", "columns": [{"name": "id", "primary_key": True}, {"name": "email"}]},
        {"name": "orders", "columns": [{"name": "id"}, {"name": "user_id"}, {"name": "amount"}]},
        {"name": "refunds", "columns": [{"name": "order_id"}, {"name": "amount"}]},
    ],
}
JOIN = "SELECT u.email, o.amount FROM orders o JOIN users u ON u.id = o.user_id"


def _write(data: Path, schema: dict = SCHEMA) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "wh.json").write_text(json.dumps(schema), encoding="utf-8")


def _import(data: Path, tmp_path: Path, statements: list[str], tenant: str | None = None) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({"sql": s}) + "\n" for s in statements))
    import_queries([str(log)], db="wh", data=data, tenant=tenant)


def test_no_history_adds_nothing_to_the_key_and_a_history_adds_its_hash(tmp_path: Path) -> None:
    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    _write(data)
    plain = read_sources(data, "wh", MODEL, artifacts)
    assert history_params(data, "wh", None) == {} and "query_history" not in plain.params
    assert plain.history is None and "query_history" not in plain.inputs

    _import(data, tmp_path, [JOIN], tenant="acme")  # another tenant's history: not this build's
    assert read_sources(data, "wh", MODEL, artifacts).key == plain.key
    acme = read_sources(data, "wh", MODEL, artifacts, tenant="acme")
    assert acme.history == history_dir(data, "wh", "acme") and acme.key != plain.key

    _import(data, tmp_path, [JOIN])
    snap = read_sources(data, "wh", MODEL, artifacts)
    stored = json.loads((history_dir(data, "wh") / "manifest.json").read_text())
    assert snap.params["query_history"] == {
        "queries_sha256": stored["queries_sha256"],
        "arrays": HISTORY_ARRAYS_VERSION,
    }
    assert snap.key != plain.key and snap.root != acme.root
    assert snap.key == acme.key, "content-addressed: the same log gives the same key, in each namespace"
    (snap.root / snap.key).mkdir(parents=True)
    (snap.root / snap.key / "manifest.json").write_text("{}")
    assert built_key(data, "wh", MODEL, artifacts) == (snap.key, snap.root), "the fast check agrees"

    _import(data, tmp_path, [JOIN, "SELECT id FROM refunds r JOIN orders o ON o.id = r.order_id"])
    assert read_sources(data, "wh", MODEL, artifacts).key != snap.key


def test_counts_and_a_schema_changed_since_the_import(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _write(data)
    _import(data, tmp_path, [JOIN, JOIN + " WHERE o.amount > 3", "SELECT * FROM refunds"])
    snap = read_sources(data, "wh", MODEL, tmp_path / "artifacts")
    sha = snap.params["query_history"]["queries_sha256"]
    arrays = build_history_arrays(snap.history, snap.database, sha, snap.inputs["schema"]["sha256"])
    assert arrays.tables.tolist() == [[2, 2], [2, 2], [1, 1]] and not arrays.warnings
    assert arrays.pairs.tolist() == [[0, 1, 2, 2]]
    assert arrays.joins.tolist() == [[0, 0, 1, 1, 2, 2]]  # users.id = orders.user_id
    assert arrays.example_indptr.tolist() == [0, 2, 4, 5]

    # the schema loses refunds and users.email after the import: names dropped, one warning
    smaller = dict(SCHEMA, tables=[{"name": "users", "columns": [{"name": "id"}]}, SCHEMA["tables"][1]])
    _write(data, smaller)
    snap = read_sources(data, "wh", MODEL, tmp_path / "artifacts")
    arrays = build_history_arrays(snap.history, snap.database, sha, snap.inputs["schema"]["sha256"])
    assert arrays.tables.tolist() == [[2, 2], [2, 2]]
    assert arrays.summary["dropped"]["tables"] == 1 and arrays.summary["dropped"]["columns"] == 2
    assert arrays.summary["skipped"]["no_known_table"] == 1 and arrays.summary["counts"]["examples"] == 2
    (warning,) = arrays.warnings
    assert "another version of the schema" in warning and "--append" in warning

    with pytest.raises(ImportFormatError, match="changed while the index was being built"):
        build_history_arrays(snap.history, snap.database, "f" * 64)


def test_a_statement_over_many_tables_adds_no_pairs() -> None:
    names = [f"t{i}" for i in range(MAX_PAIR_TABLES + 1)]
    db = parse_schema({"name": "w", "tables": [{"name": n, "columns": [{"name": "id"}]} for n in names]})
    counter = HistoryCounter(db)
    counter.add({"sql": "SELECT 1", "count": 1, "tables": names})
    counter.add({"sql": "SELECT 2", "count": 1, "tables": names[:3]})
    arrays = counter.finish()
    assert arrays.pairs[:, :2].tolist() == [[0, 1], [0, 2], [1, 2]]
    assert arrays.summary["skipped"]["pairs_over_max_tables"] == 1
    assert arrays.tables[:, 1].sum() == len(names) + 3


def _version(tmp_path: Path, arrays) -> tuple[Path, Manifest]:
    folder = tmp_path / "version"
    folder.mkdir(exist_ok=True)
    for name, arr in _history_arrays(arrays).items():
        np.save(folder / name, arr, allow_pickle=False)
    _write_history_examples(arrays, folder)
    manifest = {
        "format_version": 5,
        "key": "0" * 16,
        "database": "w",
        "model": MODEL,
        "counts": {"chunks": 0, "tables": 2},
        "files": file_checksums(folder),
        "history": {"rows": 1},
    }
    return folder, Manifest.model_validate(manifest)


def test_reader_maps_the_arrays_and_refuses_indices_outside_the_schema(tmp_path: Path) -> None:
    db = parse_schema(SCHEMA)
    counter = HistoryCounter(db)
    counter.add(
        {
            "sql": JOIN,
            "question": "emails of buyers",
            "count": 2,
            "tables": ["orders", "users"],
            "joins": [
                {
                    "left_table": "orders",
                    "left_column": "user_id",
                    "right_table": "users",
                    "right_column": "id",
                }
            ],
            "columns": [{"table": "users", "column": "email"}],
        }
    )
    folder, info = _version(tmp_path, counter.finish())
    widths = [len(t.columns) for t in db.tables]
    history = read_history(folder, info, widths)
    assert history.present and history.summary == {"rows": 1}
    assert history.tables.tolist() == [[2, 1], [2, 1], [0, 0]]
    assert history.joins.tolist() == [[0, 0, 1, 1, 2, 1]] and history.columns.tolist() == [[0, 1, 2, 1]]
    assert history.examples["text"] == [f"emails of buyers\n{JOIN}"]
    assert history.example_table_indices(0).tolist() == [1, 0]

    with pytest.raises(ArtifactError, match="3 rows for 2 tables"):
        read_history(folder, info, widths[:2])
    bad = np.array([[0, 0, 1, 7, 2, 1]], dtype=np.int64)  # orders has no 8th column
    np.save(folder / HISTORY_JOINS, bad, allow_pickle=False)
    with pytest.raises(ArtifactError, match="outside the schema"):
        read_history(folder, info, widths)
    partial = info.model_copy(
        update={"files": {k: v for k, v in info.files.items() if k != HISTORY_EXAMPLES}}
    )
    with pytest.raises(ArtifactError, match=r"lacks history_examples\.parquet"):
        read_history(folder, partial, widths)
    assert set(HISTORY_FILES) | set(HISTORY_TERM_FILES) == set(info.files)


def test_the_examples_bm25_index_round_trips_and_a_version_without_it_scores_nothing(tmp_path: Path) -> None:
    from schemarag.runtime.search.history_signals import example_scores

    db = parse_schema(SCHEMA)
    counter = HistoryCounter(db)
    counter.add({"sql": JOIN, "question": "emails of buyers", "count": 1, "tables": ["orders", "users"]})
    counter.add({"sql": "SELECT id FROM orders", "count": 1, "tables": ["orders"]})
    arrays = counter.finish()
    assert arrays.example_terms is not None and "buyer" in arrays.example_terms.vocab
    folder, info = _version(tmp_path, arrays)
    assert set(HISTORY_TERM_FILES) <= set(info.files)
    widths = [len(t.columns) for t in db.tables]
    history = read_history(folder, info, widths)
    art = type("Art", (), {"history": history})()
    scores = example_scores(art, "Which buyers have emails?")
    assert scores[0] > 0 and scores[1] == 0, "the logged question's words find its example"
    old = info.model_copy(
        update={"files": {k: v for k, v in info.files.items() if k not in HISTORY_TERM_FILES}}
    )
    before = read_history(folder, old, widths)
    assert not before.example_vocab
    assert example_scores(type("Art", (), {"history": before})(), "Which buyers?").tolist() == [0.0, 0.0]
    one_missing = info.model_copy(
        update={"files": {k: v for k, v in info.files.items() if k != HISTORY_TERM_FILES[0]}}
    )
    with pytest.raises(ArtifactError, match="lacks history_example_term_indptr"):
        read_history(folder, one_missing, widths)


CODED = {
    "name": "erp",
    "tables": [
        {
            "name": "KNA1",
            "label": "customer master",
            "columns": [
                {"name": "KUNNR", "description": "Customer number"},
                {"name": "ORT01", "description": "City where the customer is located " + "filler " * 500},
            ],
        },
        {
            "name": "VBAK",
            "description": "Sales document header",
            "columns": [
                {"name": "VBELN", "description": "Sales document number"},
                {"name": "KUNNR", "description": "Sold-to party"},
            ],
        },
        {"name": "T005", "columns": [{"name": "LAND1", "description": "Country key"}]},
    ],
}


def test_an_example_is_found_by_the_dictionarys_words_for_what_it_reads_never_shown() -> None:
    """Coded names: the SQL shares no word with the question; the labels and descriptions of
    the tables it reads and the columns it uses do, and are indexed (not stored in its text)."""
    from schemarag.runtime.core.bm25 import score
    from schemarag.runtime.core.text_tokens import tokenize

    counter = HistoryCounter(parse_schema(CODED))
    sql = "SELECT k.ORT01, count(*) FROM VBAK v JOIN KNA1 k ON k.KUNNR = v.KUNNR GROUP BY 1"
    counter.add(
        {
            "sql": sql,
            "count": 1,
            "tables": ["VBAK", "KNA1"],
            "columns": [
                {"table": "KNA1", "column": "ORT01"},
                {"table": "KNA1", "column": "KUNNR"},
                {"table": "VBAK", "column": "KUNNR"},
            ],
        }
    )
    counter.add(
        {
            "sql": "SELECT LAND1 FROM T005",
            "count": 1,
            "tables": ["T005"],
            "columns": [{"table": "T005", "column": "LAND1"}],
        }
    )
    arrays = counter.finish()
    terms = arrays.example_terms
    assert terms is not None
    ids = [terms.vocab[t] for t in tokenize("sales orders per customer city") if t in terms.vocab]
    scores = score(terms.indptr, terms.indices, terms.data, 2, ids)
    assert scores[0] > 0 and scores[1] == 0, "the dictionary's words find the query that read them"
    assert "custom" not in tokenize(arrays.examples["text"][0]), "the words are indexed, never shown"
    assert arrays.examples["text"][0].endswith(sql)


def test_doc_words_take_the_opening_of_a_long_description_only() -> None:
    from schemarag.assets.lib.history_arrays import DOC_WORDS, DocWords

    words = DocWords(parse_schema(CODED))
    assert words.column(0, 1) == ["citi", "custom", "locat"] + ["filler"] * (DOC_WORDS - 3)
    assert words.table(0) == ["custom", "master"] and words.table(1) == ["sale", "document", "header"]
    assert words.of([0], [(0, 1)]) == ["custom", "master", "citi", "locat", "filler"], "distinct"
    assert words.of([2], [(2, 0)]) == ["countri", "key"], "a table with no label or description adds none"
