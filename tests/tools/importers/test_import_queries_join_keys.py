"""``import queries``: the join keys a statement logs beyond ``a.k = b.k``.

A key-less warehouse's analysts join on keys of mismatched types and paddings (``CAST(v.KUNNR AS
INT) = k.KUNNR``, ``LTRIM(p.MATNR, '0')``) and filter by semi-joins (``KUNNR IN (SELECT KUNNR
FROM VBAK)``, which Snowflake's parser reads as ``= ANY``/``<> ALL``). Each is a join edge of the
history; an equality that is no key (a ``CASE``, an aggregate, two columns in one expression)
is not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.tools.importers.query_log import import_queries
from tests.tools.importers.test_import_queries import rows, write_schema

COLUMNS = {
    "KNA1": ("KUNNR", "NAME1", "LAND1"),
    "VBAK": ("VBELN", "KUNNR", "NETWR"),
    "MARA": ("MATNR", "MTART"),
    "VBAP": ("VBELN", "POSNR", "MATNR"),
}
TABLES = [{"name": t, "columns": [{"name": c} for c in cs]} for t, cs in COLUMNS.items()]
ERP = {"name": "erp", "tables": TABLES}

KNA1_VBAK = ("KNA1", "KUNNR", "VBAK", "KUNNR")
MARA_VBAP = ("MARA", "MATNR", "VBAP", "MATNR")


def _edges(tmp_path: Path, sql: str, dialect: str) -> list[tuple[str, ...]]:
    data = write_schema(tmp_path / dialect, {**ERP, "dialect": dialect})
    log = tmp_path / f"{dialect}.jsonl"
    log.write_text(json.dumps({"sql": sql}) + "\n")
    import_queries([str(log)], db="erp", data=data)
    (row,) = rows(data, "erp")
    return [tuple(j.values()) for j in row["joins"]]


@pytest.mark.parametrize("dialect", ["snowflake", "postgres", "bigquery", "sqlite"])
@pytest.mark.parametrize(
    ("sql", "edges"),
    [
        ("select NAME1 from KNA1 where KUNNR in (select KUNNR from VBAK where NETWR > 100)", [KNA1_VBAK]),
        ("select k.NAME1 from KNA1 k where k.KUNNR not in (select v.KUNNR from VBAK v)", [KNA1_VBAK]),
        ("select k.NAME1 from KNA1 k join VBAK v on cast(v.KUNNR as int) = k.KUNNR", [KNA1_VBAK]),
        ("select p.POSNR from VBAP p join MARA m on ltrim(p.MATNR, '0') = upper(trim(m.MATNR))", [MARA_VBAP]),
        # not keys: an aggregate's value, a CASE, a sum of two columns
        ("select NAME1 from KNA1 k where k.KUNNR in (select max(v.KUNNR) from VBAK v)", []),
        ("select * from KNA1 k join VBAK v on case when v.KUNNR is null then 'x' end = k.KUNNR", []),
        ("select * from KNA1 k, VBAK v where k.KUNNR = v.KUNNR + v.NETWR", []),
    ],
)
def test_semi_joins_and_wrapped_keys_are_join_edges(
    tmp_path: Path, dialect: str, sql: str, edges: list[tuple[str, ...]]
) -> None:
    assert _edges(tmp_path, sql, dialect) == edges
