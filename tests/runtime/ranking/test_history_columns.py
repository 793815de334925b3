"""What a kept table shows when its names say nothing (issue 38): the columns the query history
joins it on with another kept table are shown as keys are, and a weak table shows the column
analysts read most besides them.

An ERP-like, key-less schema with coded names: sales orders ``VBAK`` (customer ``KUNNR``),
customers ``KNA1`` (country ``LAND1``), country names ``T005T``. No column name is key- or
label-like, so without a history a weak table shows only its best-scoring column.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from tiny_support import in_memory_artifact

from schemarag.runtime.artifact.history import QueryHistory
from schemarag.runtime.ranking.columns import history_join_columns, select_columns
from schemarag.runtime.ranking.config import DEFAULT_COLUMN_POLICY

SCHEMA: dict[str, Any] = {
    "name": "erp",
    "tables": [
        {
            "name": "KNA1",
            "columns": [{"name": "KUNNR"}, {"name": "LAND1"}, {"name": "ORT01"}, {"name": "STRAS"}],
        },
        {"name": "T005T", "columns": [{"name": "LAND1"}, {"name": "LANDX"}, {"name": "SPRAS"}]},
        {"name": "VBAK", "columns": [{"name": "VBELN"}, {"name": "KUNNR"}, {"name": "NETWR"}]},
    ],
}
TABLES = ["VBAK", "KNA1", "T005T"]  # ranked: the orders first, the lookups weak behind them


def _history() -> QueryHistory:
    """Statements join VBAK.KUNNR = KNA1.KUNNR and KNA1.LAND1 = T005T.LAND1, and read
    T005T.LANDX (the country's name) more than anything of T005T but its key."""
    return replace(
        QueryHistory.empty(),
        tables=np.array([[9, 9], [5, 5], [9, 9]], dtype=np.int64),
        pairs=np.array([[0, 1, 4, 4], [0, 2, 5, 5], [1, 2, 4, 4]], dtype=np.int64),
        joins=np.array([[2, 1, 0, 0, 5, 5], [0, 1, 1, 0, 4, 4]], dtype=np.int64),
        # table, column position, runs, statements; sorted by (table, column)
        columns=np.array(
            [
                [0, 0, 5, 5],
                [0, 1, 4, 4],
                [1, 0, 4, 4],
                [1, 1, 3, 3],
                [1, 2, 1, 1],
                [2, 0, 9, 9],
                [2, 1, 5, 5],
            ],
            dtype=np.int64,
        ),
        summary={"present": True},
    )


CHUNKS = [(t["name"], "column", c["name"]) for t in SCHEMA["tables"] for c in t["columns"]]


def _art(with_history: bool) -> Any:
    art = in_memory_artifact(SCHEMA, CHUNKS)
    return replace(art, history=_history()) if with_history else art


def _shown(art: Any, tables: list[str] = TABLES, **policy: Any) -> dict[str, list[str]]:
    # every column scores a little; the lookups' best-scoring columns are not the ones SQL needs
    best = {("VBAK", "NETWR"): 0.9, ("KNA1", "STRAS"): 0.3, ("T005T", "SPRAS"): 0.3}
    rel = np.array([best.get((t, c), 0.1) for t, _, c in CHUNKS], dtype=np.float32)
    scores = {"VBAK": 1.0, "KNA1": 0.2, "T005T": 0.1}
    shown, _, _ = select_columns(
        art, rel, tables, {t: scores[t] for t in tables}, "", replace(DEFAULT_COLUMN_POLICY, **policy)
    )
    return {t: sorted(cols) for t, cols in shown.items()}


def test_logged_join_keys_and_the_most_read_lookup_column_are_shown() -> None:
    shown = _shown(_art(True))
    assert shown["KNA1"] == ["KUNNR", "LAND1"]  # joined with VBAK and with T005T
    assert shown["T005T"] == ["LAND1", "LANDX"]  # its join key, and the name analysts read
    assert {"KUNNR", "NETWR"} <= set(shown["VBAK"])


def test_without_them_a_weak_coded_table_shows_only_its_best_scoring_column() -> None:
    off = _shown(_art(True), history_keys=False, history_weak=0)
    assert off["KNA1"] == ["STRAS"] and off["T005T"] == ["SPRAS"]
    assert _shown(_art(False)) == off  # and without a history both knobs are inert


def test_only_joins_between_kept_tables_make_keys() -> None:
    art = _art(True)
    assert history_join_columns(art, ["KNA1", "VBAK"]) == {"KNA1": {"KUNNR"}, "VBAK": {"KUNNR"}}
    # its join with T005T, which was not kept, is no key (with history_weak it is still the most
    # read column besides its key)
    assert _shown(art, ["VBAK", "KNA1"], history_weak=0)["KNA1"] == ["KUNNR"]
    assert _shown(art, ["VBAK", "KNA1"])["KNA1"] == ["KUNNR", "LAND1"]
    assert history_join_columns(_art(False), TABLES) == {}
