"""Complete recall by how many tables a question joins, from a history-folds predictions file.

A set's CR@B averages questions of one table with questions of four, and the history does most
for the second kind: a question names one or two of its tables, and the tables analysts read
with them bring the rest. The warehouse the issue-38 targets name last asks questions of about
four tables, so the rows of three and four tables of a stand-in are the closer figure to it than
the set's mean.

    python -m schemarag.tools.evaluation.by_join_size reports/coded/flat_predictions.jsonl \\
        [--chart reports/coded/flat_by_join_size.png]

reads the rows ``schemarag eval --query-log-folds K --predictions F.jsonl`` writes (``gold``, and
``kept_without`` / ``kept_shipped`` / ``kept_held_out`` per budget) and prints, per number of gold
tables (the last row: that many or more), the questions and CR@B of each setting.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from schemarag.tools.evaluation.metrics import complete_recall_at

SETTINGS = {"kept_without": "without", "kept_shipped": "shipped", "kept_held_out": "held out"}


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The predictions file's rows; a line that is no row with ``gold`` is a one-line error."""
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if not isinstance(row, dict) or not isinstance(row.get("gold"), list):
                raise SystemExit(
                    f"{path}: line {number} is not a predictions row with 'gold'; pass the file "
                    "`schemarag eval --query-log-folds K --predictions F.jsonl` wrote"
                )
            rows.append(row)
    return rows


def by_join_size(rows: Iterable[dict[str, Any]], largest: int = 4) -> dict[int, dict[str, Any]]:
    """``{tables: {"questions": n, setting: {budget: CR}}}``, ``largest`` holding that many or more.

    >>> rows = [{"gold": ["a"], "kept_without": {"5": ["a"]}},
    ...         {"gold": ["a", "b"], "kept_without": {"5": ["a"]}},
    ...         {"gold": ["a", "b"], "kept_without": {"5": ["b", "a"]}}]
    >>> by_join_size(rows)
    {1: {'questions': 1, 'without': {'5': 1.0}}, 2: {'questions': 2, 'without': {'5': 0.5}}}
    """
    groups: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(min(len(set(row["gold"])), largest), []).append(row)
    out: dict[int, dict[str, Any]] = {}
    for size in sorted(groups):
        group = groups[size]
        entry: dict[str, Any] = {"questions": len(group)}
        for key, label in SETTINGS.items():
            budgets = group[0].get(key)
            if not isinstance(budgets, dict):
                continue
            complete = [complete_recall_at(r[key], r["gold"]) for r in group]  # the evaluation's rule
            entry[label] = {  # budgets in increasing order: a warehouse row holds 20, 10, 5
                b: round(sum(c[b] for c in complete) / len(group), 3) for b in sorted(budgets, key=int)
            }
        out[size] = entry
    return out


def table(got: dict[int, dict[str, Any]], largest: int = 4) -> list[str]:
    """The printed lines: the budgets, then one line per join size with CR@B per setting."""
    first = next(iter(got.values()), {})
    budgets = next((list(first[label]) for label in SETTINGS.values() if label in first), [])
    lines = ["CR@" + " / ".join(budgets) + " per setting"]
    for size, entry in got.items():
        name = f"{size}+" if size == largest else str(size)
        cells = [
            f"{label} " + " / ".join(f"{v:.3f}" for v in entry[label].values())
            for label in SETTINGS.values()
            if label in entry
        ]
        lines.append(f"{name:>2} table(s), {entry['questions']:5d} questions: " + "; ".join(cells))
    return lines


def chart(got: dict[int, dict[str, Any]], path: Path, title: str, largest: int = 4) -> Path:
    """CR at the largest budget per join size and setting, as grouped bars."""
    from schemarag.tools.benchmarks.charts import grouped_bars

    sizes = list(got)
    labels = [f"{s}+ tables" if s == largest else f"{s} table{'s' if s > 1 else ''}" for s in sizes]
    labels = [f"{lab} ({got[s]['questions']} q)" for lab, s in zip(labels, sizes, strict=True)]
    settings = [lab for lab in SETTINGS.values() if all(lab in got[s] for s in sizes)]
    budget = list(got[sizes[0]][settings[0]])[-1]
    series = {lab: [got[s][lab][budget] for s in sizes] for lab in settings}
    return grouped_bars(
        path, labels, series, ylabel=f"complete recall CR@{budget}", title=title, fmt="{:.3f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions", type=Path, help="the --predictions file of eval --query-log-folds")
    parser.add_argument("--largest", type=int, default=4, help="the last row: this many tables or more")
    parser.add_argument("--chart", type=Path, help="write CR at the largest budget per join size as a PNG")
    args = parser.parse_args(argv)
    if not args.predictions.is_file():
        print(f"{args.predictions}: no such file; pass a --predictions file", file=sys.stderr)
        return 2
    got = by_join_size(read_rows(args.predictions), max(1, args.largest))
    print("\n".join(table(got, max(1, args.largest))))
    if args.chart:
        args.chart.parent.mkdir(parents=True, exist_ok=True)
        title = f"Complete recall by tables joined - {args.predictions.stem}"
        print(f"wrote {chart(got, args.chart, title, max(1, args.largest))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
