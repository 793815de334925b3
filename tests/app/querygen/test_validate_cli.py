"""``schemarag validate`` through the real CLI entry point, on tiny real indexes (see tiny_support)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from schemarag.cli import main


def run_cli(capsys, tiny: tuple[Path, Path], *argv: str) -> tuple[int, str, str]:
    data, artifacts = tiny
    code = main(["validate", "--data", str(data), "--artifacts", str(artifacts), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_valid_sql_exits_0(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", "SELECT c.full_name FROM customers c")
    assert code == 0
    assert out.startswith("valid (tables: customers; DuckDB bind checked)")


def test_invalid_sql_exits_1_with_the_errors(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", "SELECT pg_sleep_for('1 hour') FROM customers")
    assert code == 1
    assert out.splitlines() == [
        "invalid:",
        "  error: not allowed: function pg_sleep_for() is not on the postgres allow-list of "
        "side-effect-free functions",
    ]


def test_json_report(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", "--json", "SELECT total_amnt FROM orders")
    report = json.loads(out)
    assert code == 1
    assert (report["database"], report["tenant"], report["dialect"], report["valid"]) == (
        "shop",
        None,
        "postgres",
        False,
    )
    assert "'total_amnt'" in report["errors"][0] and "did you mean orders.total_amount" in report["errors"][0]


def test_sql_from_stdin(tiny, capsys, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("SELECT id FROM orders\n"))
    assert run_cli(capsys, tiny, "--db", "shop", "-")[0] == 0


def test_a_tenant_sees_its_own_schema(tiny, capsys) -> None:
    code, out, _ = run_cli(
        capsys, tiny, "--tenant", "globex", "--db", "globex_hr", "SELECT salary_band FROM salaries"
    )
    assert (code, out.splitlines()[0]) == (0, "valid (tables: salaries; DuckDB bind checked)")


@pytest.mark.parametrize(
    ("tenant", "db"),
    [("acme", "globex_hr"), (None, "globex_hr"), ("globex", "acme_crm"), ("acme", "no_such_db")],
)
def test_another_tenants_database_is_not_found(tiny, capsys, tenant: str | None, db: str) -> None:
    """Same exit code and kind of message as a database that does not exist: nothing leaks."""
    args = ["--tenant", tenant] if tenant else []
    code, out, err = run_cli(capsys, tiny, *args, "--db", db, "SELECT salary_band FROM salaries")
    assert code == 2 and out == ""
    assert err.startswith("schemarag validate: error: ") and "salar" not in err


def test_usage_error_exits_2(tiny, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        run_cli(capsys, tiny, "SELECT 1")  # no --db
    assert info.value.code == 2


def test_json_keys_are_snake_case(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", "--json", "SELECT id FROM orders")
    assert code == 0
    assert json.loads(out) == {
        "database": "shop", "tenant": None, "dialect": "postgres", "valid": True, "errors": [],
        "warnings": [], "tables": ["orders"], "bind_checked": True, "unchecked_reason": None,
    }  # fmt: skip


UNCHECKED = "SELECT full_name FROM customers WHERE id = $1"  # DuckDB cannot bind without a value


def test_unchecked_sql_exits_3_and_says_why(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", UNCHECKED)
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == "unchecked: no error found, but the SQL is not known to be valid (tables: customers)"
    assert lines[1].startswith("  reason: DuckDB could not bind the query: ")
    assert "Values were not provided for the following parameters: 1" in lines[1]


def test_unchecked_json_says_valid_null_with_the_reason(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", "--json", UNCHECKED)
    report = json.loads(out)
    assert code == 3
    assert (report["valid"], report["errors"], report["bind_checked"]) == (None, [], False)
    assert "Values were not provided" in report["unchecked_reason"]


def test_an_executable_comment_exits_1_naming_it(tiny, capsys) -> None:
    code, out, _ = run_cli(capsys, tiny, "--db", "shop", "SELECT id FROM orders /*!, version() */")
    assert code == 1
    assert out.startswith("invalid:\n  error: not allowed: executable comment /*!, version() */;")


def test_help_lists_the_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["validate", "-h"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    for line in ("0  valid:", "1  invalid:", "2  usage error", "3  unchecked:"):
        assert line in out, out
    assert '"valid" is true, false or null' in out
