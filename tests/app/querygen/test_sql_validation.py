"""SQL validation against the authoritative schema: parse, read-only, names, DuckDB bind."""

from __future__ import annotations

import pytest

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database

VALID_SQLITE = [
    ("aliases", "SELECT o.id, u.name FROM orders AS o JOIN users u ON o.user_id = u.id", ["orders", "users"]),
    ("cte", "WITH big AS (SELECT user_id, SUM(total) AS s FROM orders GROUP BY user_id) "
            "SELECT u.name, b.s FROM big b JOIN users u ON u.id = b.user_id", ["users", "orders"]),
    ("subquery in FROM", "SELECT x.n FROM (SELECT name AS n FROM users) AS x", ["users"]),
    ("correlated subquery", "SELECT id FROM orders o WHERE EXISTS "
                            "(SELECT 1 FROM users u WHERE u.id = o.user_id AND u.name = 'a')",
     ["orders", "users"]),
    ("IN subquery", "SELECT users.id FROM users WHERE id IN (SELECT user_id FROM orders WHERE total > 10)",
     ["users", "orders"]),
    ("quoted identifiers with spaces", 'SELECT u."Full Name", SUM(oi.qty) FROM users u '
     'JOIN orders o ON o.user_id = u.id JOIN "Order Items" oi ON oi.order_id = o.id GROUP BY u."Full Name"',
     ["users", "orders", "Order Items"]),
    ("sqlite backticks", "SELECT `Full Name`, COUNT(*) FROM `users` GROUP BY `Full Name`", ["users"]),
    ("functions", "SELECT strftime('%Y', created_at) AS y, UPPER(name), COUNT(*) FROM users "
                  "GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5", ["users"]),
    ("case-insensitive names", "SELECT ID, Name FROM USERS", ["users"]),
    ("union", "SELECT id FROM users UNION SELECT user_id FROM orders", ["users", "orders"]),
    ("sqlite double-quoted string", 'SELECT id FROM orders WHERE status = "shipped"', ["orders"]),
    ("schema-qualified table", "SELECT main.users.id FROM main.users", ["users"]),
    ("trailing semicolon", "SELECT id FROM users;", ["users"]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "sql", "tables"), VALID_SQLITE, ids=[c[0] for c in VALID_SQLITE])
def test_valid_sqlite_queries(shop: Database, case: str, sql: str, tables: list[str]) -> None:
    report = validate_sql(sql, shop)
    assert report.errors == []
    assert report.valid
    assert report.tables == tables
    assert report.bind_checked


def test_postgres_quoted_identifiers_and_functions(shop_pg: Database) -> None:
    sql = (
        "SELECT date_trunc('month', u.created_at) AS m, COUNT(DISTINCT o.id) "
        "FROM users u JOIN orders o ON o.user_id = u.id WHERE u.\"Full Name\" ILIKE '%a%' GROUP BY 1"
    )
    report = validate_sql(sql, shop_pg)
    assert (report.valid, report.errors, report.bind_checked) == (True, [], True)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("SELECT totl FROM orders", "unknown or ambiguous column 'totl'"),
        ("SELECT o.totl FROM orders o", "did you mean orders.total"),
        ("WITH c AS (SELECT id FROM users) SELECT c.name FROM c", "'name'"),
        ("SELECT x.m FROM (SELECT name AS n FROM users) x", "'m'"),
        ("SELECT id FROM orders, users", "unknown or ambiguous column 'id'"),
    ],
)
def test_unknown_columns(shop: Database, sql: str, fragment: str) -> None:
    report = validate_sql(sql, shop)
    assert not report.valid
    assert fragment in report.errors[0]


def test_unknown_table_suggests_close_names(shop: Database) -> None:
    report = validate_sql("SELECT id FROM order_items", shop)
    assert report.errors == ["unknown table 'order_items'; did you mean Order Items, orders?"]
    assert validate_sql("SELECT * FROM zzz", shop).errors == [
        "unknown table 'zzz'; use only tables of the schema"
    ]


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("DELETE FROM orders", "not read-only: DELETE statement; only SELECT queries are allowed"),
        ("DROP TABLE users", "not read-only: DROP statement; only SELECT queries are allowed"),
        ("UPDATE users SET name = 'x'", "not read-only: UPDATE statement; only SELECT queries are allowed"),
        (
            "INSERT INTO users (id) VALUES (1)",
            "not read-only: INSERT statement; only SELECT queries are allowed",
        ),
        ("PRAGMA table_info(users)", "not read-only: PRAGMA statement; only SELECT queries are allowed"),
        ("ATTACH 'other.db' AS o", "not read-only: ATTACH statement; only SELECT queries are allowed"),
        (
            "CREATE TABLE x AS SELECT * FROM users",
            "not read-only: CREATE statement; only SELECT queries are allowed",
        ),
        (
            "SELECT * INTO backup FROM users",
            "not read-only: the query contains SELECT ... INTO; only plain SELECT queries are allowed",
        ),
        (
            "SELECT load_extension('evil.so')",
            "not allowed: function load_extension() is not on the sqlite allow-list of "
            "side-effect-free functions",
        ),
    ],
)
def test_writes_and_side_effects_are_rejected(shop: Database, sql: str, error: str) -> None:
    report = validate_sql(sql, shop)
    assert (report.valid, report.errors) == (False, [error])


def test_write_hidden_in_a_cte_is_rejected(shop_pg: Database) -> None:
    report = validate_sql("WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone", shop_pg)
    assert not report.valid
    assert "DELETE" in report.errors[0]


def test_file_reading_function_is_rejected_in_duckdb() -> None:
    db = Database.model_validate({"name": "d", "dialect": "duckdb", "tables": [
        {"name": "t", "columns": [{"name": "id", "type": "INTEGER"}]}]})  # fmt: skip
    report = validate_sql("SELECT * FROM read_csv('/etc/passwd')", db)
    assert report.errors == [
        "not allowed: function read_csv() is not on the duckdb allow-list of side-effect-free functions"
    ]


def test_multiple_statements(shop: Database) -> None:
    report = validate_sql("SELECT id FROM users; DELETE FROM users", shop)
    assert report.errors == ["multiple statements (2): return exactly one SELECT statement"]


@pytest.mark.parametrize("sql", ["", "   ", ";"])
def test_empty_sql(shop: Database, sql: str) -> None:
    assert "empty SQL" in validate_sql(sql, shop).errors[0]


def test_unparseable_sql_names_the_dialect(shop: Database) -> None:
    report = validate_sql("SELECT id FROM users WHERE (", shop)
    assert not report.valid
    assert report.errors[0].startswith("does not parse as sqlite SQL:")


def test_backticks_do_not_parse_as_postgres(shop_pg: Database) -> None:
    assert (
        validate_sql("SELECT `Full Name` FROM users", shop_pg)
        .errors[0]
        .startswith("does not parse as postgres SQL")
    )


def test_duckdb_bind_catches_group_by_errors_in_strict_dialects(shop_pg: Database, shop: Database) -> None:
    sql = "SELECT user_id, total, SUM(total) FROM orders GROUP BY user_id"
    pg = validate_sql(sql, shop_pg)
    assert not pg.valid and "must appear in the GROUP BY clause" in pg.errors[0]
    lite = validate_sql(sql, shop)  # SQLite allows bare columns: not an error, but not confirmed either
    assert lite.valid is None and lite.errors == []
    assert "must appear in the GROUP BY clause" in lite.unchecked_reason


def test_duckdb_type_mismatch_is_an_error_only_for_duckdb(shop: Database) -> None:
    duck = Database.model_validate({**shop.model_dump(), "dialect": "duckdb"})
    sql = "SELECT name + 1 FROM users"
    assert not validate_sql(sql, duck).valid
    lite = validate_sql(sql, shop)  # SQLite adds text to numbers: unchecked, the reason says why
    assert lite.valid is None and lite.errors == [] and not lite.bind_checked
    assert "may be a sqlite/DuckDB difference, so it is not counted as an error" in lite.unchecked_reason


def test_unknown_column_types_bind_as_varchar(shop: Database) -> None:
    # "some_vendor_type" has no DuckDB equivalent; the empty table still gets created.
    report = validate_sql("SELECT sku, qty FROM \"Order Items\" WHERE sku LIKE 'A%'", shop)
    assert report.valid and report.bind_checked


def test_report_to_dict_is_snake_case(shop: Database) -> None:
    assert validate_sql("SELECT id FROM users", shop).to_dict() == {
        "valid": True,
        "errors": [],
        "warnings": [],
        "tables": ["users"],
        "bind_checked": True,
        "unchecked_reason": None,
    }


@pytest.mark.parametrize(
    ("dialect", "sql", "reason"),
    [
        ("postgres", "SELECT id FROM orders WHERE user_id = $1", "Values were not provided"),
        ("sqlite", "SELECT total(id) FROM users", "total does not exist"),
        ("sqlite", "SELECT date(created_at, '+1 day') FROM users", "transpiled SQL did not parse"),
    ],
)
def test_a_bind_that_could_not_run_is_unchecked_never_valid(dialect: str, sql: str, reason: str, shop_in):
    report = validate_sql(sql, shop_in(dialect))
    assert (report.valid, report.status, report.errors, report.bind_checked) == (None, "unchecked", [], False)
    assert reason in report.unchecked_reason
    as_json = report.to_dict()
    assert as_json["valid"] is None and as_json["unchecked_reason"] == report.unchecked_reason
    assert not report.valid  # `if report.valid:` treats unchecked as not valid


def test_an_error_beats_an_unchecked_bind(shop_in) -> None:
    report = validate_sql("SELECT totl FROM orders WHERE user_id = $1", shop_in("postgres"))
    assert report.valid is False and report.unchecked_reason is None and "'totl'" in report.errors[0]
