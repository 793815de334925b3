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
