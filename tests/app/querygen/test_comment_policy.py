"""Comments and quoting, decided before parsing (comment_policy): what is rejected in each dialect,
what stays valid (markers inside strings and line comments), and the hint allow-list mechanism.
What each real engine does with the same text is pinned in test_comment_engines.py."""

from __future__ import annotations

import pytest
import sqlglot

from schemarag.app.querygen.comment_policy import CommentPolicy, lexical_errors
from schemarag.app.querygen.sql_validation import validate_sql

DIALECTS = ["mysql", "postgres", "sqlite", "duckdb", "bigquery", "snowflake"]

# Rejected in every dialect: MySQL-family engines run /*! */ and /*M! */; hints are off the
# (empty) reviewed list; a nested comment ends in different places on different engines.
REJECTED_EVERYWHERE = [
    ("SELECT id FROM users /*! , name */", "executable comment /*! , name */"),
    ("SELECT id FROM users /*!50000 , name */", "executable comment /*!50000 , name */"),
    ("SELECT id FROM users /*M! , name */", "executable comment /*M! , name */"),
    ("SELECT id FROM users /*M!100000 , name */", "executable comment /*M!100000 , name */"),
    ("SELECT id /*!*/ FROM users", "executable comment /*!*/"),
    ("SELECT id FROM users /*+ SET_VAR(sql_mode='') */", "optimizer hint /*+ SET_VAR(sql_mode='') */"),
    ("SELECT /*+ MAX_EXECUTION_TIME(9) */ id FROM users", "optimizer hint /*+ MAX_EXECUTION_TIME(9) */"),
    ("SELECT id FROM users /* a /* b */ */", "nested comment /* a /* b */"),
    ("SELECT id FROM users /* note /*! , name */", "nested comment /* note /*! , name */"),
]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("sql", "shown"), REJECTED_EVERYWHERE, ids=[s for _, s in REJECTED_EVERYWHERE])
def test_comment_markers_are_rejected_in_every_dialect(dialect: str, sql: str, shown: str, shop_in) -> None:
    report = validate_sql(sql, shop_in(dialect))
    assert report.valid is False
    assert len(report.errors) == 1 and f"not allowed: {shown}" in report.errors[0], report.errors


def test_messages_name_what_the_engine_does_and_the_fix(shop_in) -> None:
    [executable] = validate_sql("SELECT id FROM users /*! , name */", shop_in("mysql")).errors
    assert "MySQL and MariaDB run the text inside /*! ... */" in executable
    assert "remove the comment" in executable
    [elsewhere] = validate_sql("SELECT id FROM users /*! , name */", shop_in("postgres")).errors
    assert "MySQL-family engines would run" in elsewhere
    [hint] = validate_sql("SELECT /*+ BKA(users) */ id FROM users", shop_in("mysql")).errors
    assert "(mysql: none); remove the hint" in hint
    [nested] = validate_sql("SELECT id FROM users /* a /* b */ */", shop_in("postgres")).errors
    assert "PostgreSQL and DuckDB nest" in nested and "remove the inner /*" in nested


# Comment markers that are not comments (strings, quoted identifiers, dollar quotes) or sit inside
# a line comment, and plain comments: all stay valid.
STILL_VALID = [
    ("mysql", "SELECT id FROM users WHERE name = '/*!50000 x */'"),
    ("mysql", "SELECT id FROM users WHERE name LIKE '%/*+%' -- /*! not run */"),
    ("mysql", "SELECT id FROM users # /*! a hash comment: not run */"),
    ("mysql", "SELECT id FROM users /*m! lower-case m: a plain comment in MariaDB */"),
    ("mysql", "SELECT id FROM users WHERE name = 'it''s' /* plain */"),
    ("mysql", "SELECT id FROM users WHERE name = 'C:\\\\'"),  # an even run: same end in every mode
    ("postgres", "SELECT id FROM users WHERE name = $$ /*! $$"),
    ("postgres", "SELECT id FROM users WHERE name = E'it\\'s'"),  # E'' always escapes: no setting
    ("postgres", 'SELECT id AS "x /*! y" FROM users'),  # a quoted identifier
    ("sqlite", "SELECT id FROM users WHERE name = 'a\\'"),  # no backslash escapes in SQLite at all
    ("duckdb", "SELECT id FROM users -- /* not a block */"),
    ("bigquery", "SELECT id FROM users WHERE name = 'it\\'s' # a BigQuery comment"),
    ("snowflake", "SELECT id FROM users // a Snowflake comment /*! */"),
]


@pytest.mark.parametrize(("dialect", "sql"), STILL_VALID, ids=[f"{d}:{s[20:50]}" for d, s in STILL_VALID])
def test_markers_in_strings_and_line_comments_stay_valid(dialect: str, sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in(dialect))
    assert report.errors == [] and report.valid, report


@pytest.mark.parametrize(
    ("dialect", "sql", "setting"),
    [
        ("mysql", "SELECT 'a\\' , LOAD_FILE('/etc/passwd') #'", "NO_BACKSLASH_ESCAPES"),
        ("mysql", 'SELECT "a\\" , name #" FROM users', "ANSI_QUOTES"),
        ("mysql", "SELECT N'x\\\\\\' , 1 #'", "NO_BACKSLASH_ESCAPES"),  # odd run of three
        ("postgres", "SELECT 'a\\' , ' , pg_sleep(10) --'", "standard_conforming_strings off"),
    ],
)
def test_a_string_whose_end_depends_on_a_server_setting_is_rejected(
    dialect: str, sql: str, setting: str, shop_in
) -> None:
    report = validate_sql(sql, shop_in(dialect))
    assert report.valid is False
    assert "has a backslash before a quote" in report.errors[0] and setting in report.errors[0]
    assert "write a quote inside a string as two quotes ('')" in report.errors[0]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_unterminated_comment_is_named(dialect: str, shop_in) -> None:
    report = validate_sql("SELECT id FROM users /* no end", shop_in(dialect))
    assert report.errors == [
        "unterminated comment /* no end: close it with */ or remove it "
        "(SQLite runs the rest as a comment, the other engines refuse it)"
    ]


def test_an_unterminated_string_is_not_called_a_comment(shop_in) -> None:
    report = validate_sql("SELECT id FROM users WHERE name = 'x\n/* y", shop_in("postgres"))
    assert report.valid is False and report.errors[0].startswith("does not parse as postgres SQL")


def test_long_comments_are_shown_shortened(shop_in) -> None:
    sql = "SELECT id FROM users /*! " + "x " * 200 + "*/"
    [error] = validate_sql(sql, shop_in("mysql")).errors
    assert "executable comment /*! x x x" in error and "...;" in error and len(error) < 300


# --- the hint allow-list: empty by default; a deployment may list reviewed plan-only hints -----

REVIEWED = CommentPolicy({"mysql": frozenset({"MAX_EXECUTION_TIME", "bka"})})


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM users",
        "SELECT /*+ BKA(users) MAX_EXECUTION_TIME(5) */ id FROM users",
        "SELECT id FROM users /*+ bka(users) */",
    ],
)
def test_hints_on_a_reviewed_allow_list_pass(sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in("mysql"), comments=REVIEWED)
    assert report.errors == [] and report.valid and report.bind_checked, report


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT /*+ SET_VAR(sql_mode='') */ id FROM users",  # not listed
        "SELECT /*+ MAX_EXECUTION_TIME(1000) SET_VAR(sql_mode='') */ id FROM users",  # one not listed
        "SELECT /*+ MAX_EXECUTION_TIME('1000') */ id FROM users",  # quoted arguments: not the plain form
        "SELECT /*+ MAX_EXECUTION_TIME(LOAD_FILE(x)) */ id FROM users",  # nested call: not the plain form
        "SELECT /*+ */ id FROM users",  # empty
    ],
)
def test_hints_off_the_list_or_not_in_the_plain_form_are_rejected(sql: str, shop_in) -> None:
    report = validate_sql(sql, shop_in("mysql"), comments=REVIEWED)
    assert report.valid is False
    assert "optimizer hint" in report.errors[0] and "(mysql: BKA, MAX_EXECUTION_TIME)" in report.errors[0]


def test_the_allow_list_is_per_dialect(shop_in) -> None:
    sql = "SELECT /*+ MAX_EXECUTION_TIME(1000) */ id FROM users"
    assert "(postgres: none)" in validate_sql(sql, shop_in("postgres"), comments=REVIEWED).errors[0]


def test_lexical_errors_work_on_sqlglots_own_tokens() -> None:
    sql = "SELECT 1 /*!50000 UNION SELECT LOAD_FILE('/etc/passwd') */"
    tokens = sqlglot.Dialect.get_or_raise("mysql").tokenize(sql)
    assert [t.text for t in tokens] == ["SELECT", "1"]  # sqlglot sees only a comment here
    [error] = lexical_errors(sql, tokens, "mysql")
    assert error.startswith("not allowed: executable comment /*!50000 UNION SELECT LOAD_FILE(")


def test_every_comment_is_inspected_even_thousands(shop_in) -> None:
    """2,100 comments (about 19,000 characters, under the length limit): the last one is the bad one,
    and it is found (hostile_bench prints the time of such inputs)."""
    sql = "SELECT id " + "/* ok */ " * 2_100 + "/*! , name */ FROM users"
    report = validate_sql(sql, shop_in("mysql"))
    assert report.errors and "executable comment /*! , name */" in report.errors[0]
