"""``schemarag bench prompt`` on the real b2b_saas index: every prompt mode measured, a chart drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_bench_prompt_measures_every_mode_and_charts_it(
    built_artifacts: Path, tmp_path: Path, capsys
) -> None:
    out, chart = tmp_path / "prompt.json", tmp_path / "prompt.png"
    spec = f"b2b_saas={REPO / 'data/questions/b2b_saas.jsonl'}@{built_artifacts}"
    argv = ["bench", "prompt", "--set", spec, "--limit", "3", "--out", str(out), "--chart", str(chart)]
    assert main(argv) == 0
    (row,) = json.loads(out.read_text())
    modes = row["ranked_modes"]
    assert set(modes) == {"focus default", "focus compact", "adaptive"}
    for m in modes.values():  # every budgeted mode is a fraction of the full prompt
        assert 0 < m["prompt_tokens"] < row["full_prompt_tokens"]
        assert m["ratio"] == pytest.approx(m["prompt_tokens"] / row["full_prompt_tokens"], abs=0.002)
    assert (
        modes["adaptive"]["prompt_tokens"] <= modes["focus default"]["prompt_tokens"]
    )  # fewer tables, same focus
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "focus compact tok (ratio)" in capsys.readouterr().out
