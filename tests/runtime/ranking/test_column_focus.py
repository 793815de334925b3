"""Column focus, adaptive budget, join-path completion and union routing on real artifacts."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from ranking_support import rank_with, route_with, table_scores
from retrieval_support import build

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.formatting import DETAIL_LEVELS, focused_parts, format_full_schema, format_ranking
from schemarag.runtime.ranking.budget import complete_join_paths
from schemarag.runtime.ranking.config import COMPACT_COLUMN_POLICY, AdaptiveBudget, ColumnPolicy
from schemarag.runtime.search.join_graph import join_edges
from schemarag.runtime.search.retriever import Retriever

QUESTION = "Which accounts have unpaid invoices older than 30 days?"


def _rank(r: Retriever, budget: int = 6, **kw):
    rel, _, _ = r.score_chunks(QUESTION)
    return rank_with(r.artifact, rel, budget, question=QUESTION, **kw)


def test_every_column_of_a_listed_table_is_shown_once(b2b: Retriever) -> None:
    ranking = _rank(b2b, policy=ColumnPolicy(rest_tables="all"))
    for table in ranking.tables:
        full = list(b2b.artifact.ddl[table].columns)
        shown, compact = ranking.columns[table], ranking.compact[table]
        assert not set(shown) & set(compact)
        assert sorted(shown + compact) == sorted(full)  # DDL or by name: nothing is lost
    none = _rank(b2b, policy=ColumnPolicy(rest_tables="none"))
    assert none.compact == {} and none.tables == ranking.tables


def test_compact_names_are_rendered_and_cheaper_than_ddl(b2b: Retriever) -> None:
    ranking = _rank(b2b, policy=ColumnPolicy(rest_tables="all"))
    text = format_ranking(b2b.schema, ranking, b2b.artifact.ddl)
    table = next(t for t in ranking.tables if ranking.compact[t])
    block = text.split(f"CREATE TABLE {table} (", 1)[1].split(");", 1)[0]
    also = re.search(r"-- also: (.*)", block)
    assert also is not None and also.group(1).split(", ") == ranking.compact[table]
    listed = format_ranking(b2b.schema, ranking, b2b.artifact.ddl)
    as_ddl = _rank(b2b, policy=ColumnPolicy(rest_tables="none"))
    as_ddl.columns = {t: list(b2b.artifact.ddl[t].columns) for t in as_ddl.tables}  # everything as DDL
    assert estimate_tokens(listed) < estimate_tokens(format_ranking(b2b.schema, as_ddl, b2b.artifact.ddl))


def test_token_budget_thins_tables_but_never_drops_one(b2b: Retriever) -> None:
    ranking = _rank(b2b, budget=8, policy=ColumnPolicy(rest_tables="all"))
    ddl = b2b.artifact.ddl
    sizes = []
    for budget in (None, 600, 300, 150, 10):
        text = format_ranking(b2b.schema, ranking, ddl, token_budget=budget)
        for table in ranking.tables:  # each table is still there, as DDL or as a names line
            assert f"CREATE TABLE {table} (" in text or f"-- table {table}: " in text
        sizes.append(estimate_tokens(text))
        if budget is not None and budget >= 300:
            assert sizes[-1] <= budget
        # thinning goes bottom-up: once a table is down to names, every table below it is too
        names_only = [f"-- table {t}: " in text for t in ranking.tables]
        assert names_only == sorted(names_only)
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0]
    assert f"-- table {ranking.tables[-1]}: " in format_ranking(b2b.schema, ranking, ddl, token_budget=10)


def test_context_share_thins_to_names_lowest_ranked_first(b2b: Retriever) -> None:
    art = b2b.artifact
    full_tokens = estimate_tokens(format_full_schema(b2b.schema, ddl=art.ddl))
    open_ended = _rank(b2b, budget=8, policy=ColumnPolicy(rest_tables="all"))
    assert open_ended.token_budget is None
    sizes = [estimate_tokens(format_ranking(b2b.schema, open_ended, art.ddl))]
    for share in (0.8, 0.4, 0.2, 0.01):
        ranking = _rank(b2b, budget=8, policy=ColumnPolicy(rest_tables="all", context_share=share))
        assert ranking.tables == open_ended.tables and ranking.columns == open_ended.columns
        assert ranking.token_budget == pytest.approx(share * full_tokens, rel=0.05)  # of the full schema
        levels, parts = focused_parts(b2b.schema, ranking, art.ddl)
        text = format_ranking(b2b.schema, ranking, art.ddl)
        assert text == "\n\n".join(parts.values()) and list(parts) == ranking.tables
        sizes.append(estimate_tokens(text))
        if min(levels.values()) < DETAIL_LEVELS - 1:  # not yet at the floor: the cap holds
            assert sizes[-1] <= ranking.token_budget
        order = [levels[t] for t in ranking.tables]
        assert order == sorted(order)  # the best tables keep the most detail
        for t, level in levels.items():
            if level == 2:  # a names line still names every column level 0 showed
                names = parts[t].split(": ", 1)[1].split(", ")
                expected = set(ranking.columns[t]) | set(art.ddl[t].key_columns) | set(ranking.compact[t])
                assert {n.strip('"') for n in names} == expected
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0]
    compact = b2b.rank_tables(QUESTION, 8, policy=COMPACT_COLUMN_POLICY)  # the public door
    default = b2b.rank_tables(QUESTION, 8)
    default_tokens = estimate_tokens(format_ranking(b2b.schema, default, art.ddl))
    # 30 % of the full schema, and never more than the default focus of the same tables
    assert compact.token_budget <= default_tokens
    assert compact.token_budget == default_tokens or compact.token_budget == pytest.approx(
        0.3 * full_tokens, rel=0.05
    )
    # a caller's token budget and the share cap: the smaller one wins
    capped = _rank(b2b, budget=8, policy=ColumnPolicy(rest_tables="all", context_share=0.8))
    assert format_ranking(b2b.schema, capped, art.ddl, token_budget=10**6) == format_ranking(
        b2b.schema, capped, art.ddl
    )


def test_confidence_keeps_fewer_tables_as_it_rises(b2b: Retriever) -> None:
    fixed = _rank(b2b, budget=10)
    counts = [len(_rank(b2b, budget=10, adaptive=AdaptiveBudget(c)).tables) for c in (0.0, 0.5, 0.9, 1.0)]
    assert counts[0] == len(fixed.tables)
    assert counts == sorted(counts, reverse=True) and counts[-1] >= 1


def test_join_paths_bring_the_bridge_table(chain_artifacts: Path) -> None:
    graph = join_edges(Retriever.open("chain", artifacts=chain_artifacts).artifact)
    assert complete_join_paths(graph, ["a", "c"], 5, 3) == ["a", "c", "b"]
    assert complete_join_paths(graph, ["a", "b", "c"], 5, 3) == ["a", "b", "c"]  # already joined
    assert complete_join_paths(graph, ["a", "c"], 2, 3) == ["a", "c"]  # the budget still holds


def _table(name: str, database: str, words: str) -> dict:
    cols = [{"name": "id", "type": "INTEGER", "primary_key": True}, {"name": "note", "description": words}]
    return {"name": name, "database": database, "description": words, "columns": cols}


def test_union_routes_by_database_field_not_by_double_underscore(tmp_path: Path) -> None:
    """dbt names (``stg_stripe__charges``) carry ``__``; membership comes from ``database``."""
    schema = {
        "name": "pool",
        "dialect": "sqlite",
        "tables": [
            _table("stg_stripe__charges", "payments", "card charges captured by stripe"),
            _table("stg_stripe__refunds", "payments", "refunds of card charges"),
            _table("stg_hr__employees", "people", "employees and their salaries"),
        ],
    }
    data = tmp_path / "schemas"
    data.mkdir()
    (data / "pool.json").write_text(json.dumps(schema), encoding="utf-8")
    build(["pool"], data, tmp_path / "artifacts")
    art = Retriever.open("pool", artifacts=tmp_path / "artifacts").artifact
    assert art.manifest["databases"] == ["payments", "people"]  # membership, recorded in the manifest
    ids, names = art.table_sources
    by_table = {t: names[i] for t, i in zip(art.table_names, ids.tolist(), strict=True)}
    assert by_table == {
        "stg_stripe__charges": "payments",
        "stg_stripe__refunds": "payments",
        "stg_hr__employees": "people",
    }
    rel = np.zeros(art.n_chunks, dtype=np.float32)
    rel[art.chunk_table == art.table_names.index("stg_stripe__refunds")] = 0.9
    order = [art.table_names[i] for i in route_with(art, table_scores(art, rel))[0].tolist()]
    assert set(order[:2]) == {"stg_stripe__refunds", "stg_stripe__charges"}  # same database first


@pytest.mark.parametrize("bad", [0.0, 1.0])
def test_confidence_bounds_keep_at_least_the_best_table(b2b: Retriever, bad: float) -> None:
    ranking = _rank(b2b, budget=3, adaptive=AdaptiveBudget(bad))
    assert 1 <= len(ranking.tables) <= 3
