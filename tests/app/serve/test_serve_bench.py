"""``schemarag bench serve``: distinct questions, and one short real run (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.tools.benchmarks.serve_bench import distinct_questions

REPO = Path(__file__).resolve().parents[3]


def test_questions_never_repeat() -> None:
    qs = distinct_questions(REPO / "data" / "questions", 20_000)
    assert len(qs) == len(set(qs)) == 20_000
    sample = {json.loads(line)["question"] for line in (REPO / "data/questions/ecommerce.jsonl").open()}
    assert sum(any(s in q for s in sample) for q in qs[:2000]) > 100  # built from the sample questions


@pytest.mark.slow
def test_bench_serve_runs_against_a_real_server(serve_artifacts: Path, tmp_path: Path) -> None:
    out_json, chart = tmp_path / "serve.json", tmp_path / "serve.png"
    run = subprocess.run(
        [sys.executable, "-m", "schemarag", "bench", "serve", "--artifacts", str(serve_artifacts),
         "--db", "shop", "--connections", "2", "--duration", "2", "--warmup", "0.5", "--workers", "1",
         "--client", "httpx", "--out", str(out_json), "--chart", str(chart)],
        capture_output=True, text=True, timeout=600, cwd=REPO,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    level = json.loads(out_json.read_text())["levels"][0]
    assert level["connections"] == 2 and level["requests_ok"] > 0 and level["errors"] == 0
    assert level["p50_ms"] <= level["p95_ms"] <= level["p99_ms"]
    assert chart.stat().st_size > 10_000 and "req/s" in run.stdout
