"""Human-facing evaluation reports: one markdown table and PNG charts.

The markdown table is for diffs and READMEs; the chart of complete recall against the table
budget, one line per method, is what a person looks at to see where FK expansion or dense
retrieval pays off. matplotlib is imported lazily with the Agg backend (no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# One colour per retrieval method; the no-FK variant of a method is the same colour, dashed.
_COLORS = {"hybrid": "tab:blue", "bm25": "tab:orange", "dense": "tab:green"}
_COLUMNS = ("column_srr", "table_recall", "precision", "context_ratio", "mrr")


def _methods(payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(payload.get("method", "hybrid"), payload["metrics"]), *payload.get("baselines", {}).items()]


def markdown_table(payload: dict[str, Any]) -> str:
    """One row per method: CR@B for each budget, the other metrics, latency p50/p95."""
    budgets = list(payload["metrics"]["complete_recall"])
    head = ["method", *(f"CR@{b}" for b in budgets), "col SRR", "table recall", "precision",
            "context ratio", "MRR", "p50 ms", "p95 ms"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, m in _methods(payload):
        cells = [f"`{name}`", *(f"{m['complete_recall'][b]:.4f}" for b in budgets)]
        cells += [f"{m[k]:.4f}" for k in _COLUMNS]
        cells += [f"{m['latency_ms']['p50']:.1f}", f"{m['latency_ms']['p95']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _plot_recall(payload: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    for name, m in _methods(payload):
        budgets = [int(b) for b in m["complete_recall"]]
        values = [m["complete_recall"][str(b)] for b in budgets]
        style = "-" if not name.endswith("_no_fk") else "--"
        width = 2.6 if name == payload.get("method", "hybrid") else 1.4
        base = name.removesuffix("_no_fk")
        color = _COLORS.get(base)
        ax.plot(budgets, values, style, marker="o", linewidth=width, label=name, color=color)
    ax.set_xlabel("table budget B (tables after FK expansion)")
    ax.set_ylabel("complete recall CR@B")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"Complete recall vs budget - {payload['setting']} ({payload['questions']} questions)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _plot_latency(payload: dict[str, Any], path: Path) -> None:
    """p50/p95 per method; a log axis when BM25's few ms sit next to hundreds (charts.grouped_bars)."""
    from schemarag.tools.benchmarks.charts import grouped_bars

    methods = _methods(payload)
    grouped_bars(
        path,
        [n for n, _ in methods],
        {q: [m["latency_ms"][q] for _, m in methods] for q in ("p50", "p95")},
        ylabel="ms per retrieval (warm, in-process)",
        title=f"Retrieval latency - {payload['setting']}",
        fmt="{:.1f}",
    )


def write_report(payload: dict[str, Any], out: Path) -> list[Path]:
    """Write ``report.md``, ``recall_vs_budget.png`` and ``latency.png`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    recall_png, latency_png = out / "recall_vs_budget.png", out / "latency.png"
    _plot_recall(payload, recall_png)
    _plot_latency(payload, latency_png)
    text = [
        f"# Retrieval evaluation: {payload['setting']}",
        "",
        f"{payload['questions']} questions; headline method `{payload.get('method', 'hybrid')}`. "
        f"CR@B = share of questions whose gold tables all fit in B tables (after FK expansion); "
        f"the other metrics are at B = {payload['metrics'].get('metrics_budget', '?')}.",
        "",
        markdown_table(payload),
        f"![complete recall vs budget]({recall_png.name})",
        "",
        f"![latency]({latency_png.name})",
        "",
    ]
    md = out / "report.md"
    md.write_text("\n".join(text), encoding="utf-8")
    return [md, recall_png, latency_png]
