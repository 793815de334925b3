"""The ``schemarag`` command line.

Each sub-command is a module with ``add_arguments(parser)`` and ``run(args) -> int``, imported
only when chosen (sqlglot's ``MODULE_BY_ATTRIBUTE`` idea), so ``schemarag retrieve`` never pays
for Dagster or matplotlib. Query commands live in ``schemarag.app.commands``, build commands
in ``schemarag.pipelines.commands``, importers/evaluation/benchmarks in ``schemarag.tools.commands``;
this dispatcher sits above all three, so no package imports "upwards". A command whose optional
dependencies are missing fails with one line naming the extra to install. Every
:class:`~schemarag.runtime.core.errors.SchemaragError` becomes one line on
stderr and exit code 2: users see what to fix, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import re
import sys
from collections.abc import Sequence

from schemarag import __version__
from schemarag._extras import missing_extra_hint
from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.core.paths import did_you_mean

# name -> (dotted module, one-line help); the module is imported only when its command runs
_Q, _P, _T = "schemarag.app.commands", "schemarag.pipelines.commands", "schemarag.tools.commands"
COMMANDS: dict[str, tuple[str, str]] = {
    "build": (f"{_P}.build_cmd", "build (materialize) the index artifacts with Dagster"),
    "list": (f"{_Q}.list_cmd", "the indexes built in the artifacts folder (tables, chunks, key, model)"),
    "retrieve": (f"{_Q}.retrieve_cmd", "the focused tables for a question, with the chunks behind them"),
    "generate": (f"{_Q}.generate_cmd", "generate SQL for a question (or print the prompt)"),
    "validate": (f"{_Q}.validate_cmd", "check SQL against a schema (exit 0 valid, 1 invalid, 3 unchecked)"),
    "chunks": (f"{_P}.chunks_cmd", "print the chunks parsed from a database's schema and docs"),
    "docs": (f"{_P}.docs_cmd", "snapshot a live datasource and write editable docs"),
    "ui": (f"{_P}.ui_cmd", "the Dagster UI (runs, partitions, checks) on the build's instance"),
    "worker": (f"{_P}.worker_cmd", "a Celery worker for `schemarag build --executor celery` runs"),
    "import": (f"{_T}.import_cmd", "import bird/spider/dbt or a warehouse export as schemas + docs"),
    "eval": (f"{_T}.eval_cmd", "evaluate retrieval on a question file"),
    "bench": (f"{_T}.bench_cmd", "benchmarks: build throughput, retrieval latency, prompt size"),
    "serve": (f"{_Q}.serve_cmd", "serve the HTTP API (and MCP at /mcp) over the artifacts"),
    "mcp": (f"{_Q}.mcp_cmd", "the MCP schema tools over stdio, for a desktop/IDE client"),
}


def add_location_options(parser: argparse.ArgumentParser) -> None:
    """``--data`` and ``--artifacts``, shared by every command."""
    parser.add_argument(
        "--data", default=None, help="schemas folder (default: $SCHEMARAG_DATA or data/schemas)"
    )
    parser.add_argument(
        "--artifacts", default=None, help="artifacts folder (default: $SCHEMARAG_ARTIFACTS or artifacts)"
    )


def plain_help(text: str) -> str:
    """Docstring markup as a terminal shows it: ````schemarag```` -> ``schemarag``."""
    return text.replace("``", "")


_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


class _Parser(argparse.ArgumentParser):
    """argparse with "did you mean" for a misspelt command or choice (difflib).

    Python 3.11's argparse lists every choice but suggests none; sub-parsers (``docs init``,
    ``bench retrieve``) inherit this class, so their choices get the same hint.
    """

    def error(self, message: str):  # type: ignore[override]
        m = _INVALID_CHOICE.search(message)
        if m:
            choices = [c.strip().strip("'") for c in m.group(2).split(",")]
            hint = did_you_mean(m.group(1), choices)
            if hint:
                message = (
                    f"{message[: m.start()]}invalid choice: {m.group(1)!r}{hint} (choose from {m.group(2)})"
                )
        super().error(message)


def _load(name: str):
    module, _ = COMMANDS[name]
    with missing_extra_hint(f"schemarag {name}"):
        return importlib.import_module(module)


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = _Parser(prog="schemarag", description=plain_help(__doc__.splitlines()[0]))
    parser.add_argument("--version", action="version", version=f"schemarag {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if a in COMMANDS), None)
    for name, (_, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_location_options(p)
        p.add_argument("-q", "--quiet", action="store_true", help="no progress bars or hints on stderr")
        if name == chosen:
            _load(name).add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(args_list)
    except SchemaragError as exc:
        print(f"schemarag: error: {exc}", file=sys.stderr)
        return 2
    args = parser.parse_args(args_list)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not args.command:
        parser.print_help()
        return 1
    try:
        with missing_extra_hint(f"schemarag {args.command}"):
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
