"""``schemarag import bird|spider|dbt|catalog``: turn a catalog into schema JSON and docs.

Examples:
    schemarag import bird --tables dev_tables.json,train_tables.json \\
        --descriptions bird_dev/descriptions --metadata dev_metadata.json \\
        --out data/schemas --union bird_union
    schemarag import dbt --project ../analytics --out data/schemas
    schemarag import catalog --columns columns.csv --tables tables.csv \\
        --foreign-keys fks.csv --database warehouse --out data/schemas
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
    parser.add_argument("kind", choices=("bird", "spider", "dbt", "catalog"), help="catalog flavour")
    parser.add_argument(
        "--tables",
        action="append",
        metavar="FILE",
        help="bird/spider: tables.json (repeat or separate with commas to pool several files); "
        "catalog: the INFORMATION_SCHEMA.TABLES export (CSV or Parquet)",
    )
    dbt = parser.add_argument_group("dbt")
    dbt.add_argument("--project", metavar="DIR", help="dbt project folder (holds dbt_project.yml)")
    dbt.add_argument("--manifest", metavar="FILE", help="read target/manifest.json instead of the sources")
    dbt.add_argument("--catalog", metavar="FILE", help="with --manifest: target/catalog.json (column types)")
    dbt.add_argument("--name", metavar="NAME", help="datasource name (default: the dbt project name)")
    dbt.add_argument("--dialect", default="postgres", help="SQL dialect of the models (default: postgres)")
    cat = parser.add_argument_group("catalog")
    cat.add_argument("--columns", metavar="FILE", help="INFORMATION_SCHEMA.COLUMNS export (CSV or Parquet)")
    cat.add_argument(
        "--foreign-keys", metavar="FILE", help="key-column-usage export with referenced_* columns"
    )
    cat.add_argument("--database", metavar="NAME", help="datasource name for the catalog export")
    cat.add_argument(
        "--no-collapse-shards",
        action="store_true",
        help="keep date/number-sharded tables (events_20240101, ...) separate instead of one events_*",
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
    parser.add_argument(
        "--strip-foreign-keys", action="store_true", help="drop declared foreign keys (eval setting)"
    )
    parser.add_argument("--infer-joins", action="store_true", help="infer foreign keys from names and types")


def _run_other(args: argparse.Namespace, out: Path):
    from schemarag.runtime.errors import ImportFormatError

    if args.kind == "dbt":
        from schemarag.tools.importers.dbt import import_dbt

        if not args.project and not args.manifest:
            raise ImportFormatError("import dbt: pass --project DIR (or --manifest target/manifest.json)")
        return import_dbt(
            Path(args.project or "."),
            out,
            name=args.name,
            dialect=args.dialect,
            manifest=Path(args.manifest) if args.manifest else None,
            catalog=Path(args.catalog) if args.catalog else None,
        )
    from schemarag.tools.importers.catalog_export import import_catalog_export

    if not args.columns or not args.database:
        raise ImportFormatError("import catalog: pass --columns FILE and --database NAME")
    tables = _paths(args.tables)
    return import_catalog_export(
        Path(args.columns),
        out,
        database=args.database,
        tables=tables[0] if tables else None,
        foreign_keys=Path(args.foreign_keys) if args.foreign_keys else None,
        dialect=args.dialect,
        collapse_shards=not args.no_collapse_shards,
    )


def run(args: argparse.Namespace) -> int:
    from schemarag.runtime.errors import ImportFormatError
    from schemarag.tools.importers.writer import import_catalog

    out = Path(args.out) if args.out else data_dir(args.data)
    started = time.perf_counter()
    if args.kind in ("dbt", "catalog"):
        report = _run_other(args, out)
    elif not args.tables:
        raise ImportFormatError(f"import {args.kind}: pass --tables tables.json")
    else:
        report = import_catalog(
            _paths(args.tables),
            out,
            kind=args.kind,
            descriptions=Path(args.descriptions) if args.descriptions else None,
            metadata=_paths(args.metadata),
            union=args.union,
            strip_foreign_keys=args.strip_foreign_keys,
            infer_joins=args.infer_joins,
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
    if report.databases and not getattr(args, "quiet", False):
        where = "" if out == data_dir(args.data) else f" --data {out}"
        which = f" --db {report.databases[0]}" if len(report.databases) == 1 else ""
        print(f"next: schemarag build{where}{which}", file=sys.stderr)
    return 0
