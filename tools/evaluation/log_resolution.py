"""How much of a warehouse's logged SQL ``import queries`` resolves against its imported catalog.

A history helps only as far as its statements resolve to the schema's tables. Spider 2.0-lite's
gold SQL names every table in full (``PROJECT.DATASET.TABLE``), as few real logs do: an analyst
in a session with a default schema (``USE SCHEMA``, ``search_path``, a default dataset) writes
``FROM TABLE``. This tool imports, per database, the gold SQL twice through the user's path
(``import catalog`` of the export, then ``import queries`` of a ``.jsonl``):

* ``as written``: the gold SQL as the repository holds it;
* ``names cut``: every table name cut to its last part, as such a session would log it;
* ``cut + schema``: the same, with the session's schema on the line (``schema``: what the
  first table's name was cut of), as Snowflake's ``SCHEMA_NAME`` gives it;
* ``cut + referenced``: the names cut, with the tables the statement read in full on the line
  (``referenced_tables``: its table names as written), as BigQuery's JOBS ``referenced_tables``
  and Snowflake's ACCESS_HISTORY ``direct_objects_accessed`` give them;
* ``cut + USE (.sql)``: the names cut, as one ``.sql`` script per database in which each
  statement follows the session statement that set its schema (Snowflake's ``USE SCHEMA s``,
  BigQuery's ``SET @@dataset_id = 'ds'``), as a worksheet would hold it.

and prints the statements kept (of those logged), the table reads they resolve to, the join
edges they log (a statement's edges times the times it was logged) and, per rule of
:mod:`~schemarag.tools.importers.query_log.short_names`, the table names written short that the
import qualified (what ``import queries`` says in its summary).

    python -m schemarag.tools.evaluation.log_resolution --warehouse <spider2_lite> \\
        --gold-sql <Spider2>/spider2-lite/evaluation_suite/gold/sql --work build/log_resolution

Each ``<instance_id>.sql`` is one logged query (a file may hold a ``DECLARE`` before it, which
the import skips as it skips any command). Catalog imports are cached in ``--work`` like ``eval
--warehouse``'s; each history is imported again.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from schemarag.tools.evaluation.history_folds_warehouse import import_history, load_gold_sql
from schemarag.tools.evaluation.warehouse import load_warehouse_questions
from schemarag.tools.evaluation.warehouse_prep import ENGINE_DIALECTS, _importer_stamp, discover, import_one
from schemarag.tools.importers.query_log.short_names import RULES

VARIANTS = ("as written", "names cut", "cut + schema", "cut + referenced", "cut + USE (.sql)")


def cut_names(sql: str, dialect: str) -> tuple[str, str | None, list[str]]:
    """``sql`` with every table name cut to its last part (``a.b.c`` -> ``c``), as a session
    with a default schema would log it, what the first name was cut of (the session's schema)
    and the names as written (the tables the warehouse would say it read); the text itself when
    it does not parse.

    >>> cut_names("select * from proj.ds.t join ds.u using (id)", "bigquery")
    ('SELECT * FROM t JOIN u USING (id)', 'proj.ds', ['proj.ds.t', 'ds.u'])
    """
    import sqlglot
    from sqlglot import exp

    try:
        trees = [t for t in sqlglot.parse(sql, read=dialect) if t is not None]
    except Exception:
        return sql, None, []
    session: str | None = None
    written: list[str] = []
    for tree in trees:
        for table in tree.find_all(exp.Table):
            if isinstance(table.this, exp.Identifier):
                cut = ".".join(p for p in (table.text("catalog"), table.text("db")) if p)
                session = session or cut or None
                written.append(f"{cut}.{table.name}" if cut else table.name)
                table.set("db", None)
                table.set("catalog", None)
    return ";\n".join(t.sql(dialect=dialect) for t in trees), session, list(dict.fromkeys(written))


def use_statement(schema: str | None, dialect: str) -> str:
    """The session statement that makes ``schema`` the default, with its semicolon and newline
    (nothing without a schema): ``SET @@dataset_id`` in BigQuery (the dataset alone), ``USE
    SCHEMA`` elsewhere.

    >>> use_statement("proj.ga4", "bigquery").strip(), use_statement("PROD.SAPABAP1", "snowflake").strip()
    ("SET @@dataset_id = 'ga4';", 'USE SCHEMA PROD.SAPABAP1;')
    """
    if not schema:
        return ""
    if dialect == "bigquery":
        return f"SET @@dataset_id = '{schema.rpartition('.')[2]}';\n"
    return f"USE SCHEMA {schema};\n"


def measure(
    warehouse: Path, gold_sql: Path, work: Path, engines: Sequence[str], say: Callable[[str], None] = print
) -> dict[str, dict[str, int]]:
    """Per variant: statements logged, kept, the table reads and join edges of the kept ones,
    and the short names qualified per rule (``by_<rule>``)."""
    from schemarag.assets.lib.query_history import open_queries
    from schemarag.tools.importers.query_log import history_dir

    questions = [q for q in load_warehouse_questions(warehouse / "questions.jsonl") if q.engine in engines]
    gold = load_gold_sql(gold_sql, questions)
    by_db: dict[tuple[str, str], list[str]] = {}
    for q in questions:
        if q.question_id in gold:
            by_db.setdefault((q.engine, q.db), []).append(gold[q.question_id])
    exports = {(e.engine, e.db): e for e in discover(warehouse, engines, [db for _, db in by_db])}
    stamp, data = _importer_stamp(), work / "data"
    out = {v: Counter() for v in VARIANTS}
    for i, ((engine, db), texts) in enumerate(sorted(by_db.items()), 1):
        if (engine, db) not in exports or not import_one(exports[(engine, db)], data, stamp).ok:
            continue
        dialect = ENGINE_DIALECTS.get(engine, "postgres")
        cut = [cut_names(t, dialect) for t in texts]
        lines = {
            "as written": [{"sql": t} for t in texts],
            "names cut": [{"sql": c} for c, _, _ in cut],
            "cut + schema": [{"sql": c, "schema": s} for c, s, _ in cut],
            "cut + referenced": [{"sql": c, "referenced_tables": r} for c, _, r in cut],
        }
        script = "".join(f"{use_statement(s, dialect)}{c};\n" for c, s, _ in cut)
        for variant in VARIANTS:
            sql = variant.endswith("(.sql)")
            log = work / "logs" / f"{engine}__{db}.{'sql' if sql else 'jsonl'}"
            log.parent.mkdir(parents=True, exist_ok=True)
            text = script if sql else "".join(json.dumps(x) + "\n" for x in lines[variant])
            log.write_text(text, encoding="utf-8")
            got = import_history(log, db, data / engine)  # keeps nothing: recorded, not raised
            stored = open_queries(history_dir(data / engine, db)).read().to_pylist() if got.kept else []
            reads = sum(len(r["tables"]) * r["count"] for r in stored)
            edges = sum(len(r["joins"]) * r["count"] for r in stored)
            out[variant].update(logged=len(texts), kept=got.kept, tables=reads, joins=edges)
            out[variant].update({f"by_{rule}": n for rule, n in got.qualified.items()})
        if i % 10 == 0 or i == len(by_db):
            say(f"{i}/{len(by_db)} databases")
    return {v: dict(c) for v, c in out.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--warehouse", type=Path, required=True, help="folder of <engine>/<db> exports")
    parser.add_argument("--gold-sql", type=Path, required=True, help="folder of <instance_id>.sql files")
    parser.add_argument("--work", type=Path, default=Path("build/log_resolution"))
    parser.add_argument("--engines", default="bigquery,snowflake", help="comma-separated engine folders")
    args = parser.parse_args(argv)
    engines = args.engines.split(",")
    got = measure(args.warehouse, args.gold_sql, args.work, engines, lambda s: print(s, file=sys.stderr))
    for variant, c in got.items():
        kept, logged, reads, edges = (c.get(k, 0) for k in ("kept", "logged", "tables", "joins"))
        rules = ", ".join(f"{c[f'by_{r}']} by {how}" for r, how in RULES.items() if c.get(f"by_{r}"))
        print(
            f"{variant:16s}  {kept} of {logged} statements kept, {reads} table reads, {edges} join edges"
            + (f"; short names qualified: {rules}" if rules else "")
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
