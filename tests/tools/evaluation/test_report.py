"""The report: a markdown table and real PNG files written with matplotlib's Agg backend."""

from __future__ import annotations

from pathlib import Path

from schemarag.tools.evaluation.report import markdown_table, write_report


def _metrics(cr5: float, cr10: float) -> dict:
    return {
        "complete_recall": {"5": cr5, "10": cr10},
        "column_srr": 0.5,
        "table_recall": 0.9,
        "precision": 0.3,
        "context_ratio": 0.1,
        "mrr": 0.8,
        "latency_ms": {"p50": 12.0, "p95": 30.5},
        "metrics_budget": 10,
    }


PAYLOAD = {
    "setting": "per-db, question",
    "questions": 3,
    "method": "hybrid",
    "metrics": _metrics(0.6, 0.9),
    "baselines": {"bm25": _metrics(0.4, 0.7), "hybrid_no_fk": _metrics(0.5, 0.8)},
}


def test_markdown_table_has_a_row_per_method() -> None:
    lines = markdown_table(PAYLOAD).splitlines()
    assert lines[0].startswith("| method | CR@5 | CR@10 | col SRR")
    assert [line.split("|")[1].strip() for line in lines[2:]] == ["`hybrid`", "`bm25`", "`hybrid_no_fk`"]
    assert "| 0.6000 | 0.9000 |" in lines[2] and lines[2].endswith("| 12.0 | 30.5 |")


def test_write_report_writes_markdown_and_pngs(tmp_path: Path) -> None:
    paths = write_report(PAYLOAD, tmp_path / "report")
    assert [p.name for p in paths] == ["report.md", "recall_vs_budget.png", "latency.png"]
    for png in paths[1:]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert "![complete recall vs budget](recall_vs_budget.png)" in paths[0].read_text()
