"""``schemarag import bird|spider|dbt|catalog``: turn a catalog into schema JSON and docs.

Each flavour is its own sub-command with its own options and help (``schemarag import catalog
-h`` lists only what a warehouse export takes).

Examples:
    schemarag import bird --tables dev_tables.json,train_tables.json \\
        --descriptions bird_dev/descriptions --metadata dev_metadata.json \\
        --out data/schemas --union bird_union
    schemarag import dbt --project ../analytics --out data/schemas
    schemarag import dbt --project ../analytics --parse     # dbt on PATH: dbt deps + dbt parse first
    schemarag import catalog --columns columns.csv --tables tables.csv \\
        --foreign-keys fks.csv --database warehouse --out data/schemas
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from pathlib import Path

from schemarag.runtime.core.paths import data_dir
from schemarag.tools.importers.limits import add_limit_flags, limits_from_args

FLAVOURS: dict[str, str] = {
    "bird": "a BIRD tables.json (+ column descriptions and metadata) as schemas and docs",
    "spider": "a Spider tables.json as schemas and docs",
    "dbt": "a dbt project (from git, or its compiled manifest) as schemas and docs",
    "catalog": "a warehouse INFORMATION_SCHEMA export (CSV or Parquet) as schemas and docs",
    "queries": "a warehouse query log (.sql, .jsonl, query-history exports, dbt target/) as the "
    "stored history of one database",
    "spider2": "a clone of the public Spider2 repository as the folder `schemarag eval --warehouse` reads",
}


def _paths(values: list[str] | None) -> list[Path]:
    """Repeatable and comma-separated: ``--tables a.json,b.json --tables c.json``."""
    return [Path(p.strip()) for value in values or [] for p in value.split(",") if p.strip()]


def _common(parser: argparse.ArgumentParser) -> None:
    """Options every flavour takes. ``--data``/``--artifacts``/``-q`` are repeated from the
    ``import`` parser with SUPPRESS defaults, so ``schemarag import bird -q`` works and a value
    given before the flavour is not reset by the sub-parser's default."""
    parser.add_argument(
        "--out", default=None, metavar="DIR", help="output folder (default: --data / data/schemas)"
    )
    parser.add_argument("--data", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.add_argument("--artifacts", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print only the one summary line on stderr (no warnings, no hints)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="list every warning (default: one line per kind, with a count and the fix)",
    )


def _spider_bird(parser: argparse.ArgumentParser, kind: str) -> None:
    parser.add_argument(
        "--tables",
        action="append",
        metavar="FILE",
        required=True,
        help="tables.json (repeat or separate with commas to pool several files)",
    )
    if kind == "bird":
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
    parser.add_argument(
        "--union",
        default=None,
        metavar="NAME",
        help="pool every database into one datasource NAME (each table records its source "
        "database; names are prefixed with it so they stay unique)",
    )
    parser.add_argument(
        "--strip-foreign-keys", action="store_true", help="drop declared foreign keys (eval setting)"
    )
    parser.add_argument("--infer-joins", action="store_true", help="infer foreign keys from names and types")


def _dbt(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", metavar="DIR", help="dbt project folder (holds dbt_project.yml)")
    parser.add_argument("--manifest", metavar="FILE", help="read target/manifest.json instead of the sources")
    parser.add_argument(
        "--parse",
        action="store_true",
        help="with --project: run `dbt deps` (if packages are not installed) and `dbt parse` in it "
        "(dbt on PATH, no warehouse connection), then read the manifest it writes",
    )
    parser.add_argument(
        "--catalog", metavar="FILE", help="with --manifest: target/catalog.json (column types)"
    )
    parser.add_argument("--name", metavar="NAME", help="datasource name (default: the dbt project name)")
    parser.add_argument(
        "--dialect",
        default=None,
        help="SQL dialect of the models (default: the adapter of profiles.yml in the project, else postgres)",
    )
    parser.add_argument(
        "--target-schema",
        metavar="SCHEMA",
        help="the dbt target's schema (default: profiles.yml in the project); models without a custom "
        "schema are built there",
    )
    parser.add_argument(
        "--target-database", metavar="DB", help="the dbt target's database (left out of relation names)"
    )
    parser.add_argument(
        "--schema-mode",
        choices=("project", "prefixed", "custom"),
        default=None,
        help="custom schemas as dbt names them: prefixed = <target>_<custom> (dbt's default), custom = "
        "as written, project = run the project's generate_schema_name macro if it has one (default)",
    )
    add_limit_flags(parser)


def _catalog(parser: argparse.ArgumentParser) -> None:
    parts = (
        " (CSV/TSV or Parquet, plain or .gz/.bz2/.zst): a file, a folder of unload parts or a quoted glob "
        "such as 'exports/columns_*.csv.gz'; parts must stay inside the folder named"
    )
    parser.add_argument(
        "--columns", metavar="PATH", required=True, help="INFORMATION_SCHEMA.COLUMNS export" + parts
    )
    parser.add_argument("--tables", metavar="PATH", help="INFORMATION_SCHEMA.TABLES export" + parts)
    parser.add_argument(
        "--foreign-keys", metavar="PATH", help="key-column-usage export with referenced_* columns" + parts
    )
    parser.add_argument("--database", metavar="NAME", required=True, help="datasource name for the export")
    parser.add_argument(
        "--dialect", default="postgres", help="SQL dialect of the warehouse (default: postgres)"
    )
    parser.add_argument(
        "--no-collapse-shards",
        action="store_true",
        help="keep date/number-sharded tables (events_20240101, ...) separate instead of one events_*",
    )
    add_limit_flags(parser)


def _queries(parser: argparse.ArgumentParser) -> None:
    """``import queries``: its own options (``--data`` is the schemas folder, there is no --out)."""
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help=".sql or .jsonl file, a query-log export (CSV/Parquet, plain or .gz/.bz2/.zst: a file, a "
        "folder of parts or a quoted glob) or a dbt target/compiled or target/run folder",
    )
    parser.add_argument("--db", required=True, metavar="DB", help="database whose schema the log is for")
    parser.add_argument(
        "--data",
        default=argparse.SUPPRESS,
        metavar="DIR",
        help="schemas folder holding <DB>.json (default: $SCHEMARAG_DATA or data/schemas)",
    )
    parser.add_argument("--artifacts", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--tenant", default=None, metavar="T", help="the tenant whose history this is (stored apart)"
    )
    parser.add_argument("--dialect", default=None, help="SQL dialect of the log (default: the schema's)")
    parser.add_argument("--append", action="store_true", help="add to the stored history (default: replace)")
    parser.add_argument(
        "--default-schema",
        default=None,
        metavar="S",
        help="the session's schema (search_path, default dataset) for statements whose log does not say "
        "it: a table written without a schema that several schemas hold resolves there",
    )
    parser.add_argument(
        "--keep-literals",
        action="store_true",
        help="keep string and number literals (default: each becomes ?; logs carry customer data)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="only the summary line"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="list every skipped statement (file, line or row, reason) and what each table name "
        "written short became",
    )
    add_limit_flags(parser)


def _spider2(parser: argparse.ArgumentParser) -> None:
    """``import spider2``: benchmark data, not a schema; its own options (--out is required)."""
    parser.add_argument(
        "--source", required=True, metavar="DIR", help="<clone>/spider2-lite of xlang-ai/Spider2"
    )
    parser.add_argument(
        "--out", required=True, metavar="DIR", help="folder to write (<engine>/<db>/, questions.jsonl)"
    )
    parser.add_argument("--engines", metavar="LIST", help="bigquery,snowflake,sqlite (default: all)")
    parser.add_argument("--dbs", metavar="LIST", help="databases as the questions name them (default: all)")
    parser.add_argument(
        "--gold",
        metavar="FILE",
        help="gold tables (default: <clone>/methods/gold-tables/spider2-lite-gold-tables.jsonl)",
    )
    parser.add_argument("--all-databases", action="store_true", help="also the databases no question names")
    parser.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="only the summary"
    )


def _run_spider2(args: argparse.Namespace) -> int:
    from schemarag.tools.importers.spider2 import convert_spider2

    def split(value: str | None) -> list[str] | None:
        return [v.strip() for v in value.split(",") if v.strip()] if value else None

    quiet = getattr(args, "quiet", False)
    report = convert_spider2(
        Path(args.source),
        Path(args.out),
        engines=split(args.engines),
        dbs=split(args.dbs),
        gold=Path(args.gold) if args.gold else None,
        all_databases=args.all_databases,
        progress=None if quiet else lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(report.summary(), file=sys.stderr)
    if not quiet:
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        print("next: " + shlex.join(["schemarag", "eval", "--warehouse", str(args.out)]), file=sys.stderr)
    print(args.out)
    return 0


def _run_queries(args: argparse.Namespace) -> int:
    from schemarag.tools.importers.limits import use_limits
    from schemarag.tools.importers.query_log import import_queries

    limits = limits_from_args(args)
    with use_limits(limits):
        report = import_queries(
            args.sources,
            db=args.db,
            data=data_dir(getattr(args, "data", None)),
            tenant=args.tenant,
            dialect=args.dialect,
            append=args.append,
            keep_literals=args.keep_literals,
            limits=limits,
            default_schema=args.default_schema,
        )
    print(report.summary(), file=sys.stderr)
    print(report.folder)
    if getattr(args, "quiet", False):
        return 0
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if getattr(args, "verbose", False):
        for line in report.qualified_lines(limits.warnings):
            print(f"  qualified {line}", file=sys.stderr)
        for line in report.skipped_list:
            print(f"  skipped {line}", file=sys.stderr)
        hidden = sum(report.skipped.values()) - len(report.skipped_list)
        if hidden > 0:
            print(f"  ... and {hidden:,} more (raise with --max-warnings)", file=sys.stderr)
    where = [] if "data" not in args or args.data is None else ["--data", str(args.data)]
    tenant = [] if args.tenant is None else ["--tenant", args.tenant]
    print("next: " + shlex.join(["schemarag", "build", *where, *tenant, "--db", args.db]), file=sys.stderr)
    return 0


_OPTIONS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "bird": lambda p: _spider_bird(p, "bird"),
    "spider": lambda p: _spider_bird(p, "spider"),
    "dbt": _dbt,
    "catalog": _catalog,
    "queries": _queries,
    "spider2": _spider2,
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="kind", metavar="FLAVOUR", required=True)
    for kind, help_text in FLAVOURS.items():
        p = sub.add_parser(kind, help=help_text, description=f"Import {help_text}.")
        _OPTIONS[kind](p)
        if kind not in ("queries", "spider2"):  # these name their own folders
            _common(p)


def _import_dbt(args: argparse.Namespace, out: Path):
    from schemarag.runtime.core.errors import ImportFormatError
    from schemarag.tools.importers.dbt import import_dbt

    if not args.project and not args.manifest:
        raise ImportFormatError("import dbt: pass --project DIR (or --manifest target/manifest.json)")
    manifest = Path(args.manifest) if args.manifest else None
    if args.parse:
        from schemarag.tools.importers.dbt.parse import dbt_parse

        if not args.project or manifest is not None:
            raise ImportFormatError("import dbt --parse: pass --project DIR (and no --manifest)")
        quiet = getattr(args, "quiet", False)
        manifest = dbt_parse(Path(args.project), None if quiet else lambda m: print(m, file=sys.stderr))
    return import_dbt(
        Path(args.project or "."),
        out,
        name=args.name,
        dialect=args.dialect,
        manifest=manifest,
        catalog=Path(args.catalog) if args.catalog else None,
        target_schema=args.target_schema,
        target_database=args.target_database,
        schema_mode=args.schema_mode,
        limits=limits_from_args(args),
    )


def _import_catalog(args: argparse.Namespace, out: Path):
    from schemarag.tools.importers.catalog_export import import_catalog_export

    return import_catalog_export(
        args.columns,
        out,
        database=args.database,
        tables=args.tables,
        foreign_keys=args.foreign_keys,
        dialect=args.dialect,
        collapse_shards=not args.no_collapse_shards,
        limits=limits_from_args(args),
    )


def _import_spider_bird(args: argparse.Namespace, out: Path):
    from schemarag.tools.importers.writer import import_catalog

    return import_catalog(
        _paths(args.tables),
        out,
        kind=args.kind,
        descriptions=Path(args.descriptions) if getattr(args, "descriptions", None) else None,
        metadata=_paths(getattr(args, "metadata", None)),
        union=args.union,
        strip_foreign_keys=args.strip_foreign_keys,
        infer_joins=args.infer_joins,
    )


_RUNNERS = {
    "bird": _import_spider_bird,
    "spider": _import_spider_bird,
    "dbt": _import_dbt,
    "catalog": _import_catalog,
}


def next_hint(args: argparse.Namespace, out: Path, databases: list[str]) -> str:
    """``next: schemarag build ...`` with the folders the user named, so it runs as printed."""
    command = ["schemarag", "build"]
    if out != data_dir(None) or args.data:  # the build reads where the import wrote
        command += ["--data", str(out)]
    if args.artifacts:
        command += ["--artifacts", args.artifacts]
    if len(databases) == 1:
        command += ["--db", databases[0]]
    return "next: " + shlex.join(command)


def run(args: argparse.Namespace) -> int:
    from schemarag.tools.importers.warning_summary import summarize

    if args.kind == "queries":
        return _run_queries(args)
    if args.kind == "spider2":
        return _run_spider2(args)
    out = Path(args.out) if args.out else data_dir(args.data)
    started = time.perf_counter()
    report = _RUNNERS[args.kind](args, out)
    elapsed = time.perf_counter() - started
    quiet, verbose = getattr(args, "quiet", False), getattr(args, "verbose", False)
    listed = " (--verbose lists each)" if report.warnings and not verbose and not quiet else ""
    print(
        f"imported {len(report.databases)} datasource(s) into {out}: {report.tables} tables, "
        f"{report.columns} columns, {report.foreign_keys} foreign keys, {report.files} files, "
        f"{len(report.warnings)} warning(s){listed} in {elapsed:.1f}s"
        + (
            f" ({report.raw_tables} raw tables before shard families)"
            if report.raw_tables > report.tables
            else ""
        ),
        file=sys.stderr,
    )
    if not quiet:  # -q: the line above is all
        summary = getattr(report, "summary", None)  # dbt: what was built, left out, per layer
        if callable(summary):
            print(summary(), file=sys.stderr)
        for line in summarize(report.warnings):
            print(line, file=sys.stderr)
        if verbose:
            for warning in report.warnings:
                print(f"  {warning}", file=sys.stderr)
    for name in report.databases:
        print(name)
    if report.databases and not quiet:
        print(next_hint(args, out, report.databases), file=sys.stderr)
    return 0
