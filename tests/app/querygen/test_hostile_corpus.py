"""The hostile-SQL corpus of issue 23, per dialect: executable comments, optimizer hints and
assignments (``:=``, ``SET``, ``SELECT ... INTO``) are rejected wherever the dialect gives them a
meaning, and the same statements without the trick stay valid. (Issue 13's corpus, by function and
statement, is in test_sql_allowlist.py; what MariaDB really runs is in test_comment_engines.py.)"""

from __future__ import annotations

import pytest

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database

DIALECTS = ["mysql", "postgres", "sqlite", "duckdb", "bigquery", "snowflake"]
COLUMNS = [
    {"name": "id", "type": "INTEGER"},
    {"name": "name", "type": "TEXT"},
    {"name": "email", "type": "TEXT"},
]


def users_db(dialect: str) -> Database:
    return Database.model_validate({"name": "probe", "dialect": dialect, "tables": [
        {"name": "users", "columns": COLUMNS}]})  # fmt: skip


# The issue's statements: sqlglot reads the trick as a comment (or a harmless node); MySQL and
# MariaDB run it. Rejected in every dialect: the statement means nothing else anywhere.
ISSUE_STATEMENTS = [
    ("SELECT id FROM users /*! INTO OUTFILE '/tmp/pwn.txt' */", "executable comment"),
    ("SELECT email FROM users /*!, LOAD_FILE('/etc/passwd') */", "executable comment"),
    ("SELECT 1 /*!50000 UNION SELECT LOAD_FILE('/etc/passwd') */", "executable comment"),
    ("SELECT email /*M!100000 , LOAD_FILE('/etc/passwd') */ FROM users", "executable comment"),
    ("SELECT 1 /*+ SET_VAR(sql_mode='') */", "optimizer hint"),
    ("SELECT /*+ SET_VAR(sql_mode='') */ id FROM users", "optimizer hint"),
    ("SELECT @a := 1", "assignment"),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("sql", "kind"), ISSUE_STATEMENTS, ids=[s for s, _ in ISSUE_STATEMENTS])
def test_the_issues_statements_are_rejected_in_every_dialect(dialect: str, sql: str, kind: str) -> None:
    report = validate_sql(sql, users_db(dialect))
    assert report.valid is False, report
    assert f"not allowed: {kind}" in report.errors[0], report.errors


# Assignments and writes to variables or files, in the dialects where they mean something.
ASSIGNMENTS = [
    ("mysql", "SELECT (@a := 1)", "not allowed: assignment @a := 1"),
    ("mysql", "SELECT id FROM users WHERE (@a := id) > 0", "not allowed: assignment @a := id"),
    ("mysql", "SELECT @r := @r + 1 AS rn, id FROM users", "not allowed: assignment @r := @r + 1"),
    ("mysql", "SET @a = 1", "not read-only: SET statement"),
    ("mysql", "SET SESSION sql_mode = ''", "not read-only: SET statement"),
    ("mysql", "SELECT id INTO @v FROM users", "SELECT ... INTO"),
    ("mysql", "SELECT id FROM users INTO @v", "does not parse as mysql SQL"),
    ("mysql", "SELECT id FROM users INTO OUTFILE '/tmp/x'", "does not parse as mysql SQL"),
    ("mysql", "SELECT id INTO OUTFILE '/tmp/x' FROM users", "does not parse as mysql SQL"),
    ("mysql", "SELECT id FROM users INTO DUMPFILE '/tmp/x'", "does not parse as mysql SQL"),
    ("mysql", "SELECT @@datadir", "SESSIONPARAMETER"),
    ("postgres", "SELECT id INTO TEMP t FROM users", "SELECT ... INTO"),
    ("postgres", "SET search_path = evil", "not read-only: SET statement"),
    ("postgres", "SELECT set_config('search_path', 'evil', false)", "function set_config()"),
    ("duckdb", "SET VARIABLE x = 1", "not read-only: SET statement"),
    ("duckdb", "SELECT getvariable('x')", "function getvariable()"),
    ("sqlite", "PRAGMA writable_schema = 1", "not read-only: PRAGMA statement"),
    ("bigquery", "SET x = 1", "not read-only: SET statement"),
    ("bigquery", "DECLARE x INT64", "not read-only: DECLARE statement"),
    ("snowflake", "SET x = 1", "not read-only: SET statement"),
    ("snowflake", "SELECT id INTO :v FROM users", "SELECT ... INTO"),
    ("tsql", "SELECT @a = id FROM users", "not allowed: assignment @a = id"),
]


@pytest.mark.parametrize(
    ("dialect", "sql", "fragment"), ASSIGNMENTS, ids=[f"{d}:{s}" for d, s, _ in ASSIGNMENTS]
)
def test_assignments_are_rejected_where_they_mean_something(dialect: str, sql: str, fragment: str) -> None:
    report = validate_sql(sql, users_db(dialect))
    assert report.valid is False, report
    assert fragment in report.errors[0], report.errors


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("mysql", "SELECT id FROM users"),
        ("mysql", "SELECT email FROM users /* a plain comment */"),
        ("mysql", "SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM users"),  # instead of @r := @r + 1
        ("mysql", "SELECT id FROM users WHERE email = 'a@b' -- trailing comment"),
        ("postgres", "SELECT upper(name) FROM users"),
        ("duckdb", "SELECT struct_pack(a := id) FROM users"),  # := as a named argument
        ("tsql", "SELECT id FROM users WHERE id = 1"),
    ],
)
def test_the_same_queries_without_the_trick_stay_valid(dialect: str, sql: str) -> None:
    report = validate_sql(sql, users_db(dialect))
    assert report.errors == [] and report.valid is True, report


# Issue 39: reads that are not tables of the schema. Each was "unchecked" (exit 3) in every
# dialect; a FROM/JOIN target must be a schema table, a CTE, a subquery or a reviewed row
# generator (UNNEST and kin) expanding its arguments, so each is invalid with the reason.
RELATION_TARGETS = [
    ("SELECT $1 FROM @mystage/secrets.csv", "stage"),
    ("SELECT * FROM @s", "stage"),
    ("SELECT * FROM @%users", "stage"),
    ("SELECT id FROM users JOIN @s ON true", "stage"),
    ("SELECT * FROM TABLE('SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY')", "table function"),
    ("SELECT * FROM TABLE(users)", "table function"),
    ("SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))", "table function"),
    ("SELECT * FROM read_csv('x.csv')", "table function"),
    ("SELECT * FROM users, read_parquet('s3://b/k.parquet')", "table function"),
    ("SELECT * FROM query_table('users')", "table function"),
    ("SELECT * FROM IDENTIFIER('users')", "table function"),
    ("SELECT * FROM ?", "placeholder"),
    ("SELECT * FROM :t", "placeholder"),
    ("SELECT * FROM $1", "placeholder"),
    ("SELECT id FROM users JOIN ? ON true", "placeholder"),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("sql", "kind"), RELATION_TARGETS, ids=[s for s, _ in RELATION_TARGETS])
def test_stages_table_functions_and_placeholders_as_relations_are_invalid(
    dialect: str, sql: str, kind: str
) -> None:
    report = validate_sql(sql, users_db(dialect))
    assert report.valid is False, report
    assert len(report.errors) >= 1 and all("\n" not in e for e in report.errors), report.errors
    # the reason names what was read (or the function or name the earlier checks refuse),
    # unless the dialect cannot even parse the statement
    first = report.errors[0]
    if not first.startswith("does not parse"):
        assert kind in first or "unknown table" in first or "not allowed: function" in first, report.errors


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgres", "SELECT g FROM generate_series(1, 10) AS g"),
        ("duckdb", "SELECT r FROM range(3) AS t(r)"),
        ("duckdb", "SELECT u FROM users, unnest([users.id]) AS t(u)"),
        ("bigquery", "SELECT x FROM users, UNNEST([users.id]) AS x"),
        ("snowflake", "SELECT f.value FROM users AS u, LATERAL FLATTEN(input => u.id) AS f"),
        ("snowflake", "SELECT f.value FROM users AS u, TABLE(FLATTEN(input => u.id)) AS f"),
        ("postgres", "SELECT e.v FROM users AS u CROSS JOIN LATERAL unnest(ARRAY[u.id]) AS e(v)"),
        ("sqlite", "SELECT j.value FROM users AS u, json_each(u.name) AS j"),
        ("duckdb", "WITH t AS (SELECT id FROM users) SELECT * FROM t JOIN (SELECT 1 AS one) AS s ON true"),
    ],
)
def test_row_generators_ctes_and_subqueries_stay_allowed_as_relations(dialect: str, sql: str) -> None:
    report = validate_sql(sql, users_db(dialect))
    assert report.valid is not False, report  # valid, or unchecked where DuckDB cannot emulate the dialect
