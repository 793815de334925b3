"""What each real engine executes for comment and quoting edge cases, next to the validator's verdict.

Each row runs the exact text on the engine (MariaDB through PyMySQL, PostgreSQL through psycopg,
DuckDB and SQLite in-process) and validates it for the engine's dialect. Where sqlglot and the
engine read the text differently, the engine wins: the validator rejects (executable comments,
hints, nested or unterminated comments, strings whose end depends on a server setting). For
every text the validator accepts, the engine returns the same rows for sqlglot's reading of it
(regenerated without comments), so what was validated is what runs.
"""

from __future__ import annotations

import uuid
from typing import Any, NamedTuple

import pytest
import sqlglot
from engines import DIALECT, ENGINES, ERROR

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database

VALID = "valid"
COLUMNS = [
    {"name": "id", "type": "INTEGER"},
    {"name": "name", "type": "TEXT"},
    {"name": "email", "type": "TEXT"},
]
USERS_DB = {"name": "probe", "tables": [{"name": "users", "columns": COLUMNS}]}


class Case(NamedTuple):
    engine: str
    sql: str
    runs: Any  # the engine's rows, or ERROR
    verdict: str  # VALID, or a fragment of the validator's first error
    setting: str | None = None  # MariaDB sql_mode / PostgreSQL SET for this run
    why: str = ""


# fmt: off
CASES = [
    # MariaDB runs what is inside /*! */ and /*M! */ (up to its own version); hints are ignored by
    # 10.11 but applied by MySQL 8 (SET_VAR changes sql_mode for the statement).
    Case("mariadb", "SELECT 1 /*! +1 */", [(2,)], "executable comment"),
    Case("mariadb", "SELECT 1 /*!50000 +1 */", [(2,)], "executable comment"),
    Case("mariadb", "SELECT 1 /*!99999 +1 */", [(1,)], "executable comment", why="runs after an upgrade"),
    Case("mariadb", "SELECT 1 /*M! +1 */", [(2,)], "executable comment"),
    Case("mariadb", "SELECT 1 /*M!100000 +1 */", [(2,)], "executable comment"),
    Case("mariadb", "SELECT 1 /*m! +1 */", [(1,)], VALID, why="the marker is upper-case M only"),
    Case("mariadb", "SELECT 1 /*+ SET_VAR(sql_mode='') */", [(1,)], "optimizer hint"),
    Case("mariadb", "SELECT /*+ SET_VAR(sql_mode='') */ 1", [(1,)], "optimizer hint"),
    Case("mariadb", "SELECT 1 /* a /* b */ +1 */", ERROR, "nested comment", why="MariaDB does not nest"),
    Case("mariadb", "SELECT 1 /* /*! +1 */", [(1,)], "nested comment", why="stricter than the engine"),
    Case("mariadb", "SELECT 1 --1", [(2,)], VALID, why="1 - -1: MySQL needs a space after --"),
    Case("mariadb", "SELECT 1 --\t1", [(1,)], VALID, why="a tab is enough"),
    Case("mariadb", "SELECT 1 -- x\r+1", [(1,)], VALID, why="the comment runs to \\n, not \\r"),
    Case("mariadb", "SELECT 1 # x\n+1", [(2,)], VALID),
    Case("mariadb", "SELECT 1 -- /*! +1 */", [(1,)], VALID, why="a marker inside a line comment"),
    Case("mariadb", "SELECT '/*!', 1", [("/*!", 1)], VALID, why="a marker inside a string"),
    Case("mariadb", "SELECT 1 /* no end", ERROR, "unterminated comment"),
    Case("mariadb", "SELECT 'a\\' , 1 #'", [("a' , 1 #",)], "backslash before a quote"),
    Case("mariadb", "SELECT 'a\\' , 1 #'", [("a\\", 1)], "backslash before a quote",
         "NO_BACKSLASH_ESCAPES", "the string ends early; `, 1` runs"),
    Case("mariadb", "SELECT 'a\\\\' , 1", [("a\\", 1)], VALID, why="an even run ends the same in every mode"),
    # PostgreSQL nests comments, ends -- at \r, reads 'a\' literally unless a setting says otherwise.
    Case("postgres", "SELECT 1 /* a /* b */ +1 */", [(1,)], "nested comment"),
    Case("postgres", "SELECT 1 /*! +1 */", [(1,)], "executable comment", why="inert; MySQL would run it"),
    Case("postgres", "SELECT /*+ SeqScan(users) */ 1", [(1,)], "optimizer hint", why="pg_hint_plan reads it"),
    Case("postgres", "SELECT 1 -- x\r+1", [(2,)], VALID),
    Case("postgres", "SELECT 1 --1", [(1,)], VALID),
    Case("postgres", "SELECT 1 /* no end", ERROR, "unterminated comment"),
    Case("postgres", "SELECT 'a\\' , ' , 1 --'", [("a\\", " , 1 --")], "backslash before a quote"),
    Case("postgres", "SELECT 'a\\' , ' , 1 --'", [("a' , ", 1)], "backslash before a quote",
         "SET standard_conforming_strings = off", "the string runs on; `, 1` runs"),
    Case("postgres", "SELECT E'a\\' , ' , 1 --'", [("a' , ", 1)], VALID, why="E'' escapes in every setting"),
    Case("postgres", "SELECT $$ /*! $$, 1", [(" /*! ", 1)], VALID),
    # DuckDB reads comments as PostgreSQL does.
    Case("duckdb", "SELECT 1 /* a /* b */ +1 */", [(1,)], "nested comment"),
    Case("duckdb", "SELECT 1 -- x\r+1", [(2,)], VALID),
    Case("duckdb", "SELECT 1 /* no end", ERROR, "unterminated comment"),
    Case("duckdb", "SELECT 1 /*! +1 */", [(1,)], "executable comment"),
    Case("duckdb", "SELECT E'a\\' , ' , 1 --'", [("a' , ", 1)], VALID),
    # SQLite does not nest, ends -- at \n only, and runs an unterminated comment to the end.
    Case("sqlite", "SELECT 1 /* a /* b */ +1 */", ERROR, "nested comment"),
    Case("sqlite", "SELECT 1 -- x\r+1", [(1,)], VALID),
    Case("sqlite", "SELECT 1 /* no end", [(1,)], "unterminated comment", why="SQLite runs it; we refuse"),
    Case("sqlite", "SELECT 'a\\' , 1 --'", [("a\\", 1)], VALID, why="no backslash escapes, no setting"),
]
# fmt: on


@pytest.fixture(scope="module")
def engine_runs(request) -> Any:
    """``engine_runs(name)``: the module's session on that engine (skips only that engine's rows)."""
    opened: dict[str, Any] = {}
    stack: list[Any] = []

    def get(name: str) -> Any:
        if name not in opened:
            manager = ENGINES[name]()
            opened[name] = manager.__enter__()
            stack.append(manager)
        return opened[name]

    yield get
    for manager in reversed(stack):
        manager.__exit__(None, None, None)


def _db(engine: str) -> Database:
    return Database.model_validate({**USERS_DB, "dialect": DIALECT[engine]})


def _run(engine_runs: Any, case: Case, sql: str) -> Any:
    run = engine_runs(case.engine)
    return run(sql, case.setting) if case.engine in ("mariadb", "postgres") else run(sql)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.engine}:{c.sql!r}:{c.setting or ''}" for c in CASES])
def test_engine_behaviour_next_to_the_verdict(case: Case, engine_runs: Any) -> None:
    assert _run(engine_runs, case, case.sql) == case.runs, f"the engine's reading changed: {case}"
    report = validate_sql(case.sql, _db(case.engine))
    if case.verdict == VALID:
        assert report.errors == [] and report.valid is True, report
        dialect = DIALECT[case.engine]
        validated = sqlglot.parse_one(case.sql, read=dialect).sql(dialect=dialect, comments=False)
        assert _run(engine_runs, case, validated) == case.runs, f"validated {validated!r} runs differently"
    else:
        assert report.valid is False and case.verdict in report.errors[0], report.errors


# --- the issue's statements on MariaDB: the hidden part runs --------------------------------------

ISSUE = [
    "SELECT id FROM users /*! INTO OUTFILE '/tmp/pwn.txt' */",
    "SELECT email FROM users /*!, LOAD_FILE('/etc/passwd') */",
    "SELECT email /*!, LOAD_FILE('/etc/passwd') */ FROM users",
    "SELECT 1 /*!50000 UNION SELECT LOAD_FILE('/etc/passwd') */",
    "SELECT 1 /*+ SET_VAR(sql_mode='') */",
    "SELECT @a := 1",
]


def test_the_issues_statements_run_their_hidden_part_on_mariadb(engine_runs: Any) -> None:
    run = engine_runs("mariadb")
    # as written, the comment lands after FROM users: a syntax error once MariaDB reads it ...
    assert run(ISSUE[1]) == ERROR and run("SELECT email FROM users") == [("ann@example.com",)]
    # ... before FROM it adds a column (the file's bytes, or NULL without the FILE privilege)
    assert [len(row) for row in run("SELECT email /*!, LOAD_FILE('/etc/passwd') */ FROM users")] == [2]
    assert len(run(ISSUE[3])) == 2  # one row more: the UNION ran
    # INTO OUTFILE runs too: aimed at a folder that does not exist, it fails instead of writing
    missing = f"/nonexistent-{uuid.uuid4().hex}/pwn.txt"
    assert run(f"SELECT id FROM users /*! INTO OUTFILE '{missing}' */") == ERROR
    assert run("SELECT id FROM users") == [(7,)]
    # ... and into a user variable, visible to the next statement of the session
    assert run("SELECT id FROM users /*! INTO @pwn */") == [] and run("SELECT @pwn") == [(7,)]
    assert run("SELECT @a := 41") == [(41,)] and run("SELECT @a") == [(41,)]  # an assignment


@pytest.mark.parametrize("sql", ISSUE)
def test_the_issues_statements_are_rejected_on_a_mysql_database(sql: str) -> None:
    report = validate_sql(sql, _db("mariadb"))
    assert report.valid is False and report.errors
    assert any(k in report.errors[0] for k in ("executable comment", "optimizer hint", "assignment"))
