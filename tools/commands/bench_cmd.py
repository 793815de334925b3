"""``schemarag bench <build|retrieve|prompt|calibration>``: benchmarks that print numbers (and write JSON).

Each benchmark is a module ``runtime/benchmarks/<name>_bench.py`` with ``add_arguments(parser)``
and ``run(args) -> int``, like the top-level commands. A benchmark module that is missing or
fails to import turns into a one-line error for that sub-command only, so ``bench build`` works
even while another benchmark is broken or not written yet.

    schemarag bench build [--data DIR] [--db X ...] [--json] [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from schemarag.runtime.core.errors import SchemaragError
from schemarag.tools.commands.json_output import check_json_output, print_json

BENCHMARKS: dict[str, str] = {
    "build": "build throughput (cold and warm embedding cache) and no-op rebuild time",
    "retrieve": "warm retrieval latency (p50/p95) against LanceDB hybrid search",
    "prompt": "prompt tokens: full schema vs focused schema",
    "calibration": "top-1 relevance of on-topic vs off-topic questions (is 0.3 a good threshold?)",
    "serve": "HTTP load test of a real `schemarag serve` process: throughput, p50/p95/p99, errors",
    "catalog": "warehouse-scale catalog: import, cold build columns/s, peak RSS, search p50/p95, rebuilds",
    "embed": "embedding models side by side: query embedding p50/p95, passages/s, retrieval p50/p95",
    "joins": "inferred joins (names / values / both) vs BIRD dev's declared FKs: precision, recall",
    "keys": "join keys inferred from names vs declared FKs (stripped and recovered): precision, recall",
    "validate": "SQL validator verdicts (valid / invalid / unchecked) on a question file's reference SQL",
    "dbt": "import every dbt project under a folder: tables, ephemeral/disabled, layers, errors (vs dbt ls)",
    "history": "a 10,000-statement query history: cold build and search p50 with vs without it",
    "examples": "past queries as prompt examples: added tokens vs example recall per N (history folds)",
}


IGNORED = "ignored by this benchmark"
MEASURED = "artifacts folder of the built index to measure (default: $SCHEMARAG_ARTIFACTS or artifacts)"
DATA_HELP = {
    "build": "schemas folder copied and built (default: $SCHEMARAG_DATA or data/schemas)",
    "history": "schemas folder the database is copied from (default: $SCHEMARAG_DATA or data/schemas)",
}
ARTIFACTS_HELP = {
    "build": "ignored: bench build always builds into a fresh temporary folder",
    "catalog": "ignored: bench catalog generates, imports and builds in a temporary folder",
    "joins": IGNORED,
    "keys": IGNORED,
    "validate": IGNORED,
    "dbt": IGNORED,
    "history": "ignored: bench history builds into a temporary folder",
    "examples": "ignored: bench examples reads the fold indexes of --folds",
}
# charted here from the JSON they write (tools/benchmarks/charts.py); the others draw their own
CHARTED = ("build", "prompt", "calibration", "catalog")


class BenchmarkUnavailableError(SchemaragError):
    """A benchmark sub-command whose module is missing or does not import."""


def load_benchmark(name: str) -> tuple[ModuleType | None, str]:
    """``(module, "")`` or ``(None, why it is unavailable)``; never raises."""
    module = f"schemarag.tools.benchmarks.{name}_bench"
    try:
        return importlib.import_module(module), ""
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None, f"{module} does not exist yet; this benchmark is not available in this version"
        return None, f"{module} cannot be imported: {exc}"
    except Exception as exc:  # a broken benchmark must not take the other sub-commands down
        return None, f"{module} cannot be imported: {type(exc).__name__}: {exc}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for name, help_text in BENCHMARKS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        # Also accepted after the benchmark name; SUPPRESS keeps a value given before it.
        p.add_argument("--data", default=argparse.SUPPRESS, help=DATA_HELP.get(name, IGNORED))
        p.add_argument("--artifacts", default=argparse.SUPPRESS, help=ARTIFACTS_HELP.get(name, MEASURED))
        module, why = load_benchmark(name)
        if module is None:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(bench_unavailable=why)
        else:
            module.add_arguments(p)
            p.set_defaults(bench_module=module)
            if name in CHARTED:  # the others draw their own chart (see their --chart)
                p.add_argument(
                    "--chart",
                    default=f"reports/bench_{name}.png",
                    help=f"PNG chart of the results (default reports/bench_{name}.png)",
                )


def run(args: argparse.Namespace) -> int:
    why = getattr(args, "bench_unavailable", None)
    if why:
        raise BenchmarkUnavailableError(f"bench {args.benchmark}: {why}")
    check_json_output(args)
    # The benchmark writes its JSON to --out (a temporary file when only --json or a chart needs
    # it); with --json its table goes to stderr and stdout carries only that JSON.
    with tempfile.TemporaryDirectory(prefix="schemarag-bench-") as tmp:
        wanted = args.json_out
        needs_file = args.json_stdout or args.benchmark in CHARTED
        args.json_out = wanted or (str(Path(tmp) / "results.json") if needs_file else None)
        with contextlib.redirect_stdout(sys.stderr) if args.json_stdout else contextlib.nullcontext():
            rc = int(args.bench_module.run(args) or 0)
        results = Path(args.json_out) if args.json_out else None
        if results is not None and results.is_file():
            data = json.loads(results.read_text(encoding="utf-8"))
            if args.benchmark in CHARTED:
                from schemarag.tools.benchmarks.charts import CHARTS

                print(f"chart: {CHARTS[args.benchmark](data, Path(args.chart))}", file=sys.stderr)
            if args.json_stdout:
                print_json(data)
        args.json_out = wanted
    return rc
