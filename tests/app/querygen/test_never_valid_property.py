"""Property test (issue 39): a statement built from the write, file, stage and system keywords of
a dialect is never valid. Hypothesis combines a hostile piece with the places a query can hold it
(the whole statement, a FROM target, a JOIN target, a subquery, a CTE), so a new combination the
example-based corpus (test_hostile_corpus.py) does not list is still checked."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database

DIALECTS = ["mysql", "postgres", "sqlite", "duckdb", "bigquery", "snowflake"]

# Statements that write, load, configure or call: never a plain query.
WRITES = [
    "INSERT INTO users VALUES (1)", "UPDATE users SET id = 2", "DELETE FROM users", "DROP TABLE users",
    "CREATE TABLE x AS SELECT 1", "TRUNCATE users", "MERGE INTO users USING users AS u ON true "
    "WHEN MATCHED THEN DELETE", "GRANT SELECT ON users TO public", "CALL f()", "EXECUTE s",
    "COPY users TO '/tmp/x'", "ATTACH 'x.db' AS x", "LOAD httpfs", "INSTALL httpfs", "PRAGMA x = 1",
    "SET x = 1", "PUT file:///tmp/x @s", "GET @s file:///tmp", "REMOVE @s", "LIST @s",
    "EXPORT DATA OPTIONS (uri='gs://b/*') AS SELECT 1", "UNLOAD ('SELECT 1') TO 's3://b/'",
    "LOAD DATA INFILE '/etc/passwd' INTO TABLE users", "VACUUM", "ANALYZE users",
]  # fmt: skip
# Relations that read something other than the schema's tables.
FOREIGN_RELATIONS = [
    "@s", "@mystage/secrets.csv", "@%users", "@~/x.csv", "@db.sch.stage/p",  # stages
    "?", ":t", "$1", "%s", "@p",  # placeholders and parameters
    "TABLE('SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY')", "TABLE(users)", "TABLE(RESULT_SCAN(LAST_QUERY_ID()))",
    "read_csv('/etc/passwd')", "read_csv_auto('x.csv')", "read_parquet('s3://b/k')", "read_json_auto('x')",
    "read_text('/etc/passwd')", "read_blob('x')", "query_table('users')", "sqlite_scan('x.db', 't')",
    "pg_ls_dir('.')", "pg_read_file('/etc/passwd')", "dblink('h', 'SELECT 1')", "IDENTIFIER('users')",
    "EXTERNAL_QUERY('c', 'SELECT 1')", "glob('*')", "duckdb_settings()", "duckdb_secrets()",
    "'/etc/passwd'", "'x.csv'",  # files
    "pg_authid", "information_schema.tables", "sqlite_master", "mysql.user", "pg_catalog.pg_shadow",
    "SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY", "`region-us`.INFORMATION_SCHEMA.JOBS", "sys.objects",
]  # fmt: skip
PLACES = [
    "SELECT * FROM {r}",
    "SELECT id FROM users JOIN {r} ON true",
    "SELECT id FROM users, {r}",
    "SELECT id FROM users WHERE id IN (SELECT * FROM {r})",
    "WITH c AS (SELECT * FROM {r}) SELECT * FROM c",
    "SELECT id FROM users UNION ALL SELECT * FROM {r}",
    "SELECT (SELECT COUNT(*) FROM {r}) FROM users",
]


def users_db(dialect: str) -> Database:
    return Database.model_validate({"name": "probe", "dialect": dialect, "tables": [
        {"name": "users", "columns": [{"name": "id", "type": "INTEGER"}]}]})  # fmt: skip


DBS = {d: users_db(d) for d in DIALECTS}
hostile = st.one_of(
    st.sampled_from(WRITES),
    st.builds(lambda at, rel: at.format(r=rel), st.sampled_from(PLACES), st.sampled_from(FOREIGN_RELATIONS)),
    st.builds(lambda w: f"WITH c AS ({w}) SELECT * FROM c", st.sampled_from(WRITES)),
)


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sql=hostile)
def test_no_write_file_stage_or_system_statement_is_ever_valid(dialect: str, sql: str) -> None:
    report = validate_sql(sql, DBS[dialect])
    # invalid, with a one-line reason; "unchecked" would be exit 3, which a careless script runs
    assert report.valid is False, (dialect, sql, report)
    assert report.errors and all("\n" not in e for e in report.errors), report.errors
