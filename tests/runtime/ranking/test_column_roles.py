"""Columns that answer (issue 40, item 5) and columns the query history reads (issue 38).

tests/fixtures/dbt_wide_mart is a dbt-like project whose ``shopify__orders`` mart has 26
billing/shipping name and address columns beside its keys, amounts and timestamps, no column
types, and no declared keys: label columns alone used to be its focused columns while
``total_price`` and ``created_timestamp`` were listed by name only. It is imported with the real
dbt importer and built by the real graph, once as is and once with an imported query history.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from schemarag.runtime.artifact.history import QueryHistory
from schemarag.runtime.formatting import focused_schema_levels, format_ranking
from schemarag.runtime.ranking.columns import QuestionAsks, column_role, history_columns, label_like
from schemarag.runtime.search.results import RetrievalResult
from schemarag.runtime.search.retriever import Retriever

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "dbt_wide_mart"
DB, MART = "wide_mart", "shopify__orders"
PLACED = "Which customers placed more than 5 orders?"
REVENUE = "total revenue by month"
# what analysts ran on the mart: its country and amount columns, never named by the questions
LOG = [
    {"sql": "SELECT billing_address_country, SUM(total_price) FROM shopify__orders GROUP BY 1", "count": 40},
    {"sql": "SELECT currency, COUNT(*) FROM shopify__orders GROUP BY currency", "count": 7},
]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(artifacts without a history, artifacts with one)`` of the imported wide mart."""
    from schemarag.pipelines.build import build_databases
    from schemarag.tools.importers.dbt import import_dbt
    from schemarag.tools.importers.query_log import import_queries

    base = tmp_path_factory.mktemp("wide_mart")
    import_dbt(FIXTURE, base / "data")
    plain, with_history = base / "plain", base / "history"
    assert all(r.ok for r in build_databases([DB], base / "data", plain))
    log = base / "log.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in LOG), encoding="utf-8")
    shutil.copytree(base / "data", base / "data_history")
    import_queries([str(log)], db=DB, data=base / "data_history")
    assert all(r.ok for r in build_databases([DB], base / "data_history", with_history))
    return plain, with_history


def _search(artifacts: Path, question: str, focus: str) -> RetrievalResult:
    retriever = Retriever.open(DB, artifacts=artifacts)
    retriever.refresh()
    return retriever.search(question, focus=focus)


def _labels_after(columns: list[str], lead: list[str]) -> None:
    """Every column of ``lead`` is focused and comes before the first label column."""
    assert set(lead) <= set(columns), (lead, columns)
    first_label = min(i for i, c in enumerate(columns) if label_like(c))
    assert max(columns.index(c) for c in lead) < first_label, columns


def test_roles_come_from_names_and_types_alone() -> None:
    roles = {
        ("created_timestamp", "UNKNOWN"): "time",
        ("updated_at", "TEXT"): "time",
        ("OpenDate", "DATE"): "time",
        ("Date", "TEXT"): "time",
        ("event", "TIMESTAMP_NTZ"): "time",
        ("total_price", "UNKNOWN"): "measure",
        ("Consumption", "REAL"): "measure",
        ("number_of_orders", "BIGINT"): "measure",
        ("customer_id", "UNKNOWN"): "key",
        ("CDSCode", "TEXT"): "key",
        ("billing_address_city", "UNKNOWN"): "",
        ("County", "TEXT"): "",
        ("status", "VARCHAR(20)"): "",
    }
    assert {k: column_role(*k) for k in roles} == roles


def test_what_a_question_asks() -> None:
    assert (QuestionAsks.of(REVENUE).measure, QuestionAsks.of(REVENUE).time) == (True, True)
    assert (QuestionAsks.of(PLACED).measure, QuestionAsks.of(PLACED).time) == (True, False)
    assert QuestionAsks.of("Which gas station sold the most on 2012/8/25?").time
    assert not QuestionAsks.of("List the names of the schools in Alameda").measure
    assert not QuestionAsks.of("List the names of the schools in Alameda").time


@pytest.mark.parametrize("focus", ["default", "compact"])
def test_measures_times_and_keys_the_question_points_at_are_focused_first(indexes, focus: str) -> None:
    plain, _ = indexes
    placed = _search(plain, PLACED, focus).ranking
    assert placed is not None and MART in placed.tables
    _labels_after(placed.columns[MART], ["customer_id", "order_id"])  # the keys of what it names
    revenue = _search(plain, REVENUE, focus)
    ranking = revenue.ranking
    assert ranking is not None and ranking.tables[0] == MART
    _labels_after(ranking.columns[MART], ["total_price", "created_timestamp"])
    assert {"total_price", "created_timestamp"} <= set(ranking.described[MART])
    assert not {"total_price", "created_timestamp"} & set(ranking.compact.get(MART, []))
    text, levels = focused_schema_levels(revenue.schema, revenue)
    mart = text.split(MART, 1)[1].split("\n\n", 1)[0]
    if levels[MART] == 0:  # as DDL, with the description
        assert "created_timestamp UNKNOWN, -- When the order was created." in mart
    else:  # a names line leads with the focused columns
        names = mart.split(": ", 1)[1].split(", ")
        assert names.index("total_price") < names.index("billing_address_first_name")


# ``CREATE TABLE x (`` with no column line before ``);``, or a names line with no name after ``:``
_EMPTY_DDL = re.compile(r"^CREATE [A-Z ]+ \S+ \((?: --[^\n]*)?\n\s*\);", re.MULTILINE)
_EMPTY_NAMES = re.compile(r"^-- [a-z ]+ \S+:\s*(?:\(\+\d+ more columns\))?$", re.MULTILINE)


@pytest.mark.parametrize("focus", ["default", "compact"])
def test_no_kept_table_renders_an_empty_column_list(indexes, focus: str) -> None:
    """A weak table without key or label columns (``shopify__inventory_levels`` for the revenue
    question) still shows a column: it used to render as ``CREATE TABLE x ( );``, from which a
    reader learns nothing, under a budget too (the thinnest level names the focused columns)."""
    plain, _ = indexes
    for question in (PLACED, REVENUE):
        result = _search(plain, question, focus)
        ranking = result.ranking
        assert ranking is not None and "shopify__inventory_levels" in ranking.tables
        texts = [focused_schema_levels(result.schema, result)[0]]
        texts += [format_ranking(result.schema, ranking, result.ddl, b) for b in (None, 1)]
        for text in texts:
            assert not _EMPTY_DDL.search(text), text
            assert not _EMPTY_NAMES.search(text), text
        assert all(ranking.columns[t] for t in ranking.tables), ranking.columns


def test_the_history_columns_lead_and_are_focused(indexes) -> None:
    plain, with_history = indexes
    art = Retriever.open(DB, artifacts=with_history).artifact
    assert art.history.present and not Retriever.open(DB, artifacts=plain).artifact.history.present
    used = history_columns(art, [MART])[MART]
    assert used[:2] == ["billing_address_country", "total_price"]  # most runs first
    ranking = _search(with_history, PLACED, "default").ranking
    assert ranking is not None
    columns = ranking.columns[MART]
    assert columns[: len(used)] == used, "the history's columns come first"
    assert "billing_address_country" in ranking.described[MART]  # focused: DDL with description
    before = _search(plain, PLACED, "default").ranking
    assert before is not None and "billing_address_country" not in before.columns[MART]


@pytest.mark.parametrize("focus", ["default", "compact"])
def test_without_a_history_every_output_is_what_it_was(indexes, focus: str) -> None:
    """The history is the only difference: the same version with its history emptied serves,
    byte for byte, what the version built without one serves."""
    plain, with_history = indexes
    for question in (PLACED, REVENUE):
        expected = _search(plain, question, focus)
        retriever = Retriever.open(DB, artifacts=with_history)
        emptied = replace(retriever.artifact, history=QueryHistory.empty())
        got = retriever._search(emptied, question, *_settings(retriever, focus))
        assert json.dumps(_comparable(got)) == json.dumps(_comparable(expected))
        assert focused_schema_levels(got.schema, got) == focused_schema_levels(expected.schema, expected)


def _settings(retriever: Retriever, focus: str) -> tuple:
    from schemarag.runtime.core.config import RetrievalSettings

    return RetrievalSettings.resolve(None, None), retriever._ask(None, focus, False), False, 0.0


def _comparable(result: RetrievalResult) -> dict:
    out = result.to_dict()
    out["metadata"].pop("artifact_key")
    return out
