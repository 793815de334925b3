"""Schema hedging in one database: a large schema's near-matches leave places for a close
runner-up schema's best table."""

from __future__ import annotations

from typing import Any

import numpy as np
from tiny_support import in_memory_artifact

from schemarag.runtime.search.schema_hedge import hedge_order, table_schemas
from schemarag.runtime.search.table_ranking import RouteHedge, rank_tables_from_scores

BIG = ["acs.county", "acs.tract", "acs.state", "acs.zcta", "acs.place"]
TWO: dict[str, Any] = {
    "name": "sdoh",
    "tables": [{"name": t, "columns": [{"name": "geo_id"}]} for t in [*BIG, "sdoh.births", "sdoh.notes"]],
}
# one chunk per table: acs 0.9 .. 0.5, sdoh.births 0.6, sdoh.notes 0.1
SCORES = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.6, 0.1], dtype=np.float32)
KW: dict[str, Any] = {"budget": 4, "fk_expand": False, "family_slots": None, "route_coverage": 0.0}


def _art():
    return in_memory_artifact(TWO, [(t["name"], "table", None) for t in TWO["tables"]])


def test_schemas_are_read_from_qualified_names() -> None:
    ids, names = table_schemas(_art())
    assert names == ["acs", "sdoh"] and ids.tolist() == [0, 0, 0, 0, 0, 1, 1]


def test_a_close_runner_up_schema_gets_its_best_table_after_the_lead() -> None:
    art = _art()
    # without hedging acs takes every place
    assert rank_tables_from_scores(art, SCORES, schema_hedge=None, **KW).tables == BIG[:4]
    # schema scores: acs 0.9 + 0.5 * 0.8 = 1.3, sdoh 0.6 + 0.5 * 0.1 = 0.65 (half of acs)
    hedge = RouteHedge(ratio=0.4, lead=2, share=1, runners=2)
    assert rank_tables_from_scores(art, SCORES, schema_hedge=hedge, **KW).tables == [
        "acs.county",
        "acs.tract",
        "sdoh.births",
        "acs.state",
    ]
    strict = RouteHedge(ratio=0.6, lead=2, share=1, runners=2)  # 0.65 < 0.6 * 1.3: no hedge
    assert rank_tables_from_scores(art, SCORES, schema_hedge=strict, **KW).tables == BIG[:4]


def test_one_schema_or_a_table_already_leading_changes_nothing() -> None:
    by_score = np.arange(4)
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    one = np.zeros(4, dtype=np.int64)
    assert hedge_order(by_score, scores, one, 1, 0.1, 1, 2, 2).tolist() == [0, 1, 2, 3]
    ids = np.array([0, 1, 0, 0])  # schema 1's best is already second: inside lead = 2
    assert hedge_order(by_score, scores, ids, 2, 0.1, 2, 1, 2).tolist() == [0, 1, 2, 3]


def test_a_dbt_index_is_one_schema_its_layer_prior_orders() -> None:
    dbt = {
        "name": "shop",
        "tables": [
            {"name": "analytics.orders", "layer": "marts", "columns": [{"name": "id"}]},
            {"name": "staging.stg_orders", "layer": "staging", "columns": [{"name": "id"}]},
        ],
    }
    art = in_memory_artifact(dbt, [(t["name"], "table", None) for t in dbt["tables"]])
    ids, names = table_schemas(art)
    assert names == [""] and ids.tolist() == [0, 0]
