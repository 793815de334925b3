"""``schemarag bench build`` runs all three phases on a copy, and ``bench`` degrades per sub-command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from schemarag.cli import build_parser, main
from schemarag.tools.commands.bench_cmd import BenchmarkUnavailableError, load_benchmark
from schemarag.tools.commands.bench_cmd import run as bench_run


def test_bench_build_reports_cold_warm_and_noop(data_copy: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench.json"
    before = sorted(p.name for p in data_copy.rglob("*"))
    argv = ["bench", "build", "--data", str(data_copy), "--db", "ecommerce", "--repeats", "1"]
    rc = main([*argv, "--max-noop-seconds", "1e9", "--out", str(out)])  # no timing assert here
    stdout, stderr = capsys.readouterr()
    assert rc == 0, stderr
    res = json.loads(out.read_text())
    cold, warm, noop = res["cold"], res["warm"], res["noop"]
    assert cold["chunks"] == cold["embedded"] > 0 and cold["cache_hits"] == 0
    assert warm["chunks"] == warm["cache_hits"] == cold["chunks"] and warm["embedded"] == 0
    assert cold["chunks_per_s"] > 0 and warm["chunks_per_s"] > 0
    assert noop["wall_s"] > noop["interpreter_startup_s"] > 0
    assert noop["rebuild_s"] == pytest.approx(noop["wall_s"] - noop["interpreter_startup_s"])
    assert noop["command"][-2:] == ["--db", "ecommerce"] and "build" in noop["command"]
    for label in ("cold build (empty cache)", "warm-cache build", "no-op rebuild", "no-op key check"):
        assert label in stdout
    assert "cold build: ecommerce" in stderr, "progress goes to stderr"
    assert sorted(p.name for p in data_copy.rglob("*")) == before, "the input data is never touched"


def test_data_option_before_or_after_the_benchmark_name() -> None:
    after = build_parser(["bench"]).parse_args(["bench", "build", "--data", "D"])
    before = build_parser(["bench"]).parse_args(["bench", "--data", "D", "build"])
    neither = build_parser(["bench"]).parse_args(["bench", "build"])
    assert after.data == before.data == "D" and neither.data is None


def test_missing_benchmark_module_is_a_clear_error_not_a_crash() -> None:
    module, why = load_benchmark("nonexistent")
    assert module is None and "schemarag.tools.benchmarks.nonexistent_bench does not exist yet" in why
    args = argparse.Namespace(benchmark="nonexistent", bench_unavailable=why)
    with pytest.raises(BenchmarkUnavailableError, match=r"bench nonexistent: .*does not exist yet"):
        bench_run(args)
