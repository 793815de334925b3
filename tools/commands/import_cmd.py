"""``schemarag import bird|spider``: turn a benchmark catalog into schema JSON and docs.

Example:
    schemarag import bird --tables dev_tables.json,train_tables.json \\
        --descriptions bird_dev/descriptions --metadata dev_metadata.json \\
        --out data/schemas --union bird_union
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from schemarag.runtime.paths import data_dir


def _paths(values: list[str] | None) -> list[Path]:
    """Repeatable and comma-separated: ``--tables a.json,b.json --tables c.json``."""
    return [Path(p.strip()) for value in values or [] for p in value.split(",") if p.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=("bird", "spider"), help="catalog flavour")
    parser.add_argument(
        "--tables",
        action="append",
        required=True,
        metavar="TABLES_JSON",
        help="Spider-format tables.json; repeat or separate with commas to pool several files",
    )
    parser.add_argument(
        "--descriptions",
        default=None,
        metavar="DIR",
        help="BIRD description folder: <DIR>/<db>/database_description/<table>.csv",
    )
    parser.add_argument(
        "--metadata",
        action="append",
        metavar="METADATA_JSON",
        help="BIRD dev_metadata.json (descriptions, samples, statistics; ai_description is ignored)",
    )
    parser.add_argument("--out", default=None, help="output folder (default: --data / data/schemas)")
    parser.add_argument(
        "--union",
        default=None,
        metavar="NAME",
        help="write one datasource NAME whose tables are named <db>__<table>",
    )


def run(args: argparse.Namespace) -> int:
    from schemarag.tools.importers.writer import import_catalog

    out = Path(args.out) if args.out else data_dir(args.data)
    started = time.perf_counter()
    report = import_catalog(
        _paths(args.tables),
        out,
        kind=args.kind,
        descriptions=Path(args.descriptions) if args.descriptions else None,
        metadata=_paths(args.metadata),
        union=args.union,
    )
    elapsed = time.perf_counter() - started
    print(
        f"imported {len(report.databases)} datasource(s) into {out}: {report.tables} tables, "
        f"{report.columns} columns, {report.foreign_keys} foreign keys, {report.files} files, "
        f"{len(report.warnings)} warning(s) in {elapsed:.1f}s",
        file=sys.stderr,
    )
    for name in report.databases:
        print(name)
    return 0
