"""What ``schemarag eval`` prints by default: a table a person reads, not the metrics JSON.

One row per method (the shipped ``hybrid`` ranking, then the baselines) with CR@B per budget,
column SRR (names and DDL), table recall, context ratio, mean tables kept and latency; then, with
``--cross-validate``, the held-out row and the knobs chosen. The full payload is what ``--json``
prints and ``--out`` writes.

>>> m = {"complete_recall": {"5": 0.5, "15": 1.0}, "column_srr": 0.9, "column_srr_ddl": 0.4,
...      "table_recall": 1.0, "context_ratio": 0.25, "mean_tables_kept": 7.0,
...      "latency_ms": {"p50": 4.0, "p95": 9.0}}
>>> print(format_summary({"setting": "per-db, question", "questions": 2, "metrics": m}))
eval: per-db, question, 2 questions
method  CR@5   CR@15  col SRR  DDL SRR  table recall  context ratio  tables  p50 ms  p95 ms
hybrid  0.500  1.000  0.900    0.400    1.000         0.250          7.0     4.0     9.0
"""

from __future__ import annotations

from typing import Any

_HEAD = ("col SRR", "DDL SRR", "table recall", "context ratio", "tables", "p50 ms", "p95 ms")


def _row(name: str, m: dict[str, Any], budgets: list[str]) -> list[str]:
    lat = m.get("latency_ms") or {}
    cells = [name, *(f"{m['complete_recall'].get(b, float('nan')):.3f}" for b in budgets)]
    cells += [f"{m.get(k, float('nan')):.3f}" for k in ("column_srr", "column_srr_ddl", "table_recall")]
    cells += [f"{m.get('context_ratio', float('nan')):.3f}", f"{m.get('mean_tables_kept', float('nan')):.1f}"]
    cells += [f"{lat['p50']:.1f}" if "p50" in lat else "-", f"{lat['p95']:.1f}" if "p95" in lat else "-"]
    return cells


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def format_summary(payload: dict[str, Any]) -> str:
    """The table of :mod:`schemarag.tools.evaluation.harness`'s payload (see the module docstring)."""
    lines = [f"eval: {payload.get('setting', '?')}, {payload.get('questions', '?')} questions"]
    focus = payload.get("focus")
    if focus:
        lines[0] += f", focus {focus}" + (" (adaptive budget)" if payload.get("adaptive") else "")
    label = (payload.get("inputs") or {}).get("label")
    if label and not (payload.get("inputs") or {}).get("symmetric", True):
        lines.append(f"inputs: {label} (ASYMMETRIC)")
    methods = []
    if "metrics" in payload:
        methods.append((payload.get("method", "hybrid"), payload["metrics"]))
    methods += list((payload.get("baselines") or {}).items())
    cv = payload.get("cross_validation")
    if cv:
        methods.append((f"LODO ({cv.get('family', '?')})", cv["cross_validated"]))
    if methods:
        budgets = list(methods[0][1]["complete_recall"])
        head = ["method", *(f"CR@{b}" for b in budgets), *_HEAD]
        lines += _table([head, *(_row(n, m, budgets) for n, m in methods)])
    if cv:
        lines.append(f"chosen on all databases: {cv.get('chosen_on_all')}")
        objective = cv.get("objective")
        if objective:
            lines.append(f"objective: {objective}; protocol: {cv.get('protocol', '')}")
    return "\n".join(lines)
