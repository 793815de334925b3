"""Focused and full schema formatting: sqlglot-valid CREATE TABLE, key columns, token budget, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.core.schema import Database
from schemarag.runtime.formatting import (
    format_focused_schema,
    format_focused_schema_tables,
    format_full_schema,
    format_ranking,
    render_schema,
)
from schemarag.runtime.search.retriever import Retriever

DOCS_MARKER = "-- Retrieved documentation"


def _ddl_part(text: str) -> str:
    return text.split(DOCS_MARKER, 1)[0]


def _creates(sql: str, dialect: str) -> dict[str, exp.Create]:
    """Parse CREATE TABLE statements back with sqlglot in the database's dialect."""
    trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    out = {}
    for tree in trees:
        assert isinstance(tree, exp.Create), tree.sql()
        out[tree.find(exp.Table).name] = tree
    return out


def _columns(create: exp.Create) -> list[str]:
    return [c.name for c in create.find_all(exp.ColumnDef)]


def _fk_targets(create: exp.Create) -> set[str]:
    return {fk.find(exp.Reference).find(exp.Table).name for fk in create.find_all(exp.ForeignKey)}


def test_focused_schema_covers_retrieved_tables_and_fk_neighbours(ecommerce: Retriever) -> None:
    db = ecommerce.schema
    res = ecommerce.search("Show me all orders from last month", top_k=2, table_budget=0)
    assert res.tables == ["orders"] and res.expanded_tables == ["users"]
    text = format_focused_schema(db, res)
    creates = _creates(_ddl_part(text), db.dialect)
    assert list(creates) == ["orders", "users"]  # retrieved first, then FK neighbours
    orders = creates["orders"]
    assert _columns(orders) == [c.name for c in db.table("orders").columns]
    assert orders.find(exp.PrimaryKey) is not None
    assert _fk_targets(orders) == {"users"}
    assert "products" not in creates


def test_focused_schema_lists_retrieved_docs_grouped_by_table(ecommerce: Retriever) -> None:
    db = ecommerce.schema
    res = ecommerce.search("Which users have placed the most orders?", top_k=6)
    text = format_focused_schema(db, res)
    assert DOCS_MARKER in text
    docs = text.split(DOCS_MARKER, 1)[1]
    for sc in res.chunks:
        assert sc.chunk.title in docs
    # grouped: all chunks of one table are contiguous, tables in the DDL order
    order = [sc.chunk.table or db.name for sc in sorted(res.chunks, key=lambda s: docs.index(s.chunk.title))]
    groups = list(dict.fromkeys(order))
    assert order == [t for g in groups for t in order if t == g]


def test_full_schema_parses_back_in_dialect_with_all_keys(ecommerce: Retriever, b2b: Retriever) -> None:
    for db in (ecommerce.schema, b2b.schema):
        creates = _creates(format_full_schema(db), db.dialect)
        assert list(creates) == [t.name for t in db.tables]
        for table in db.tables:
            create = creates[table.name]
            assert _columns(create) == [c.name for c in table.columns]
            if table.primary_key:
                pk = create.find(exp.PrimaryKey)
                assert pk is not None and [e.name for e in pk.expressions] == list(table.primary_key)
            expected_fks = {c.foreign_key.table for c in table.columns if c.foreign_key}
            assert _fk_targets(create) == expected_fks


@pytest.mark.parametrize("dialect", ["postgres", "sqlite", "duckdb", "mysql", "bigquery"])
def test_full_schema_parses_back_in_other_dialects(dialect: str) -> None:
    db = Database.model_validate(
        {
            "name": "s",
            "dialect": dialect,
            "tables": [
                {
                    "name": "users",
                    "columns": [
                        {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
                        {"name": "select", "type": "TEXT", "description": "a reserved word as a name"},
                    ],
                },
                {
                    "name": "order items",
                    "columns": [
                        {"name": "id", "type": "BIGINT", "primary_key": True, "nullable": False},
                        {
                            "name": "user_id",
                            "type": "INTEGER",
                            "foreign_key": {"table": "users", "column": "id"},
                        },
                        {"name": "price", "type": "NUMERIC(12,2)"},
                        {"name": "order", "type": "INTEGER"},
                        {"name": "user", "type": "TEXT"},
                    ],
                },
            ],
        }
    )
    text = format_full_schema(db)
    creates = _creates(text, dialect)
    assert set(creates) == {"users", "order items"}
    assert _columns(creates["users"]) == ["id", "select"]
    assert _columns(creates["order items"]) == ["id", "user_id", "price", "order", "user"]
    assert _fk_targets(creates["order items"]) == {"users"}
    assert "\n  id " in text and "\n  user_id " in text  # ordinary names stay unquoted


def test_pruned_columns_always_keep_key_columns(ecommerce: Retriever) -> None:
    db = ecommerce.schema
    text = format_focused_schema_tables(db, ["orders", "users"], columns={"orders": ["status"]})
    creates = _creates(text, db.dialect)
    assert _columns(creates["orders"]) == ["id", "user_id", "status"]  # schema order, keys kept
    assert _fk_targets(creates["orders"]) == {"users"}
    assert _columns(creates["users"]) == [c.name for c in db.table("users").columns]  # not pruned


def test_prerendered_ddl_in_artifact_matches_fresh_render(ecommerce: Retriever) -> None:
    db = ecommerce.schema
    res = ecommerce.search("Which users have placed the most orders?")
    assert format_focused_schema(db, res, ddl=ecommerce.artifact.ddl) == format_focused_schema(db, res)
    assert format_full_schema(db, ddl=ecommerce.artifact.ddl) == format_full_schema(db, ddl=render_schema(db))


def test_unknown_table_names_are_skipped(ecommerce: Retriever) -> None:
    text = format_focused_schema_tables(ecommerce.schema, ["orders", "no_such_table"])
    assert list(_creates(text, "postgres")) == ["orders"]


def test_token_budget_drops_lowest_scoring_material_first(ecommerce: Retriever) -> None:
    db = ecommerce.schema
    res = ecommerce.search("Which users have placed the most orders?", top_k=5)
    full = format_focused_schema(db, res)
    assert estimate_tokens(full) > 0
    ranked = sorted(res.chunks, key=lambda s: -s.score)
    best, worst = ranked[0], ranked[-1]
    assert worst.score < best.score
    # a budget just under the full size drops the lowest-scoring doc chunk, keeps the best
    budget = estimate_tokens(full) - 1
    cut = format_focused_schema(db, res, token_budget=budget)
    assert estimate_tokens(cut) <= budget
    assert best.chunk.title in cut
    assert f"### {worst.chunk.title} (relevance" not in cut
    # deterministic
    assert cut == format_focused_schema(db, res, token_budget=budget)


def test_token_budget_drops_docs_then_neighbours_never_retrieved_tables(ecommerce: Retriever) -> None:
    db = ecommerce.schema
    res = ecommerce.search("Show me all orders from last month", top_k=1, table_budget=0)
    assert res.tables == ["orders"] and res.expanded_tables == ["users"]
    only_orders = format_focused_schema_tables(db, ["orders"])
    tight = format_focused_schema(db, res, token_budget=estimate_tokens(only_orders))
    assert DOCS_MARKER not in tight
    assert list(_creates(tight, db.dialect)) == ["orders"]
    impossible = format_focused_schema(db, res, token_budget=1)
    assert list(_creates(_ddl_part(impossible), db.dialect)) == ["orders"]  # retrieved table kept


def test_focused_schema_for_empty_result_is_empty(ecommerce: Retriever) -> None:
    res = ecommerce.search("What is the weather in Paris today?")
    assert res.chunks == []
    assert format_focused_schema(ecommerce.schema, res).strip() == ""


def test_focused_schema_on_sqlite_chain_database(chain_artifacts: Path) -> None:
    r = Retriever.open("chain", artifacts=chain_artifacts)
    res = r.search("courier parcel tracking number", top_k=1, table_budget=0)
    text = format_focused_schema(r.schema, res)
    creates = _creates(_ddl_part(text), "sqlite")
    assert list(creates) == ["a", "b"]
    assert _fk_targets(creates["a"]) == {"b"}
    # b's FK to c is a join the prompt cannot make (c is not shown): the key column stays, the
    # constraint line goes
    assert _fk_targets(creates["b"]) == set()
    assert "c_id" in creates["b"].sql("sqlite")


def test_served_levels_are_those_of_the_served_text(b2b: Retriever) -> None:
    """A capped ranking is thinned by its own cap before any doc is added: the levels returned
    must say so (they were reported as 0 while the text showed names lines, and an evaluation
    of the served text scored columns as DDL that it showed by name only)."""
    from schemarag.runtime.formatting import focused_parts, focused_schema_levels
    from schemarag.runtime.ranking.config import ColumnPolicy

    question = "Which accounts have unpaid invoices older than 30 days?"
    for share in (0.05, 0.15, 0.3, None):
        res = b2b.search(question, table_budget=8, focus=ColumnPolicy(rest_tables="all", context_share=share))
        assert res.ranking is not None
        text, levels = focused_schema_levels(b2b.schema, res)
        assert levels == focused_parts(b2b.schema, res.ranking, b2b.artifact.ddl)[0]
        for table, level in levels.items():  # a names line exactly where the level says one is
            assert (f"-- table {table}: " in _ddl_part(text)) == (level >= 2), (share, table, level)
        if share == 0.05:
            assert max(levels.values()) >= 2, "the cap is small enough to thin a table to names"
        if share is None:
            assert set(levels.values()) == {0}


def test_a_table_focused_on_no_column_still_lists_its_columns() -> None:
    """A focus that leaves a keyless table no column (weak, no key or label column) shows its
    columns by name, never ``CREATE TABLE x ( );``, at every detail level."""
    from schemarag.runtime.search.results import TableRanking

    stock = {"name": "stock", "columns": [{"name": "sku", "type": "TEXT"}, {"name": "qty", "type": "INT"}]}
    db = Database.model_validate({"name": "s", "tables": [stock]})
    text = format_focused_schema_tables(db, ["stock"], columns={"stock": []}, described={"stock": []})
    assert text == "CREATE TABLE stock (\n  -- also: sku, qty\n);"
    ranking = TableRanking(tables=["stock"], columns={"stock": []}, described={"stock": []})
    for budget in (None, 1):  # 1: thinned to the last level, the names of the focused columns
        assert format_ranking(db, ranking, token_budget=budget).endswith("stock: sku, qty") == (budget == 1)
