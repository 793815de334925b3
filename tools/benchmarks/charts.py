"""PNG charts for the benchmarks: labelled axes, a log scale where values span a wide range.

Every ``schemarag bench`` command writes one PNG (``reports/bench_<name>.png`` unless
``--chart`` says otherwise). A latency chart with 3 ms next to 266 ms on a linear axis makes
the small bar invisible, which is the bar the reader came for; so :func:`grouped_bars` switches
to a log axis when the largest value is at least :data:`WIDE_RATIO` times the smallest, says so
in the axis label, and prints every value above its bar.

matplotlib (the ``eval`` extra) is imported lazily with the Agg backend: no display needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

WIDE_RATIO = 10.0  # max/min at or above this: log axis (a linear one leaves the small bar < 1/10 tall)


def is_wide(values: Sequence[float]) -> bool:
    """True when positive values span at least WIDE_RATIO (a linear axis would hide the small ones).

    >>> is_wide([3.1, 266.0]), is_wide([40.0, 56.0]), is_wide([0.0, 5.0])
    (True, False, False)
    """
    positive = [v for v in values if v > 0]
    return len(positive) >= 2 and max(positive) / min(positive) >= WIDE_RATIO


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _log_axis(ax: Any, positive: list[float]) -> None:
    """Log y axis from a third of the smallest value (so the smallest bar has a visible height),
    with plain-number ticks at 1, 2 and 5 times each power of ten (not just 10^k)."""
    import math

    from matplotlib.ticker import FixedLocator, NullLocator

    low, high = min(positive) / 3, max(positive) * 1.6
    ax.set_yscale("log")
    ax.set_ylim(low, high)
    ticks = [m * 10.0**e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
             for m in (1, 2, 5) if low <= m * 10.0**e <= high]  # fmt: skip
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])


def grouped_bars(
    path: Path,
    categories: Sequence[str],
    series: dict[str, Sequence[float]],
    ylabel: str,
    title: str,
    upper: dict[str, Sequence[float]] | None = None,
    fmt: str = "{:.3g}",
    hline: tuple[float, str] | None = None,
) -> Path:
    """One group of bars per category, one bar per series; ``upper`` adds whiskers (e.g. p95)."""
    import numpy as np

    plt = _pyplot()
    values = [v for vs in series.values() for v in vs] + [v for vs in (upper or {}).values() for v in vs]
    log = is_wide(values)
    fig, ax = plt.subplots(figsize=(max(6.5, 1.6 * len(categories) * max(1, len(series)) / 2 + 3), 4.5))
    x = np.arange(len(categories))
    width = 0.8 / max(1, len(series))
    for i, (name, vals) in enumerate(series.items()):
        offs = x - 0.4 + width * (i + 0.5)
        err = None
        if upper and name in upper:
            err = [[0] * len(vals), [max(0.0, u - v) for u, v in zip(upper[name], vals, strict=True)]]
        ax.bar(offs, vals, width, label=name, yerr=err, capsize=4 if err else 0)
        tops = upper[name] if upper and name in upper else vals  # label above the whisker, not on it
        for xo, v, top in zip(offs, vals, tops, strict=True):
            ax.annotate(fmt.format(v), (xo, max(v, top)), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8)  # fmt: skip
    if hline is not None:
        ax.axhline(hline[0], color="tab:red", linestyle="--", linewidth=1, label=hline[1])
    ax.set_xticks(x, list(categories))
    if log:
        _log_axis(ax, [v for v in values if v > 0])
        ax.set_ylabel(f"{ylabel} (log scale)")
    else:
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, max([*values, hline[0] if hline else 0]) * 1.18 or 1)
    ax.set_title(title)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def build_chart(res: dict[str, Any], path: Path) -> Path:
    """``bench build``: chunks/s per database, cold (empty embedding cache) vs warm cache."""
    dbs = [d["database"] for d in res["cold"]["databases"]]
    return grouped_bars(
        path,
        dbs,
        {
            "cold build (empty cache)": [d["chunks_per_s"] for d in res["cold"]["databases"]],
            "warm-cache build": [d["chunks_per_s"] for d in res["warm"]["databases"]],
        },
        ylabel="chunks per second (whole Dagster run)",
        title=f"Build throughput (no-op rebuild {res['noop']['rebuild_s']:.2f} s)",
        fmt="{:.1f}",
    )


def prompt_chart(rows: list[dict[str, Any]], path: Path) -> Path:
    """``bench prompt``: mean prompt tokens per database: full schema, focused schema (retrieved
    tables + FK neighbours) and each budgeted-ranking mode (focus default / compact, adaptive)."""
    return grouped_bars(
        path,
        [f"{r['database']}\n({r['tables']} tables)" for r in rows],
        {
            "full schema": [r["full_prompt_tokens"] for r in rows],
            "focused (retrieved + FK)": [r["focused_prompt_tokens"] for r in rows],
            **{
                f"ranked, {name}": [r["ranked_modes"][name]["prompt_tokens"] for r in rows]
                for name in (rows[0].get("ranked_modes") or {} if rows else {})
            },
        },
        ylabel="prompt tokens per question (mean, estimated)",
        title="Prompt size: full vs focused schema",
        fmt="{:,.0f}",
    )


def calibration_chart(rows: list[dict[str, Any]], path: Path, threshold: float = 0.3) -> Path:
    """``bench calibration``: top-1 relevance of on-topic vs off-topic questions, and the threshold."""
    return grouped_bars(
        path,
        [r["database"] for r in rows],
        {
            "on-topic min": [r["on_min"] for r in rows],
            "on-topic median": [r["on_median"] for r in rows],
            "off-topic median": [r["off_median"] for r in rows],
            "off-topic max": [r["off_max"] for r in rows],
        },
        ylabel="top-1 relevance score [0, 1]",
        title="Score calibration: on-topic vs off-topic questions",
        fmt="{:.2f}",
        hline=(threshold, f"threshold {threshold}"),
    )


def retrieve_chart(results: list[dict[str, Any]], path: Path) -> Path:
    """``bench retrieve``: p50 (bar) and p95 (whisker) latency, schemarag vs LanceDB hybrid."""
    keys = (("schemarag_ms", "schemarag (mmap)"), ("lancedb_hybrid_ms", "LanceDB hybrid"))
    return grouped_bars(
        path,
        [f"{r['database']}\n({r['chunks']:,} chunks)" for r in results],
        {name: [r[key]["p50"] for r in results] for key, name in keys},
        ylabel="ms per retrieval, p50 (whisker: p95)",
        title="Warm retrieval latency, query embedding included",
        upper={name: [r[key]["p95"] for r in results] for key, name in keys},
        fmt="{:.2f}",
    )


def catalog_sweep_chart(res: dict[str, Any], path: Path) -> Path:
    """``bench catalog`` sweep: cold-build columns/s (wall, solid) and columns per CPU-second
    (dashed) against the share of documented columns, one colour per column tier."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.8))
    tiers = list(dict.fromkeys(r["column_vectors"] for r in res["sweep"]))
    for i, tier in enumerate(tiers):
        rows = sorted((r for r in res["sweep"] if r["column_vectors"] == tier), key=lambda r: r["documented"])
        xs = [100 * r["documented"] for r in rows]
        colour = f"C{i}"
        ax.plot(xs, [r["columns_per_s"] for r in rows], "o-", color=colour, label=f"{tier}: columns/s (wall)")
        ax.plot(xs, [r["columns_per_cpu_s"] for r in rows], "s--", color=colour,
                label=f"{tier}: columns per CPU-second")  # fmt: skip
    ax.axhline(300, color="grey", linestyle=":", label="target 300 columns/s")
    ax.set_xlabel("columns documented (%)")
    ax.set_ylabel("columns per second")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Cold build of a {res['sweep'][0]['columns']:,}-column catalog by column tier")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def catalog_chart(res: dict[str, Any], path: Path) -> Path:
    """``bench catalog``: wall seconds of each phase at warehouse scale (log axis: ms to minutes);
    a sweep's JSON gets :func:`catalog_sweep_chart`."""
    if "sweep" in res:
        return catalog_sweep_chart(res, path)
    phases = {
        "generate\nexport": res["generate_s"],
        "import": res["import_s"],
        "cold build": res["cold_build_s"],
        "rebuild after\none edit": res["edit_s"],
        "no-op\nrebuild": res["noop_s"],
    }
    return grouped_bars(
        path,
        list(phases),
        {"wall seconds": list(phases.values())},
        ylabel="seconds (wall)",
        title=f"Warehouse catalog: {res['tables']:,} tables, {res['columns']:,} columns "
        f"(search p50 {res['search_p50_ms']:.1f} ms)",
        fmt="{:.2f}",
    )


# bench name -> chart of the JSON that benchmark writes (retrieve and serve draw their own)
CHARTS: dict[str, Callable[[Any, Path], Path]] = {
    "build": build_chart,
    "prompt": prompt_chart,
    "calibration": calibration_chart,
    "catalog": catalog_chart,
}
