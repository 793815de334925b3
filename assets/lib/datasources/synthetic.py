"""Generate small example databases and time introspection of a large one.

    python -m schemarag.assets.lib.datasources.synthetic \
        example data/live/shop.sqlite
    python -m schemarag.assets.lib.datasources.synthetic \
        bench --tables 500 [--rows 20] [--out /tmp/wide.sqlite]
    python -m schemarag.assets.lib.datasources.synthetic \
        bench --tables 500 --postgres postgresql://127.0.0.1:5432/test

``example`` writes the tiny shop used by ``data/datasources.yaml``; ``bench`` writes a SQLite
file with N tables (each with an FK to the previous one, a low-cardinality status column and a
``*_email`` column) and prints how long :func:`take_snapshot` takes on it.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE_SQL = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, email TEXT);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
  status TEXT NOT NULL, total REAL, placed_at TEXT);
INSERT INTO customers VALUES (1, 'Ada', 'Alameda', 'ada@example.com'),
  (2, 'Bob', 'Oakland', 'bob@example.com'), (3, 'Cy', 'Alameda', NULL);
INSERT INTO orders VALUES (1, 1, 'active', 10.5, '2024-01-02'), (2, 1, 'cancelled', 3.0, '2024-02-03'),
  (3, 2, 'pending', 7.25, '2024-03-04'), (4, 3, 'active', 1.0, '2024-03-05');
"""


def make_example(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as conn:
        conn.executescript(EXAMPLE_SQL)
    conn.close()
    return path


def make_wide(path: Path, tables: int, rows: int = 20) -> Path:
    """``tables`` tables ``t0000..``, each 6 columns, FK to the previous table, ``rows`` rows."""
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    statuses = ("new", "open", "closed")
    with conn:
        for i in range(tables):
            fk = f", parent_id INTEGER REFERENCES t{i - 1:04d}(id)" if i else ", parent_id INTEGER"
            conn.execute(
                f"CREATE TABLE t{i:04d} (id INTEGER PRIMARY KEY, name TEXT NOT NULL, status TEXT, "
                f"amount REAL, contact_email TEXT{fk})"
            )
            conn.executemany(
                f"INSERT INTO t{i:04d} VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (r, f"item {r}", statuses[r % 3], r * 1.5, f"u{r}@x.org", r if i else None)
                    for r in range(rows)
                ],
            )
    conn.close()
    return path


def bench_postgres(tables: int, rows: int, dsn: str) -> str:
    """Create ``tables`` tables in a fresh schema of ``dsn``, time a snapshot, drop the schema."""
    import uuid

    import psycopg

    from schemarag.assets.lib.datasources.config import DatasourceEntry
    from schemarag.assets.lib.datasources.snapshot import take_snapshot

    schema = f"srag_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            for i in range(tables):
                fk = f" REFERENCES {schema}.t{i - 1:04d}(id)" if i else ""
                conn.execute(
                    f"CREATE TABLE {schema}.t{i:04d} (id int PRIMARY KEY, name text NOT NULL, status text, "
                    f"amount numeric, contact_email text, parent_id int{fk});"
                    f"COMMENT ON TABLE {schema}.t{i:04d} IS 'synthetic table {i}';"
                    f"INSERT INTO {schema}.t{i:04d} SELECT g, 'item ' || g, "
                    f"(ARRAY['new','open','closed'])[1 + g % 3], g * 1.5, 'u' || g || '@x.org', "
                    f"{'g' if i else 'NULL'} FROM generate_series(0, {rows - 1}) g"
                )
            entry = DatasourceEntry(
                name="wide", kind="postgres", tenant="bench", connection=dsn, schemas=[schema]
            )
            t0 = time.perf_counter()
            snap = take_snapshot(entry)
            elapsed = time.perf_counter() - t0
        finally:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    cols = sum(len(t.columns) for t in snap.database.tables)
    return (
        f"postgres {tables} tables / {cols} columns / {rows} rows each: snapshot {elapsed:.2f}s "
        f"({elapsed / tables * 1000:.1f} ms/table), version {snap.database.schema_version}"
    )


def bench(tables: int, rows: int, out: Path | None) -> str:
    from schemarag.assets.lib.datasources.config import DatasourceEntry
    from schemarag.assets.lib.datasources.snapshot import take_snapshot

    path = out or Path(tempfile.mkdtemp()) / f"wide{tables}.sqlite"
    make_wide(path, tables, rows)
    entry = DatasourceEntry(name="wide", kind="sqlite", tenant="bench", connection=str(path))
    t0 = time.perf_counter()
    snap = take_snapshot(entry)
    elapsed = time.perf_counter() - t0
    cols = sum(len(t.columns) for t in snap.database.tables)
    return (
        f"sqlite {tables} tables / {cols} columns / {rows} rows each: snapshot {elapsed:.2f}s "
        f"({elapsed / tables * 1000:.1f} ms/table), version {snap.database.schema_version}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m schemarag.assets.lib.datasources.synthetic")
    sub = parser.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("example", help="write the example shop SQLite file")
    ex.add_argument("path", type=Path)
    b = sub.add_parser("bench", help="time a snapshot of an N-table SQLite file")
    b.add_argument("--tables", type=int, default=500)
    b.add_argument("--rows", type=int, default=20)
    b.add_argument("--out", type=Path, default=None, help="sqlite: where to write the file")
    b.add_argument("--postgres", metavar="DSN", default=None, help="bench PostgreSQL instead of SQLite")
    args = parser.parse_args(argv)
    if args.cmd == "example":
        print(f"wrote {make_example(args.path)}")
    else:
        if args.postgres:
            print(bench_postgres(args.tables, args.rows, args.postgres))
        else:
            print(bench(args.tables, args.rows, args.out))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
