"""The public entry points: ``from runtime import Retriever, retrieve`` and ``schemarag retrieve``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.cli import main
from schemarag.runtime.core.errors import ConfigError

KEYS = {"text", "source_url", "title", "chunk_id", "score", "table", "chunk_type", "column"}
CHUNK_KEYS = {"chunk_id", "table", "chunk_type", "column", "score", "title", "source_url", "text"}
META_KEYS = {
    "total_chunks_searched",
    "chunks_returned",
    "avg_relevance_score",
    "tables_included",
    "expanded_tables",
    "artifact_key",
    "timings_ms",
}
REPO = Path(__file__).resolve().parents[3]


def test_public_imports() -> None:
    from schemarag.runtime import Retriever, retrieve

    assert callable(retrieve) and hasattr(Retriever, "open")


def test_retrieve_returns_dicts_best_first(built_artifacts: Path) -> None:
    from schemarag.runtime.api import retrieve

    rows = retrieve("Show me all orders from last month", database="ecommerce", artifacts=built_artifacts)
    assert 1 <= len(rows) <= 8  # default top_k is 8
    for row in rows:
        assert set(row) == KEYS
        assert isinstance(row["text"], str) and row["text"]
        assert isinstance(row["chunk_id"], str) and row["chunk_id"]
        assert 0.3 <= row["score"] <= 1.0
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert rows[0]["table"] == "orders"
    assert rows[0]["source_url"].endswith("orders.md")


def test_retrieve_default_top_k_is_8(built_artifacts: Path) -> None:
    from schemarag.runtime.api import retrieve

    rows = retrieve(
        "Which users have placed the most orders?", database="ecommerce", artifacts=built_artifacts
    )
    assert len(rows) == 8
    assert (
        len(retrieve("Which users have placed the most orders?", 3, "ecommerce", artifacts=built_artifacts))
        == 3
    )


def test_retrieve_reads_database_and_artifacts_from_environment(
    built_artifacts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schemarag.runtime.api import retrieve

    monkeypatch.setenv("SCHEMARAG_DATABASE", "b2b_saas")
    monkeypatch.setenv("SCHEMARAG_ARTIFACTS", str(built_artifacts))
    rows = retrieve("Which invoice line items belong to each invoice?", top_k=2)
    assert len(rows) == 2 and rows[0]["table"] == "invoice_line_items"


def test_retrieve_without_database_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from schemarag.runtime.api import retrieve

    monkeypatch.delenv("SCHEMARAG_DATABASE", raising=False)
    with pytest.raises(ConfigError, match="SCHEMARAG_DATABASE"):
        retrieve("orders")


def test_retrieve_off_topic_is_empty_list(built_artifacts: Path) -> None:
    from schemarag.runtime.api import retrieve

    assert (
        retrieve("What is the weather in Paris today?", database="ecommerce", artifacts=built_artifacts) == []
    )


def test_retrieve_empty_question_is_value_error(built_artifacts: Path) -> None:
    from schemarag.runtime.api import retrieve

    with pytest.raises(ValueError):
        retrieve("   ", database="ecommerce", artifacts=built_artifacts)


def _cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["retrieve", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_json_shape(built_artifacts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _cli_json(
        capsys, "--artifacts", str(built_artifacts), "--db", "ecommerce", "Show me all orders from last month"
    )
    assert set(out) == {"database", "tables", "expanded_tables", "ranking", "chunks", "metadata"}
    assert out["database"] == "ecommerce" and out["tables"][0] == "orders"
    assert [t["table"] for t in out["ranking"]["tables"]] == sorted(
        out["tables"] + out["expanded_tables"], key=[t["table"] for t in out["ranking"]["tables"]].index
    )
    assert 1 <= len(out["chunks"]) <= 5
    for chunk in out["chunks"]:
        assert set(chunk) == CHUNK_KEYS
    assert out["chunks"][0]["table"] == "orders"
    meta = out["metadata"]
    assert set(meta) >= META_KEYS
    assert meta["chunks_returned"] == len(out["chunks"])
    assert meta["tables_included"][0] == "orders"
    assert meta["expanded_tables"] == [] or "users" in meta["expanded_tables"] + meta["tables_included"]
    assert meta["artifact_key"] == (built_artifacts / "ecommerce" / "CURRENT").read_text().strip()
    assert meta["timings_ms"] is None


def test_cli_top_k_threshold_and_debug(built_artifacts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = [
        "--artifacts",
        str(built_artifacts),
        "--db",
        "ecommerce",
        "Which users have placed the most orders?",
    ]
    out = _cli_json(capsys, *base, "--top-k", "3", "--debug")
    assert len(out["chunks"]) == 3
    scores = [c["score"] for c in out["chunks"]]
    assert scores == sorted(scores, reverse=True)
    timings = out["metadata"]["timings_ms"]
    assert {"load", "tokenize", "embed", "search", "rank", "expand", "format"} <= set(timings)
    strict = _cli_json(capsys, *base, "--top-k", "20", "--threshold", "0.5")
    assert strict["chunks"] and all(c["score"] >= 0.5 for c in strict["chunks"])
    assert strict["metadata"]["relevance_threshold"] == 0.5


def test_cli_reads_environment_defaults(
    built_artifacts: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOC_RETRIEVAL_TOP_K", "2")
    monkeypatch.setenv("SCHEMARAG_ARTIFACTS", str(built_artifacts))
    out = _cli_json(capsys, "--db", "ecommerce", "Which users have placed the most orders?")
    assert len(out["chunks"]) == 2


def test_cli_text_output(built_artifacts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["retrieve", "--artifacts", str(built_artifacts), "--db", "ecommerce"]
    assert main([*args, "Show me all orders from last month", "--debug"]) == 0
    out = capsys.readouterr().out
    assert "orders.created_at" in out and "timings (ms)" in out
    focused = out.split("focused tables (default focus, ", 1)[1].split("evidence: top ", 1)[0]
    assert focused.splitlines()[1].split()[:3:2] == ["1.", "orders:"]  # the best table first, numbered
    assert main([*args, "What is the weather in Paris today?"]) == 0
    assert "no relevant documentation found" in capsys.readouterr().out


def test_cli_user_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrieve", "--artifacts", str(tmp_path), "--db", "ecommerce", "orders"]) == 2
    err = capsys.readouterr().err.strip()
    assert "schemarag build" in err and len(err.splitlines()) == 1
    assert main(["retrieve", "--artifacts", str(tmp_path), "--db", "../x", "orders"]) == 2
    assert "invalid database" in capsys.readouterr().err


def test_cli_empty_question_exits_2(built_artifacts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrieve", "--artifacts", str(built_artifacts), "--db", "ecommerce", "  "]) == 2
    assert "empty" in capsys.readouterr().err


def test_installed_console_script_prints_json(built_artifacts: Path) -> None:
    """The real entry point in a fresh interpreter (also proves `runtime` imports without Dagster)."""
    exe = Path(sys.executable).with_name("schemarag")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "schemarag.cli"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [*cmd, "retrieve", "--artifacts", str(built_artifacts), "--db", "ecommerce", "--json",
         "shwo me ordres from lsat month"],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["chunks"] and out["chunks"][0]["table"] == "orders"


def test_runtime_import_does_not_load_dagster(built_artifacts: Path) -> None:
    code = (
        "import sys, runtime; from runtime import Retriever, retrieve;"
        f"r = Retriever.open('ecommerce', artifacts={str(built_artifacts)!r});"
        "r.search('orders last month');"
        "assert 'dagster' not in sys.modules, 'dagster imported'; print('ok')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_cli_lists_tables_in_rank_order_and_names_what_a_neighbour_joins(
    built_artifacts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Numbers give the order (a neighbour follows the table it joins, whatever its score), and
    an FK neighbour names that better-ranked kept table."""
    args = ["retrieve", "--artifacts", str(built_artifacts), "--db", "b2b_saas"]
    assert main([*args, "unpaid invoices by sales rep"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if re.match(r"^\s+\d+\. \d\.\d{3}\s", line)]
    assert [int(line.split()[0].rstrip(".")) for line in lines] == list(range(1, len(lines) + 1))
    tables = [line.split()[2].rstrip(":") for line in lines]
    neighbours = [
        (table, m.group(1))
        for table, line in zip(tables, lines, strict=True)
        if (m := re.search(r"\[FK neighbour of ([\w.]+)\]", line))
    ]
    assert neighbours  # this question takes at least one (accounts with invoices)
    for table, joined in neighbours:
        assert tables.index(joined) < tables.index(table)
