"""``schemarag validate --db DB [--tenant T] [--json] "SQL"``: the generator's SQL validator, alone.

The schema is the one of the database's *published index* (``Retriever.open(...).schema``), so a
tenant-scoped call sees only that tenant's tables, exactly like retrieval and generation; a
database without an index is "not found", never a fallback to some other schema file. ``-`` reads
the SQL from standard input (bounded by the validator's length limit).

Exit codes (:data:`EXIT_CODES`): 0 valid, 1 invalid (the errors are printed), 2 usage error or
database not found, 3 unchecked (no error found, but the DuckDB bind check could not run or finish,
so the SQL is *not* known to be valid; the reason is printed). A script that runs SQL only after
``schemarag validate`` must test for 0, never for "not 1".

Example:
    $ schemarag validate --db ecommerce "SELECT id FROM customers"
    valid (tables: customers; DuckDB bind checked)
"""

from __future__ import annotations

import argparse
import json
import sys

from schemarag.app.commands.retrieve_cmd import open_retriever
from schemarag.app.querygen.sql_bounds import DEFAULT_LIMITS
from schemarag.app.querygen.sql_validation import ValidationReport, validate_sql

EXIT_CODES = {"valid": 0, "invalid": 1, "unchecked": 3}  # 2: usage error or database not found
EPILOG = """exit codes:
  0  valid: every check passed, DuckDB bound the query
  1  invalid: the errors say what to fix
  2  usage error, or the database (or tenant) has no published index
  3  unchecked: no error found, but the bind check could not run or finish (the reason is
     printed); treat it as NOT validated
JSON (--json): "valid" is true, false or null (unchecked, with "unchecked_reason")."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("sql", help='the SQL to check, or "-" to read it from standard input')
    parser.add_argument("--db", required=True, help="database name (its published index's schema)")
    parser.add_argument("--tenant", default=None, help="tenant owning the database (live datasources)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    sql = args.sql
    if sql == "-":
        sql = sys.stdin.read(DEFAULT_LIMITS.max_chars + 1)  # one character over is enough to refuse
    schema = open_retriever(args.db, args.artifacts, args.tenant, args.data).schema
    report = validate_sql(sql, schema)
    if args.json:
        out = {"database": args.db, "tenant": args.tenant, "dialect": schema.dialect, **report.to_dict()}
        print(json.dumps(out, indent=2))
    else:
        _print_human(report)
    return EXIT_CODES[report.status]


def _print_human(report: ValidationReport) -> None:
    tables = ", ".join(report.tables) or "-"
    if report.status == "valid":
        print(f"valid (tables: {tables}; DuckDB bind checked)")
    elif report.status == "unchecked":
        print(f"unchecked: no error found, but the SQL is not known to be valid (tables: {tables})")
        print(f"  reason: {report.unchecked_reason}")
    else:
        print("invalid:")
        for error in report.errors:
            print(f"  error: {error}")
    for warning in report.warnings:
        print(f"  warning: {warning}")
