"""Hostile-size SQL: limits are checked before parsing, errors name the limit and the value, the
stack is never exhausted, and the DuckDB binder never tries to install an extension.

Timings are not asserted here (benchmarks print them; see SECURITY.md); the slow tests only prove
the large inputs finish with a clear answer instead of a traceback."""

from __future__ import annotations

import pytest
import sqlglot

from schemarag.app.querygen.duckdb_bind import SANDBOX, _catalog, bind_check
from schemarag.app.querygen.sql_bounds import SQLLimits, measure, rebalance
from schemarag.app.querygen.sql_validation import validate_sql


def _or_chain(n: int) -> str:
    return "SELECT id FROM users WHERE " + " OR ".join(f"id = {i}" for i in range(n))


def test_too_long_sql_is_rejected_before_parsing(shop) -> None:
    sql = _or_chain(20_000)  # the probe's 250 KB query (252 s before the bounds)
    assert len(sql) > 250_000
    report = validate_sql(sql, shop)
    assert report.errors == [
        f"SQL too long: {len(sql):,} characters > the limit of 20,000; return one focused query"
    ]


@pytest.mark.parametrize("depth", [40, 5_000])
def test_deep_parentheses_give_a_clear_error_not_recursion(shop, depth: int) -> None:
    sql = "SELECT " + "(" * depth + "1" + ")" * depth + " FROM users"
    report = validate_sql(sql, shop, limits=SQLLimits(max_chars=20_000))
    assert report.errors == [
        f"SQL nested too deeply: {depth} levels of parentheses/CASE > the limit of 32; flatten the expression"
    ]


def test_parentheses_inside_strings_do_not_count(shop) -> None:
    sql = "SELECT id FROM users WHERE name = '" + "(" * 500 + "'"
    assert validate_sql(sql, shop).valid


def test_deep_case_nesting_is_bounded(shop) -> None:
    sql = "SELECT " + "CASE WHEN id = 1 THEN " * 40 + "1" + " END" * 40 + " FROM users"
    assert "40 levels of parentheses/CASE" in validate_sql(sql, shop).errors[0]


def test_unary_chain_without_parentheses_is_a_clear_error(shop) -> None:
    report = validate_sql("SELECT id FROM users WHERE " + "NOT " * 3_000 + "id = 1", shop)
    assert not report.valid
    assert report.errors[0].startswith("SQL nested too deeply"), report.errors


def test_long_arithmetic_chain_hits_the_depth_limit(shop) -> None:
    sql = "SELECT " + " + ".join(["id"] * 400) + " FROM users"
    report = validate_sql(sql, shop)
    assert report.errors[0].startswith("SQL expression too deep: depth ")
    assert "> the limit of 160" in report.errors[0]


def test_or_chains_are_rebalanced_to_logarithmic_depth() -> None:
    tree = sqlglot.parse_one(_or_chain(1_024), read="sqlite")
    before = measure(tree)
    rebalance(tree)
    after = measure(tree)
    assert before[1] > 1_024 and after[1] < 20  # depth: linear -> log2
    assert after[0] == before[0]  # same number of nodes: same predicate, reshaped
    where = tree.args["where"].this
    assert sorted(int(e.expression.name) for e in where.find_all(sqlglot.exp.EQ)) == list(range(1_024))


def test_largest_allowed_or_chain_is_validated(shop) -> None:
    sql = _or_chain(1_500)  # ~18 KB, just under the default length limit
    report = validate_sql(sql, shop)
    assert report.valid and report.bind_checked, report.errors


def test_many_nodes_skip_the_quadratic_qualifier_but_still_bind(shop) -> None:
    sql = _or_chain(800)
    report = validate_sql(sql, shop, limits=SQLLimits(qualify_max_nodes=1_000))
    assert report.valid and report.bind_checked
    assert report.warnings[0].startswith("column check by sqlglot skipped: ")
    bad = validate_sql(sql.replace("id = 7 ", "idd = 7 "), shop, limits=SQLLimits(qualify_max_nodes=1_000))
    assert not bad.valid and "idd" in bad.errors[0]  # DuckDB's binder still catches the name


@pytest.mark.slow
def test_probe_size_finishes_with_an_answer_when_limits_are_raised(shop) -> None:
    """With limits raised to let the probe's 250 KB query through, it still finishes (no RecursionError)."""
    limits = SQLLimits(max_chars=300_000, max_nodes=500_000)
    report = validate_sql(_or_chain(20_000), shop, limits=limits)
    # the probe's query is a plain OR list over a real column: every check runs and it is valid
    # ("valid or errors" held for any outcome but "unchecked", so it could not fail: issue 39)
    assert report.valid is True and report.errors == [] and report.bind_checked, report
    assert any("column check by sqlglot skipped" in w for w in report.warnings), report.warnings


def test_duckdb_binder_is_sandboxed(shop_in) -> None:
    db = shop_in("duckdb")
    catalog = _catalog(db)
    names = ", ".join(f"current_setting('{k}')" for k in [*SANDBOX, "lock_configuration"])
    with catalog.lock:
        values = catalog.con.execute(f"SELECT {names}").fetchone()
    assert values == (False, False, False, False, True)


def test_sqlite_scan_fails_without_any_install_attempt(shop_in, tmp_path, monkeypatch) -> None:
    """Bypass the allow-list and hand the binder the probe's query directly: DuckDB must report the
    missing function, never try to download the sqlite_scanner extension."""
    monkeypatch.setenv("HOME", str(tmp_path))  # where DuckDB would put a downloaded extension
    db = shop_in("duckdb")
    tree = sqlglot.parse_one("SELECT * FROM sqlite_scan('/tmp/other.db', 'secrets')", read="duckdb")
    result = bind_check(tree, db)
    text = " ".join(result.errors + result.warnings)
    assert "sqlite_scan" in text and "not in the catalog" in text
    assert "automatically install" not in text
    assert not any(tmp_path.iterdir())  # no ~/.duckdb/extensions was created
    report = validate_sql("SELECT * FROM sqlite_scan('/tmp/other.db', 'secrets')", db)
    assert report.errors[0].startswith("not allowed: function sqlite_scan()")
    assert not report.bind_checked  # rejected before DuckDB saw it
