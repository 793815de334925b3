"""``schemarag bench <build|retrieve|prompt|calibration>``: benchmarks that print numbers (and write JSON).

Each benchmark is a module ``runtime/benchmarks/<name>_bench.py`` with ``add_arguments(parser)``
and ``run(args) -> int``, like the top-level commands. A benchmark module that is missing or
fails to import turns into a one-line error for that sub-command only, so ``bench build`` works
even while another benchmark is broken or not written yet.

    schemarag bench build [--data DIR] [--db X ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

from schemarag.runtime.errors import SchemaragError

BENCHMARKS: dict[str, str] = {
    "build": "build throughput (cold and warm embedding cache) and no-op rebuild time",
    "retrieve": "warm retrieval latency (p50/p95) against LanceDB hybrid search",
    "prompt": "prompt tokens: full schema vs focused schema",
    "calibration": "top-1 relevance of on-topic vs off-topic questions (is 0.3 a good threshold?)",
    "serve": "HTTP load test of a real `schemarag serve` process: throughput, p50/p95/p99, errors",
}


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
        p.add_argument("--data", default=argparse.SUPPRESS, help="schemas folder")
        p.add_argument(
            "--artifacts",
            default=argparse.SUPPRESS,
            help="artifacts folder (bench build ignores it: it always builds into a fresh temp folder)",
        )
        module, why = load_benchmark(name)
        if module is None:
            p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
            p.set_defaults(bench_unavailable=why)
        else:
            module.add_arguments(p)
            p.set_defaults(bench_module=module)


def run(args: argparse.Namespace) -> int:
    why = getattr(args, "bench_unavailable", None)
    if why:
        raise BenchmarkUnavailableError(f"bench {args.benchmark}: {why}")
    return int(args.bench_module.run(args) or 0)
