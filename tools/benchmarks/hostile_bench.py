"""Hostile-input timings: the probe's inputs of issue 13 against the SQL validator, the markdown
sectioner and the schema loader, issue 23's comment scan on thousands of comments, and issue 39's
stage, table-function and placeholder reads (validator) and bombs (catalog and dbt importers).
Prints wall and CPU seconds per case (CPU is what the code costs; wall also counts waiting for a
core on a shared machine) and the outcome. Inputs are built before their case is timed (the 1 GiB
gzip bomb takes seconds to compress).

    python -m schemarag.tools.benchmarks.hostile_bench [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import zlib
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


# Issue 39, finding 6: reads of things that are not tables of the schema (each was "unchecked").
FOREIGN_RELATIONS = [
    "SELECT $1 FROM @mystage/secrets.csv",
    "SELECT * FROM @s",
    "SELECT * FROM @%users",
    "SELECT id FROM users JOIN @s ON true",
    "SELECT * FROM TABLE('SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY')",
    "SELECT * FROM TABLE(users)",
    "SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))",
    "SELECT * FROM read_csv('x.csv')",
    "SELECT * FROM users, read_parquet('s3://b/k.parquet')",
    "SELECT * FROM query_table('users')",
    "SELECT * FROM IDENTIFIER('users')",
    "SELECT * FROM ?",
    "SELECT * FROM :t",
    "SELECT * FROM $1",
    "SELECT id FROM users JOIN ? ON true",
]
DIALECTS = ("mysql", "postgres", "sqlite", "duckdb", "bigquery", "snowflake")
CATALOG_HEADER = b"table_schema,table_name,column_name,data_type,column_comment\n"
# Issue 39, finding 4: 1 KB, nine levels of ten aliases, 10^9 nodes once expanded
ALIAS_BOMB = "  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
) + "  i: *a8\n"  # fmt: skip


def write_gzip(path: Path, pieces, level: int = 1) -> Path:
    """Write the gzip of ``pieces`` (bytes) without holding it whole (a bomb of any size in
    constant memory; the import-limit tests build theirs with it too)."""
    comp = zlib.compressobj(level, zlib.DEFLATED, 31)
    with path.open("wb") as fh:
        for piece in pieces:
            fh.write(comp.compress(piece))
        fh.write(comp.flush())
    return path


def _dbt_project(folder: Path, vars_yaml: str = "", models: dict[str, str] | None = None) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "dbt_project.yml").write_text(
        "name: 'bench'\nversion: '1.0.0'\nconfig-version: 2\nmodel-paths: [\"models\"]\nvars:\n  x: 1\n"
        + vars_yaml
    )
    for name, sql in (models or {"orders": "select 1 as id"}).items():
        (folder / "models" / f"{name}.sql").write_text(sql + "\n")
    return folder


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
    from schemarag.tools.importers.catalog_export import import_catalog_export
    from schemarag.tools.importers.dbt import import_dbt

    db = Database.model_validate(SHOP)
    validate_sql("SELECT id FROM users", db)  # warm imports and the DuckDB catalog

    def sql(text: str, dialect: str = "sqlite") -> Callable[[], str]:
        on = db if dialect == "sqlite" else Database.model_validate({**SHOP, "dialect": dialect})

        def case() -> str:
            r = validate_sql(text, on)
            if r.valid is None:
                return "UNCHECKED: " + str(r.unchecked_reason)[:70]
            return "valid" if r.valid else "rejected: " + r.errors[0][:70]

        return case

    per_dialect = {d: Database.model_validate({**SHOP, "dialect": d}) for d in DIALECTS}

    def foreign_relations() -> str:
        verdicts = [validate_sql(text, per_dialect[d]).status for text in FOREIGN_RELATIONS for d in DIALECTS]
        return ", ".join(f"{verdicts.count(v)} {v}" for v in ("invalid", "unchecked", "valid"))

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

    def imported(run: Callable[[], Any]) -> Callable[[], str]:
        def case() -> str:
            try:
                report = run()
            except SchemaragError as exc:
                return "refused: " + str(exc).split(": ", 1)[-1][:70]
            first = f": {report.warnings[0].replace(f'{tmp}/', '')[:60]}" if report.warnings else ""
            return f"imported {report.tables:,} tables, {len(report.warnings)} warning line(s){first}"

        return case

    def catalog(export: Path) -> Callable[[], str]:
        return imported(lambda: import_catalog_export(export, tmp / f"out_{export.name}", database="d"))

    def dbt(project: Path, manifest: Path | None = None) -> Callable[[], str]:
        return imported(lambda: import_dbt(project, tmp / f"out_{project.name}", manifest=manifest))

    gzip_bomb = write_gzip(tmp / "bomb.csv.gz", (b"a" * (1 << 20) for _ in range(1024)), level=9)
    parquet_bomb = tmp / "bomb.parquet.gz"
    parquet_bomb.write_bytes(gzip_bomb.read_bytes())
    repeated = write_gzip(
        tmp / "repeated.csv.gz", [CATALOG_HEADER, *(b"s,t,c,INT,\n" for _ in range(300_000))]
    )
    wide_header = tmp / "wide_header.csv"
    wide_header.write_bytes(b'table_name,column_name,"' + b"h" * 200_000 + b'"\nt,c,x\n')
    control = tmp / "control.csv"
    control.write_bytes(
        CATALOG_HEADER + b's,"ev\r); DROP TABLE users; --_20240101",c,INT,\ns,orders,id,INT,\n'
    )
    alias_bomb = _dbt_project(
        tmp / "alias_bomb", ALIAS_BOMB, {"uses_bomb": "select '{{ var(\"i\") }}' as id"}
    )
    loops = "select 1 as id {% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    jinja = _dbt_project(
        tmp / "jinja",
        models={"orders": "select 1 as id", "loops": loops, "huge": "select '{{ 'x' * 3000000000 }}' as id"},
    )
    deep_manifest = tmp / "manifest.json"
    deep_manifest.write_bytes(b'{"nodes": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    no_project = tmp / "no_project"
    no_project.mkdir()

    return [
        ("SQL: stage @mystage/secrets.csv", 35, sql(FOREIGN_RELATIONS[0], "snowflake")),
        ("SQL: TABLE('...QUERY_HISTORY')", 61, sql(FOREIGN_RELATIONS[4], "snowflake")),
        ("SQL: FROM ? (placeholder)", 15, sql("SELECT * FROM ?", "postgres")),
        (
            "SQL: 15 foreign reads x 6 dialects",
            sum(len(t) for t in FOREIGN_RELATIONS) * len(DIALECTS),
            foreign_relations,
        ),
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
        ("import: gzip bomb, 1 GiB no newline", gzip_bomb.stat().st_size, catalog(gzip_bomb)),
        ("import: same bytes as .parquet.gz", parquet_bomb.stat().st_size, catalog(parquet_bomb)),
        ("import: 300,000 x one row (gzip)", repeated.stat().st_size, catalog(repeated)),
        ("import: 200 KB header field", wide_header.stat().st_size, catalog(wide_header)),
        ("import: \\r in a table name", control.stat().st_size, catalog(control)),
        ("dbt: YAML alias bomb in vars", len(ALIAS_BOMB), dbt(alias_bomb)),
        ("dbt: nested range(100000), 'x'*3e9", len(loops) + 38, dbt(jinja)),
        ("dbt: manifest nested 200,000", deep_manifest.stat().st_size, dbt(no_project, deep_manifest)),
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
                f"{name:36s} {size:>10,} B  wall {row['wall_s']:6.2f} s  cpu {row['cpu_s']:6.2f} s  {outcome}"
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
