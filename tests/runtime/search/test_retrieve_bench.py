"""``schemarag bench retrieve`` on the real b2b_saas artifact: both sides, same questions.

Latency values are not asserted (benchmarks print numbers; tests assert behaviour).
"""

from __future__ import annotations

import json
from pathlib import Path

from schemarag.cli import main

QUESTIONS = Path(__file__).resolve().parents[3] / "data" / "questions" / "b2b_saas.jsonl"


def test_bench_retrieve_compares_latency_and_results(built_artifacts: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "bench.json"
    argv = ["bench", "retrieve", "--artifacts", str(built_artifacts), "--synthetic", "0"]
    rc = main([*argv, "--repeats", "6", "--questions", str(QUESTIONS), "--out", str(out)])
    stdout, stderr = capsys.readouterr()
    assert rc == 0, stderr
    (res,) = json.loads(out.read_text())["results"]
    assert res["database"] == "b2b_saas" and res["requests"] == 6
    for side in ("schemarag_ms", "lancedb_hybrid_ms", "query_embed_ms"):
        assert 0 < res[side]["p50"] <= res[side]["p95"]
    # both sides embed: no speed-up can beat (embed + lance search) / embed
    assert res["speedup_ceiling_p50"] > 1
    quality = res["result_quality"]
    assert quality["questions"] == 6  # the first six questions, each asked once
    for key in ("schemarag_gold_table_recall", "lancedb_gold_table_recall"):
        assert 0.0 <= quality[key] <= 1.0
    assert 0.0 <= res["topk_overlap"] <= 1.0
    assert "gold-table recall" in stdout and "speed-up ceiling" in stdout
