"""The ``schemarag`` command line.

Each sub-command lives in ``runtime/commands/<name>.py`` with ``add_arguments(parser)`` and
``run(args) -> int`` and is imported only when chosen, so ``schemarag retrieve`` never pays for
Dagster or matplotlib. Every :class:`~runtime.errors.SchemaragError` becomes one line on
stderr and exit code 2: users see what to fix, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from runtime.errors import SchemaragError

# name -> (module under runtime.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "chunks": ("chunks_cmd", "print the chunks parsed from a database's schema and docs"),
    "build": ("build_cmd", "build (materialize) the index artifacts with Dagster"),
    "retrieve": ("retrieve_cmd", "retrieve documentation chunks for a question"),
    "generate": ("generate_cmd", "generate SQL for a question (or print the prompt)"),
    "import": ("import_cmd", "import a Spider/BIRD catalog as schemas and docs"),
    "eval": ("eval_cmd", "evaluate retrieval on a question file"),
    "docs": ("docs_cmd", "snapshot a live datasource and write editable docs"),
    "bench": ("bench_cmd", "benchmarks: build throughput, retrieval latency, prompt size"),
}


def add_location_options(parser: argparse.ArgumentParser) -> None:
    """``--data`` and ``--artifacts``, shared by every command."""
    parser.add_argument(
        "--data", default=None, help="schemas folder (default: $SCHEMARAG_DATA or data/schemas)"
    )
    parser.add_argument(
        "--artifacts", default=None, help="artifacts folder (default: $SCHEMARAG_ARTIFACTS or artifacts)"
    )


def _load(name: str):
    module, _ = COMMANDS[name]
    return importlib.import_module(f"runtime.commands.{module}")


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="schemarag", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_location_options(p)
        if name == chosen:
            _load(name).add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list)
    args = parser.parse_args(args_list)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.command:
        parser.print_help()
        return 1
    try:
        return int(_load(args.command).run(args) or 0)
    except SchemaragError as exc:
        print(f"schemarag {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `schemarag chunks | head`: the reader went away, not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"schemarag {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
