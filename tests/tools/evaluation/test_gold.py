"""Gold tables and columns from SQL: aliases, subqueries, CTEs, quoting, unions, junk."""

from __future__ import annotations

import pytest

from schemarag.runtime.core.schema import Database
from schemarag.tools.evaluation.gold import SchemaView, gold_from_sql

SCHEMA = {
    "name": "school",
    "dialect": "sqlite",
    "tables": [
        {"name": "frpm", "columns": [{"name": "CDSCode"}, {"name": "County Name"},
                                     {"name": "Free Meal Count (K-12)"}, {"name": "Enrollment (K-12)"}]},
        {"name": "Schools", "columns": [{"name": "CDSCode"}, {"name": "City"}, {"name": "Phone"}]},
        {"name": "sat scores", "columns": [{"name": "cds"}, {"name": "AvgScrMath"}]},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def view() -> SchemaView:
    return SchemaView(Database.model_validate(SCHEMA))


CASES = [
    # (sql, tables, columns)
    (
        "SELECT T2.City FROM frpm AS T1 JOIN schools t2 ON T1.CDSCode = T2.cdscode "
        "WHERE T1.`County Name` = 'X'",
        ["frpm", "Schools"],
        {"frpm": ["CDSCode", "County Name"], "Schools": ["CDSCode", "City"]},
    ),
    (  # unqualified columns resolved against the tables in scope
        "SELECT Phone FROM frpm JOIN schools ON frpm.CDSCode = schools.CDSCode WHERE `County Name` = 'A'",
        ["frpm", "Schools"],
        {"frpm": ["CDSCode", "County Name"], "Schools": ["CDSCode", "Phone"]},
    ),
    (  # CTE names are not tables; the CTE body's tables are
        "WITH top AS (SELECT cds, AvgScrMath FROM `sat scores` WHERE AvgScrMath > 500) "
        "SELECT s.City FROM top JOIN schools s ON s.CDSCode = top.cds",
        ["sat scores", "Schools"],
        {"sat scores": ["AvgScrMath", "cds"], "Schools": ["CDSCode", "City"]},
    ),
    (  # derived table and IN subquery
        "SELECT COUNT(*) FROM (SELECT City FROM schools WHERE CDSCode IN "
        '(SELECT cds FROM "sat scores" WHERE AvgScrMath > 600)) AS t',
        ["Schools", "sat scores"],
        {"Schools": ["CDSCode", "City"], "sat scores": ["AvgScrMath", "cds"]},
    ),
    (  # correlated subquery referencing the outer alias
        "SELECT City FROM schools AS S WHERE EXISTS (SELECT 1 FROM frpm F WHERE F.CDSCode = S.CDSCode)",
        ["Schools", "frpm"],
        {"Schools": ["CDSCode", "City"], "frpm": ["CDSCode"]},
    ),
    (  # quoted identifiers with spaces and parentheses, case differences
        'SELECT `free meal count (k-12)` / "Enrollment (K-12)" FROM FRPM',
        ["frpm"],
        {"frpm": ["Enrollment (K-12)", "Free Meal Count (K-12)"]},
    ),
]


@pytest.mark.parametrize(("sql", "tables", "columns"), CASES)
def test_gold_tables_and_columns(view: SchemaView, sql: str, tables: list[str], columns: dict) -> None:
    gold = gold_from_sql(sql, view)
    assert gold.ok, gold.problems
    assert sorted(gold.tables) == sorted(tables)
    assert gold.columns == {t: sorted(c) for t, c in columns.items()}


def test_double_quoted_string_literal_is_not_a_column(view: SchemaView) -> None:
    gold = gold_from_sql('SELECT City FROM schools WHERE City = "Fresno"', view)
    assert gold.ok and gold.columns == {"Schools": ["City"]}


def test_union_schema_maps_local_names_to_prefixed_names() -> None:
    tables = [{"name": n, "database": n[0], "columns": [{"name": "id"}]} for n in ("a__t", "b__t")]
    data = {"name": "u", "dialect": "sqlite", "tables": tables}
    view = SchemaView(Database.model_validate(data), "b")
    gold = gold_from_sql("SELECT id FROM T", view)
    assert gold.tables == ["b__t"] and gold.columns == {"b__t": ["id"]}


def test_union_view_reads_membership_not_names() -> None:
    """A dbt-style name with a double underscore belongs where ``database`` says."""
    tables = [
        {"name": "stg_stripe__charges", "database": "shop", "columns": [{"name": "id"}]},
        {"name": "stg_stripe__refunds", "database": "other", "columns": [{"name": "id"}]},
    ]
    view = SchemaView(Database.model_validate({"name": "u", "dialect": "sqlite", "tables": tables}), "shop")
    assert view.tables == {"stg_stripe__charges": "stg_stripe__charges"}


@pytest.mark.parametrize("sql", ["", "SELEC FROM WHERE (((", "SELECT * FROM nowhere", "DROP TABLE frpm; x"])
def test_weird_sql_never_raises_and_flags(view: SchemaView, sql: str) -> None:
    gold = gold_from_sql(sql, view)
    assert not gold.ok and gold.problems
    assert all(t in {"frpm", "Schools", "sat scores"} for t in gold.tables)


def test_unknown_qualified_column_is_flagged_but_table_kept(view: SchemaView) -> None:
    gold = gold_from_sql("SELECT s.Nope, s.City FROM schools s", view)
    assert gold.tables == ["Schools"] and gold.columns == {"Schools": ["City"]}
    assert not gold.ok and any("s.nope" in p for p in gold.problems)
