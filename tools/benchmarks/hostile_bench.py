"""Hostile-input timings: the probe's inputs of issue 13 against the SQL validator, the markdown
sectioner and the schema loader, and issue 23's comment scan on thousands of comments. Prints
wall and CPU seconds per case (CPU is what the code costs; wall also counts waiting for a core on
a shared machine) and the outcome.

    python -m schemarag.tools.benchmarks.hostile_bench [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SHOP = {
    "name": "shop",
    "dialect": "sqlite",
    "tables": [
        {"name": "users", "columns": [{"name": "id", "type": "INTEGER"}, {"name": "name", "type": "TEXT"}]}
    ],
}


def _or_chain(n: int) -> str:
    return "SELECT id FROM users WHERE " + " OR ".join(f"id = {i}" for i in range(n))


def _headings(n: int) -> str:
    return "# Table: t\n" + "".join(f"## h{i}\n" if i % 3 else f"### x{i}\n" for i in range(n))


def _probe_doc(n_head: int, n_fence: int) -> str:
    parts = ["# Table: t", "## Purpose", "x"]
    for i in range(n_head):
        parts += [f"### h{i}" if i % 5 else f"## s{i}", "text"]
        if i < n_fence:
            parts.append("```sql\nSELECT 1\n```")
    return "\n".join(parts) + "\n"


def _cases(tmp: Path) -> list[tuple[str, int, Callable[[], str]]]:
    from schemarag.app.querygen.sql_validation import validate_sql
    from schemarag.assets.lib.markdown_docs import parse_markdown
    from schemarag.runtime.core.errors import SchemaragError
    from schemarag.runtime.core.schema import Database, load_schema

    db = Database.model_validate(SHOP)
    validate_sql("SELECT id FROM users", db)  # warm imports and the DuckDB catalog

    def sql(text: str) -> Callable[[], str]:
        def case() -> str:
            r = validate_sql(text, db)
            return "valid" if r.valid else "rejected: " + r.errors[0][:70]

        return case

    def markdown(text: str) -> Callable[[], str]:
        def case() -> str:
            try:
                return f"parsed: {len(parse_markdown(text, 'doc.md').sections):,} sections"
            except SchemaragError as exc:
                return "refused: " + str(exc)[:70]

        return case

    many_comments = "SELECT id " + "/* ok */ " * 2_100 + "/*! , name */ FROM users"
    one_comment = "SELECT id FROM users /* " + "x" * 19_000 + " */"
    deep = tmp / "deep.json"
    deep.write_text('{"name": "x", "tables": ' + "[" * 100_000 + "]" * 100_000 + "}")

    def deep_json() -> str:
        try:
            load_schema(deep)
        except SchemaragError as exc:
            return "refused: " + str(exc).split(": ", 1)[1][:70]
        return "loaded"

    return [
        ("SQL: 20,000-term OR", len(_or_chain(20_000)), sql(_or_chain(20_000))),
        ("SQL: 1,500-term OR (under limit)", len(_or_chain(1_500)), sql(_or_chain(1_500))),
        ("SQL: 5,000 nested parentheses", 10_007, sql("SELECT " + "(" * 5000 + "1" + ")" * 5000)),
        ("SQL: 3,000 x NOT", 12_033, sql("SELECT id FROM users WHERE " + "NOT " * 3000 + "id = 1")),
        ("SQL: 2,100 comments, /*! last", len(many_comments), sql(many_comments)),
        ("SQL: one 19,000-char comment", len(one_comment), sql(one_comment)),
        ("md: 10k headings + 2k fences", len(_probe_doc(10_000, 2_000)), markdown(_probe_doc(10_000, 2_000))),
        ("md: 2 MB of headings", 2 * 1024 * 1024, markdown(_headings(300_000)[: 2 * 1024 * 1024])),
        ("md: 19,999 headings (at limit)", len(_headings(19_999)), markdown(_headings(19_999))),
        ("JSON: 100,000-deep schema", deep.stat().st_size, deep_json),
    ]


def run(out: str | None = None) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, size, case in _cases(Path(tmp)):
            wall, cpu = time.perf_counter(), time.process_time()
            outcome = case()
            row = {"case": name, "bytes": size, "wall_s": time.perf_counter() - wall}
            row.update(cpu_s=time.process_time() - cpu, outcome=outcome)
            rows.append(row)
            print(
                f"{name:34s} {size:>10,} B  wall {row['wall_s']:6.2f} s  cpu {row['cpu_s']:6.2f} s  {outcome}"
            )
    if out:
        Path(out).write_text(json.dumps(rows, indent=2))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, metavar="FILE", help="also write the rows as JSON")
    run(parser.parse_args(argv).out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
