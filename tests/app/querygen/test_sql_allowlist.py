"""The validator accepts plain queries by allow-list: hostile functions and statements are rejected
by name (the probe's PostgreSQL and DuckDB leaks), and ordinary analytics still pass per dialect."""

from __future__ import annotations

import pytest

from schemarag.app.querygen.sql_validation import validate_sql

# Accepted as valid before the allow-list (probe of issue 13, finding 3).
POSTGRES_LEAKS = [
    ("lo_from_bytea", "SELECT lo_from_bytea(0, 'payload') FROM users"),
    ("lo_put", "SELECT lo_put(16400, 0, 'x') FROM users"),
    ("lo_unlink", "SELECT lo_unlink(16400) FROM users"),
    ("query_to_xml", "SELECT query_to_xml('select rolpassword from pg_authid', true, true, '')"),
    ("table_to_xml", "SELECT table_to_xml('pg_authid', true, true, '') FROM users"),
    ("dblink_connect", "SELECT dblink_connect('host=evil.example dbname=x') FROM users"),
    ("dblink_send_query", "SELECT dblink_send_query('c', 'DROP TABLE users') FROM users"),
    ("pg_sleep", "SELECT id FROM users WHERE pg_sleep(10) IS NOT NULL"),
    ("pg_sleep_for", "SELECT pg_sleep_for('5 minutes') FROM users"),
    ("pg_sleep_until", "SELECT pg_sleep_until('tomorrow 03:00') FROM users"),
    ("pg_ls_dir", "SELECT * FROM pg_ls_dir('.')"),
    ("pg_read_file", "SELECT pg_read_file('/etc/passwd') FROM users"),
    ("pg_file_write", "SELECT pg_file_write('/tmp/x', 'data', false) FROM users"),
    ("pg_notify", "SELECT pg_notify('channel', name) FROM users"),
    ("pg_advisory_xact_lock", "SELECT pg_advisory_xact_lock(1) FROM users"),
    ("pg_switch_wal", "SELECT pg_switch_wal() FROM users"),
    ("set_config", "SELECT set_config('statement_timeout', '0', false) FROM users"),
    ("nextval", "SELECT nextval('orders_id_seq') FROM users"),
    ("current_setting", "SELECT current_setting('data_directory') FROM users"),
]


@pytest.mark.parametrize(("name", "sql"), POSTGRES_LEAKS, ids=[c[0] for c in POSTGRES_LEAKS])
def test_postgres_side_effect_functions_are_rejected_by_name(name: str, sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in("postgres"))
    assert not report.valid
    assert report.errors == [
        f"not allowed: function {name}() is not on the postgres allow-list of side-effect-free functions"
    ]


def test_schema_qualified_call_is_rejected_even_for_a_builtin_name(shop_in) -> None:
    # public.upper could be any user-defined function; pg_catalog.pg_sleep must not sneak through.
    for sql in ("SELECT public.upper(name) FROM users", "SELECT pg_catalog.pg_sleep(1) FROM users"):
        errors = validate_sql(sql, shop_in("postgres")).errors
        assert any(e.startswith("not allowed: schema-qualified function call") for e in errors), errors


DUCKDB_LEAKS = [
    ("read_csv", "SELECT * FROM read_csv('/etc/passwd')"),
    ("read_csv_auto", "SELECT * FROM read_csv_auto('/etc/passwd')"),
    ("read_parquet", "SELECT * FROM read_parquet('s3://bucket/x.parquet')"),
    ("read_json_auto", "SELECT * FROM read_json_auto('https://evil.example/x.json')"),
    ("sqlite_scan", "SELECT * FROM sqlite_scan('/tmp/other.db', 'secrets')"),
    ("postgres_scan", "SELECT * FROM postgres_scan('host=x', 'public', 't')"),
    ("glob", "SELECT * FROM glob('/home/*')"),
    ("getenv", "SELECT getenv('HOME') FROM users"),
    ("query", "SELECT * FROM query('SELECT 1')"),
]


@pytest.mark.parametrize(("name", "sql"), DUCKDB_LEAKS, ids=[c[0] for c in DUCKDB_LEAKS])
def test_duckdb_file_and_network_functions_are_rejected(name: str, sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in("duckdb"))
    assert not report.valid
    assert f"function {name}()" in report.errors[0], report.errors


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("COPY users TO '/tmp/users.csv'", "COPY"),
        ("ATTACH '/tmp/other.db' AS o", "ATTACH"),
        ("PRAGMA database_list", "PRAGMA"),
        ("INSTALL httpfs", "INSTALL"),
        ("LOAD httpfs", "COMMAND"),
        ("SET enable_external_access = true", "SET"),
    ],
)
def test_duckdb_statements_are_rejected(sql: str, kind: str, shop_in) -> None:
    report = validate_sql(sql, shop_in("duckdb"))
    assert report.errors == [f"not read-only: {kind} statement; only SELECT queries are allowed"]


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT * FROM users FOR UPDATE", "FOR UPDATE/SHARE locking"),
        ("SELECT id INTO TEMP t2 FROM users", "SELECT ... INTO"),
        ("WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d", "DELETE"),
    ],
)
def test_writes_inside_a_query_are_rejected(sql: str, fragment: str, shop_in) -> None:
    report = validate_sql(sql, shop_in("postgres"))
    assert not report.valid and fragment in report.errors[0], report.errors


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("sqlite", "SELECT load_extension('/tmp/evil.so') FROM users"),
        ("sqlite", "SELECT zeroblob(1000000000) FROM users"),
        ("mysql", "SELECT SLEEP(10) FROM users"),
        ("mysql", "SELECT LOAD_FILE('/etc/passwd') FROM users"),
        ("mysql", "SELECT BENCHMARK(100000000, MD5('x')) FROM users"),
    ],
)
def test_other_dialects_reject_unknown_functions(dialect: str, sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in(dialect))
    assert not report.valid
    assert "allow-list of side-effect-free functions" in report.errors[0]


COMMON_VALID = [
    "SELECT u.name, COUNT(DISTINCT o.id) AS n FROM users u LEFT JOIN orders o ON o.user_id = u.id "
    "GROUP BY u.name HAVING COUNT(*) > 1 ORDER BY n DESC LIMIT 10",
    "SELECT id, total, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY total DESC) AS rn, "
    "SUM(total) OVER (PARTITION BY user_id) AS s, LAG(total) OVER (ORDER BY id) AS prev FROM orders",
    "SELECT CASE WHEN total > 100 THEN 'big' WHEN total > 10 THEN 'mid' ELSE 'small' END AS size, "
    "CAST(total AS INTEGER), COALESCE(status, 'none'), NULLIF(status, '') FROM orders",
    "WITH t AS (SELECT user_id, AVG(total) AS a FROM orders GROUP BY user_id) "
    "SELECT users.name, t.a FROM t JOIN users ON users.id = t.user_id",
    'SELECT id FROM users UNION SELECT user_id FROM orders UNION ALL SELECT order_id FROM "Order Items"',
    "SELECT id FROM orders WHERE user_id IN (SELECT id FROM users WHERE name LIKE 'A%') "
    "AND total BETWEEN 10 AND 20 AND status IN ('paid', 'shipped') AND status IS NOT NULL",
    "SELECT UPPER(name), LOWER(name), LENGTH(name), SUBSTR(name, 1, 3), TRIM(name), REPLACE(name, 'a', 'b'), "
    "ABS(id), ROUND(id / 3.0, 2), MAX(id), MIN(id) FROM users GROUP BY name, id",
    "SELECT name FROM users u WHERE EXISTS (SELECT 1 FROM orders o WHERE o.user_id = u.id AND o.total > "
    "(SELECT AVG(total) FROM orders))",
]

DIALECT_VALID = {
    "mysql": [
        "SELECT DATE_FORMAT(created_at, '%Y-%m') AS m, COUNT(DISTINCT id) FROM users GROUP BY m",
        "SELECT IFNULL(name, '?'), CONCAT_WS(' ', name, `Full Name`), DATEDIFF(NOW(), created_at), "
        "YEAR(created_at) FROM users",
        "SELECT user_id, GROUP_CONCAT(status SEPARATOR ','), SUM(total) FROM orders GROUP BY user_id",
    ],
    "sqlite": [
        "SELECT strftime('%Y-%m', created_at) AS month, COUNT(*) FROM users GROUP BY month",
        "SELECT IFNULL(name, '?'), instr(name, 'a'), printf('%05d', id), name || '!' FROM users",
        "SELECT group_concat(name, ', ') FROM users",
    ],
    "postgres": [
        "SELECT date_trunc('month', created_at) AS m, COUNT(*) FROM users GROUP BY 1",
        "SELECT EXTRACT(YEAR FROM created_at), to_char(created_at, 'YYYY-MM'), age(created_at), "
        "created_at + INTERVAL '1 day', split_part(name, ' ', 1), name ILIKE '%a%', initcap(name) FROM users",
        "SELECT string_agg(name, ', ' ORDER BY name), array_agg(id), "
        "percentile_cont(0.5) WITHIN GROUP (ORDER BY id) FROM users",
        "SELECT g FROM generate_series(1, 10) AS g",
    ],
    "duckdb": [
        "SELECT date_trunc('month', created_at) AS m, COUNT(*) FROM users GROUP BY 1",
        "SELECT strftime(created_at, '%Y'), date_diff('day', created_at, now()), dayname(created_at), "
        "regexp_matches(name, '^A'), list_value(id, id + 1), median(id) OVER () FROM users",
        "SELECT arg_max(name, id), string_agg(name, ','), approx_count_distinct(name) FROM users",
    ],
}


@pytest.mark.parametrize("dialect", ["sqlite", "postgres", "duckdb"])
@pytest.mark.parametrize("sql", COMMON_VALID, ids=[f"q{i}" for i in range(len(COMMON_VALID))])
def test_ordinary_queries_stay_valid(dialect: str, sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in(dialect))
    assert report.errors == [], report.errors
    assert report.valid and report.bind_checked


@pytest.mark.parametrize(
    ("dialect", "sql"), [(d, q) for d, qs in DIALECT_VALID.items() for q in qs], ids=lambda v: v[:40]
)
def test_dialect_date_and_string_functions_stay_valid(dialect: str, sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in(dialect))
    assert report.errors == [], report.errors
    assert report.valid


# Allowed SQLite functions DuckDB has no twin for: the binder cannot confirm the query, so it is
# unchecked (not valid, not invalid) and the reason names what DuckDB could not do.
SQLITE_UNCHECKED = [
    ("SELECT julianday('now') - julianday(created_at) FROM users", "julianday does not exist"),
    ("SELECT total(id) FROM users", "total does not exist"),
    ("SELECT date(created_at, '+1 day') FROM users", "Wrong number of arguments provided to DATE"),
]


@pytest.mark.parametrize(("sql", "reason"), SQLITE_UNCHECKED, ids=[r for _, r in SQLITE_UNCHECKED])
def test_sqlite_functions_duckdb_cannot_bind_are_unchecked(sql: str, reason: str, shop) -> None:
    report = validate_sql(sql, shop)
    assert (report.valid, report.status, report.errors, report.bind_checked) == (None, "unchecked", [], False)
    assert reason in report.unchecked_reason
