"""Schema hedging in one database: a large schema's near-matches leave places for a close
runner-up schema's best table."""

from __future__ import annotations

from typing import Any

import numpy as np
from ranking_support import rank_with
from tiny_support import in_memory_artifact

from schemarag.runtime.ranking.config import RouteHedge
from schemarag.runtime.search.schema_hedge import hedge_order, schema_prior_order, table_schemas

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
    assert rank_with(art, SCORES, schema_hedge=None, **KW).tables == BIG[:4]
    # schema scores: acs 0.9 + 0.5 * 0.8 = 1.3, sdoh 0.6 + 0.5 * 0.1 = 0.65 (half of acs)
    hedge = RouteHedge(ratio=0.4, lead=2, share=1, runners=2)
    assert rank_with(art, SCORES, schema_hedge=hedge, **KW).tables == [
        "acs.county",
        "acs.tract",
        "sdoh.births",
        "acs.state",
    ]
    strict = RouteHedge(ratio=0.6, lead=2, share=1, runners=2)  # 0.65 < 0.6 * 1.3: no hedge
    assert rank_with(art, SCORES, schema_hedge=strict, **KW).tables == BIG[:4]


def test_one_schema_or_a_table_already_leading_changes_nothing() -> None:
    by_score = np.arange(4)
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    one = np.zeros(4, dtype=np.int64)
    assert hedge_order(by_score, scores, one, 1, RouteHedge(0.1, 1, 2, 2), 0.5).tolist() == [0, 1, 2, 3]
    ids = np.array([0, 1, 0, 0])  # schema 1's best is already second: inside lead = 2
    assert hedge_order(by_score, scores, ids, 2, RouteHedge(0.1, 2, 1, 2), 0.5).tolist() == [0, 1, 2, 3]


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


def test_the_leading_schemas_lookup_comes_before_other_schemas_near_matches() -> None:
    """gsod leads; its stations lookup (0.34) comes before two other datasets' near-matches
    (0.7, 0.6) once their scores count at 0.3 (0.21, 0.18); at 1.0 nothing moves."""
    weather = {
        "name": "noaa",
        "tables": [
            {"name": t, "columns": [{"name": "id"}]}
            for t in ("gsod.gsod", "icoads.core", "storms.wind", "gsod.stations")
        ],
    }
    art = in_memory_artifact(weather, [(t["name"], "table", None) for t in weather["tables"]])
    scores = np.array([1.0, 0.7, 0.6, 0.34], dtype=np.float32)
    kw: dict[str, Any] = {**KW, "budget": 2, "schema_hedge": None}
    plain = rank_with(art, scores, schema_prior=1.0, **kw).tables
    assert plain == ["gsod.gsod", "icoads.core"]
    routed = rank_with(art, scores, schema_prior=0.3, **kw).tables
    assert routed == ["gsod.gsod", "gsod.stations"]
    # with hedging after it, a close runner-up dataset still gets its share after the lead
    hedge = RouteHedge(ratio=0.5, lead=1, share=1, runners=1)
    kw = {**kw, "budget": 3, "schema_hedge": hedge}
    both = rank_with(art, scores, schema_prior=0.3, **kw)
    assert both.tables == ["gsod.gsod", "icoads.core", "gsod.stations"]


def test_schema_prior_orders_by_the_leading_schemas_group_score() -> None:
    # schema 1 has two good tables (0.8 + 0.5 * 0.7 = 1.15) and beats schema 0's single 0.9
    by_score = np.arange(4)
    scores = np.array([0.9, 0.8, 0.7, 0.2])
    ids = np.array([0, 1, 1, 0])
    assert schema_prior_order(by_score, scores, ids, 2, 0.5, None, 0.5).tolist() == [1, 2, 0, 3]
    assert schema_prior_order(by_score, scores, ids, 2, 1.0, None, 0.5).tolist() == [0, 1, 2, 3]
    one = np.zeros(4, dtype=np.int64)
    assert schema_prior_order(by_score, scores, one, 1, 0.5, None, 0.5).tolist() == [0, 1, 2, 3]
