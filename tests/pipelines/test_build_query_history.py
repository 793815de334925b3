"""The query history through the real asset graph: imported, built into the version, memory-mapped
by the Retriever; a database without one keeps exactly the key and files it had (issue 38)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.lib.chunking import ChunkingConfig, read_doc_bytes
from schemarag.assets.lib.inputs import build_params, built_key
from schemarag.runtime.artifact.format import (
    HISTORY_FILES,
    HISTORY_TERM_FILES,
    MANIFEST,
    compute_key,
    sha256_file,
)
from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.paths import docs_dir, history_dir, schema_path
from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.search.history_signals import example_scores
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.importers.query_log import import_queries

LOG = [
    {
        "sql": "SELECT u.full_name, o.total_amount FROM orders o JOIN users u ON o.user_id = u.id "
        "WHERE o.status = 'shipped'",
        "question": "How much did each customer spend on shipped orders?",
        "count": 5,
    },
    {"sql": "SELECT p.name FROM products p WHERE p.category = 'books'", "count": 2},
    {"sql": "SELECT count(*) FROM orders JOIN users ON users.id = orders.user_id"},
    {"sql": "DELETE FROM orders WHERE id = 1"},  # not a query: skipped by the import
]


def _import(data: Path, tmp_path: Path, lines: list[dict], append: bool = False) -> None:
    log = tmp_path / f"log-{len(lines)}-{append}.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_queries([str(log)], db="ecommerce", data=data, append=append)


def _files(version: Path) -> dict[str, str]:
    """Every file of a version but the manifest (and LanceDB's, whose bytes carry ids), by hash."""
    return {
        p.relative_to(version).as_posix(): sha256_file(p)
        for p in sorted(version.rglob("*"))
        if p.is_file() and p.name != MANIFEST and not p.relative_to(version).as_posix().startswith("lance/")
    }


def _served(artifacts: Path) -> Retriever:
    """The Retriever of ecommerce, switched to what CURRENT names now."""
    retriever = Retriever.open("ecommerce", artifacts=artifacts)
    retriever.refresh()
    return retriever


def _key_without_history(data: Path) -> str:
    """The key as it was computed before histories existed: schema bytes, docs, params, model."""
    raw = schema_path(data, "ecommerce").read_bytes()
    docs, _ = read_doc_bytes(docs_dir(data, "ecommerce"), ChunkingConfig().max_doc_bytes)
    params = build_params(ChunkingConfig(), load_schema(schema_path(data, "ecommerce")))
    return compute_key(raw, docs, params, Embedder.get().identity)


def test_history_is_built_mapped_and_keyed_only_when_present(data_copy: Path, build, tmp_path: Path) -> None:
    artifacts: Path = build.artifacts
    root = artifacts / "ecommerce"
    (plain,) = build(data_copy)
    assert plain.ok and plain.built
    assert plain.key == _key_without_history(data_copy), "no history: the key is what it always was"
    manifest = json.loads((root / plain.key / MANIFEST).read_text())
    assert "history" not in manifest and "query_history" not in manifest["params"]
    assert not (set(HISTORY_FILES) | set(HISTORY_TERM_FILES)) & set(manifest["files"])
    art = _served(artifacts).artifact
    assert not art.history.present and art.history.tables.shape == (0, 2) and art.history.n_examples == 0
    plain_files = _files(root / plain.key)

    _import(data_copy, tmp_path, LOG)
    (with_history,) = build(data_copy)
    assert with_history.ok and with_history.built and with_history.key != plain.key
    version = root / with_history.key
    manifest = json.loads((version / MANIFEST).read_text())
    stored = json.loads((history_dir(data_copy, "ecommerce") / "manifest.json").read_text())
    assert manifest["params"]["query_history"]["queries_sha256"] == stored["queries_sha256"]
    assert set(HISTORY_FILES) | set(HISTORY_TERM_FILES) <= set(manifest["files"])
    assert manifest["history"]["rows"] == 3 and manifest["history"]["runs"] == 8
    # nothing else of the version changed: retrieval reads exactly the files it read before
    files = _files(version)
    history_files = set(HISTORY_FILES) | set(HISTORY_TERM_FILES)
    assert {n: h for n, h in files.items() if n not in history_files} == plain_files

    retriever = _served(artifacts)
    art = retriever.artifact
    assert art.key == with_history.key
    h = art.history
    assert h.present
    t = {name: i for i, name in enumerate(art.table_names)}
    col = {name: {c: j for j, c in enumerate(art.ddl[name].columns)} for name in art.table_names}
    users, orders, products = t["users"], t["orders"], t["products"]
    assert isinstance(h.tables, np.ndarray) and h.tables.dtype == np.int64
    assert h.tables.shape == (len(art.table_names), 2)
    assert h.tables[orders].tolist() == [6, 2] and h.tables[users].tolist() == [6, 2]
    assert h.tables[products].tolist() == [2, 1]
    assert h.pairs.tolist() == [[min(users, orders), max(users, orders), 6, 2]]
    left, right = sorted([(users, col["users"]["id"]), (orders, col["orders"]["user_id"])])
    assert h.joins.tolist() == [[*left, *right, 6, 2]]
    used = {
        (art.table_names[r[0]], art.ddl[art.table_names[r[0]]].columns[r[1]]): r[2:].tolist()
        for r in h.columns
    }
    assert used[("orders", "user_id")] == [6, 2] and used[("users", "full_name")] == [5, 1]
    assert used[("products", "category")] == [2, 1]
    assert h.n_examples == 3
    assert h.examples["question"] == ["How much did each customer spend on shipped orders?", None, None]
    first, second = h.examples["text"][:2]
    assert first.startswith("How much did each customer spend on shipped orders?\nSELECT")
    assert "'shipped'" not in first, "literals stay placeholders"
    assert second.startswith("-- tables: products\nSELECT")
    assert sorted(art.table_names[i] for i in h.example_table_indices(0)) == ["orders", "users"]
    assert h.examples["runs"] == [5, 2, 1]
    assert retriever.search("customer spend on shipped orders").chunks

    # unchanged history: no rebuild, and `schemarag build`'s fast check agrees on the key
    (again,) = build(data_copy)
    assert again.ok and not again.built and again.key == with_history.key
    assert built_key(data_copy, "ecommerce", Embedder.get().identity, artifacts) == (with_history.key, root)

    # a changed history: a new key and new counts
    _import(data_copy, tmp_path, [{"sql": "SELECT o.status FROM orders o", "count": 4}], append=True)
    (changed,) = build(data_copy)
    assert changed.ok and changed.built and changed.key not in (plain.key, with_history.key)
    h = _served(artifacts).artifact.history
    assert h.tables[orders].tolist() == [10, 3] and h.n_examples == 4

    # a history that does not match its manifest fails the build that needs it, naming the file;
    # CURRENT stays (the key trusts the manifest's hash: an unchanged manifest is a no-op)
    _import(data_copy, tmp_path, [{"sql": "SELECT u.email FROM users u"}], append=True)
    with (history_dir(data_copy, "ecommerce") / "queries.parquet").open("ab") as fh:
        fh.write(b"x")
    (broken,) = build(data_copy)
    assert not broken.ok and "queries.parquet: does not match its manifest" in broken.error
    assert read_current(root) == changed.key

    # the history removed: back to the plain key, the very version built first
    shutil.rmtree(history_dir(data_copy, "ecommerce"))
    (back,) = build(data_copy)
    assert back.ok and back.key == plain.key and not back.built
    assert _files(root / back.key) == plain_files


CODED_ERP = {
    "name": "erp",
    "dialect": "postgres",
    "tables": [
        {
            "name": "KNA1",
            "label": "customer master",
            "columns": [
                {"name": "KUNNR", "description": "Customer number"},
                {"name": "ORT01", "description": "City of the customer"},
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
        {
            "name": "VBAP",
            "description": "Sales document item",
            "columns": [
                {"name": "VBELN", "description": "Sales document number"},
                {"name": "NETWR", "description": "Net value of the item"},
            ],
        },
        {"name": "T005", "columns": [{"name": "LAND1", "description": "Country key"}]},
    ],
}


def test_a_coded_warehouses_examples_are_indexed_with_its_dictionarys_words(build, tmp_path: Path) -> None:
    """SQL-only history over coded names: the built version's example index holds the words the
    schema documents for what each statement reads, so a question in those words finds the
    statement that joined the coded tables; the example shown is still the SQL alone."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "erp.json").write_text(json.dumps(CODED_ERP))
    log = tmp_path / "erp.jsonl"
    joined = (
        "SELECT k.ORT01, sum(p.NETWR) FROM VBAP p JOIN VBAK h ON h.VBELN = p.VBELN "
        "JOIN KNA1 k ON k.KUNNR = h.KUNNR GROUP BY k.ORT01"
    )
    log.write_text("".join(json.dumps({"sql": s}) + "\n" for s in (joined, "SELECT LAND1 FROM T005")))
    import_queries([str(log)], db="erp", data=data)
    (report,) = build(data, ("erp",))
    assert report.ok and report.built
    retriever = Retriever.open("erp", artifacts=build.artifacts)
    art = retriever.artifact
    scores = example_scores(art, "Net value of sales by city of the customer")
    assert scores[0] > 0 and scores[1] == 0, "the dictionary's words find the statement that joined them"
    assert sorted(art.table_names[i] for i in art.history.example_table_indices(0)) == [
        "KNA1",
        "VBAK",
        "VBAP",
    ]
    assert "city" not in art.history.examples["text"][0].lower(), "indexed, never shown"
