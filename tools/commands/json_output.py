"""``--json`` and ``--out FILE``: one meaning on every command that reports results.

``--json`` prints the results as JSON on stdout instead of the human-readable table (as
``retrieve --json``, ``generate --json`` and ``validate --json`` do); ``--out FILE`` also writes
that JSON to a file. Before this, ``eval --json`` and ``bench ... --json`` took a file name, so
the same flag meant two things. A file name after ``--json`` is now an error that names
``--out``, so an old script fails loudly instead of writing nowhere.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ConfigError


def add_json_output(
    parser: argparse.ArgumentParser, what: str = "the results", default_out: str | None = None
) -> None:
    """``--json`` (stdout, dest ``json_stdout``) and ``--out FILE`` (dest ``json_out``)."""
    parser.add_argument(
        "--json",
        dest="json_stdout",
        nargs="?",
        const=True,
        default=False,
        metavar="",
        help=f"print {what} as JSON on stdout instead of the table",
    )
    where = f" (default {default_out})" if default_out else ""
    parser.add_argument(
        "--out", dest="json_out", default=default_out, metavar="FILE", help=f"write {what} JSON here{where}"
    )


def check_json_output(args: argparse.Namespace) -> None:
    """Refuse ``--json FILE`` (the old spelling) with the fix."""
    value = getattr(args, "json_stdout", False)
    if value is not True and value is not False:
        raise ConfigError(
            f"--json takes no file name (got {value!r}): use --out {value} to write the JSON there"
        )


def write_json(payload: Any, path: str | Path | None) -> None:
    """Write ``payload`` to ``path`` (parents created), if a path was given."""
    if path:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


def print_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")
