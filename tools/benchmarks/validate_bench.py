"""The validator's verdicts (valid / invalid / unchecked) on a question file's reference SQL.

Reference SQL is written by people and runs on the real engine, so every statement *should* be
valid: an ``invalid`` is a false rejection (a validator bug or an allow-list gap) and an
``unchecked`` is a query DuckDB's binder could not confirm (a dialect difference; see SECURITY.md,
"Three verdicts"). The commonest reasons are printed, with the table/column names and literals
masked so that the same cause groups together. Nothing is built: the schemas come straight from a
Spider/BIRD ``tables.json`` (dialect sqlite), and the SQL is only validated, never run.

    schemarag bench validate --questions dev.json --tables dev_tables.json [--top 8] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from schemarag.tools.commands.json_output import add_json_output

BIRD = Path("/work/shared/benchmarks/bird_dev")
_NAMES = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")  # quoted names and literals in a reason


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--questions", default=str(BIRD / "dev.json"), help="questions with db_id and SQL")
    parser.add_argument("--tables", default=str(BIRD / "dev_tables.json"), help="Spider/BIRD tables.json")
    parser.add_argument("--top", type=int, default=8, help="reasons to print per verdict (default 8)")
    add_json_output(parser)


def measure(questions: Path, tables: Path, top: int = 8) -> dict[str, Any]:
    """Verdict counts, the ``top`` reasons of the invalid and unchecked ones, and the time taken."""
    from schemarag.app.querygen.sql_validation import validate_sql
    from schemarag.tools.importers.spider_bird import build_database

    warnings: list[str] = []
    dbs = {e["db_id"]: build_database(e, warnings) for e in json.loads(tables.read_text(encoding="utf-8"))}
    items = json.loads(questions.read_text(encoding="utf-8"))
    verdicts: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {"invalid": Counter(), "unchecked": Counter()}
    started = time.perf_counter()
    for n, item in enumerate(items, 1):
        sql = item.get("SQL") or item.get("query") or ""
        report = validate_sql(sql, dbs[item["db_id"]])
        verdicts[report.status] += 1
        reason = report.errors[0] if report.errors else report.unchecked_reason
        if reason:
            reasons[report.status][_NAMES.sub("…", reason)[:140]] += 1
        if n % 250 == 0:
            print(f"  {n:,}/{len(items):,} validated", file=sys.stderr)
    return {
        "questions": str(questions),
        "statements": len(items),
        "verdicts": {k: verdicts[k] for k in ("valid", "invalid", "unchecked")},
        "reasons": {k: c.most_common(top) for k, c in reasons.items()},
        "seconds": round(time.perf_counter() - started, 2),
    }


def run(args: argparse.Namespace) -> int:
    results = measure(Path(args.questions), Path(args.tables), args.top)
    total = results["statements"] or 1
    print(f"{results['statements']:,} statements from {results['questions']} ({results['seconds']} s)")
    for verdict, count in results["verdicts"].items():
        print(f"  {verdict:9s} {count:6,}  ({count / total:.1%})")
        for reason, n in results["reasons"].get(verdict, []):
            print(f"      {n:5,}  {reason}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0
