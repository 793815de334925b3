"""``schemarag bench history``: what a query history costs the build and the search (issue 38).

On a temporary copy of one sample database (``--db``, default b2b_saas):

1. writes a log of ``--statements`` distinct statements (default 10,000) made from the schema
   itself: one to three tables joined along their foreign keys, a few columns, a filter with a
   literal that makes each statement distinct; imports it with ``import queries`` (timed apart:
   the import is a step of its own, not of the build);
2. builds the database cold (empty artifacts folder, empty embedding cache) without and with the
   history, ``--repeats`` times each, and reports the median build seconds and their ratio
   (target: at most 1.2);
3. searches the sample questions (``--questions``) with the shipped ranking against both
   versions, warm, the query cache off, and reports p50/p95 and the p50 ratio (target: 1.1).

Prints the table to stdout, progress to stderr; ``--out FILE`` writes every number as JSON.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.core.paths import data_dir, history_dir
from schemarag.tools.commands.json_output import add_json_output, print_json, write_json

BUILD_RATIO_TARGET = 1.2
SEARCH_RATIO_TARGET = 1.1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="b2b_saas", help="sample database to measure (default b2b_saas)")
    parser.add_argument(
        "--statements", type=int, default=10_000, help="statements in the log (default 10,000)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="cold builds of each kind (median; default 3)")
    parser.add_argument(
        "--questions", default=None, help="JSONL with 'question' (default data/questions/<db>.jsonl)"
    )
    add_json_output(parser)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def synthetic_log(schema: Any, n: int, seed: int = 38) -> list[dict[str, Any]]:
    """``n`` distinct statements over ``schema``: a table, up to two FK neighbours joined on
    their keys, one or two columns of each, and a numbered filter.

    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "s", "tables": [
    ...     {"name": "a", "columns": [{"name": "id"}, {"name": "x"}]},
    ...     {"name": "b", "columns": [{"name": "a_id", "foreign_key": {"table": "a", "column": "id"}}]}]})
    >>> rows = synthetic_log(db, 3)
    >>> len(rows), len({r["sql"] for r in rows}), all(r["sql"].startswith("SELECT") for r in rows)
    (3, 3, True)
    """
    rng = random.Random(seed)
    edges: dict[str, list[tuple[str, str, str, str]]] = {}
    for t in schema.tables:
        for c in t.columns:
            if c.foreign_key is not None and schema.table(c.foreign_key.table) is not None:
                target = schema.table(c.foreign_key.table).name
                edges.setdefault(t.name, []).append((t.name, c.name, target, c.foreign_key.column))
                edges.setdefault(target, []).append((target, c.foreign_key.column, t.name, c.name))
    out = []
    for i in range(n):
        first = rng.choice(schema.tables)
        aliases = {first.name: "t0"}
        joins = []
        for left, lcol, right, rcol in rng.sample(
            edges.get(first.name, []), k=min(2, len(edges.get(first.name, [])))
        ):
            if right in aliases:
                continue
            aliases[right] = f"t{len(aliases)}"
            joins.append(
                f'JOIN "{right}" AS {aliases[right]} ON {aliases[left]}."{lcol}" = {aliases[right]}."{rcol}"'
            )
        picked = []
        for name, alias in aliases.items():
            cols = schema.table(name).columns
            picked += [f'{alias}."{c.name}"' for c in rng.sample(cols, k=min(len(cols), rng.randint(1, 2)))]
        where = f"{picked[0]} <> {i}"
        sql = f'SELECT {", ".join(picked)} FROM "{first.name}" AS t0 {" ".join(joins)} WHERE {where}'
        out.append({"sql": " ".join(sql.split()), "count": rng.randint(1, 20)})
    return out


def _cold_build(db: str, data: Path, work: Path, label: str) -> float:
    from schemarag.pipelines.build import build_databases

    artifacts = work / f"artifacts-{label}"
    shutil.rmtree(artifacts, ignore_errors=True)
    start = time.perf_counter()
    (report,) = build_databases([db], data, artifacts)
    seconds = time.perf_counter() - start
    if not report.ok:
        raise SchemaragError(f"bench history: the {label} build of {db} failed: {report.error}")
    return seconds


def _search_ms(
    db: str, folders: dict[str, Path], questions: list[str], rounds: int = 5
) -> dict[str, list[float]]:
    """Warm search times per version, the two versions interleaved question by question so a
    busy machine slows both alike."""
    from schemarag.runtime.search.retriever import Retriever

    retrievers = {label: Retriever.open(db, artifacts=folder) for label, folder in folders.items()}
    for r in retrievers.values():
        r.search("warm up", table_budget=15)
    times: dict[str, list[float]] = {label: [] for label in retrievers}
    for _ in range(rounds):
        for q in questions:
            for label, retriever in retrievers.items():
                retriever.clear_query_cache()
                start = time.perf_counter()
                retriever.search(q, table_budget=15)
                times[label].append((time.perf_counter() - start) * 1000.0)
    return times


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(db: str, statements: int, repeats: int, questions: list[str], data: Path) -> dict[str, Any]:
    """Every number of the module docstring, in a temporary folder."""
    from schemarag.runtime.core.schema import load_schema
    from schemarag.tools.importers.query_log import import_queries

    with tempfile.TemporaryDirectory(prefix="schemarag-history-bench-") as tmp:
        work = Path(tmp)
        plain, with_log = work / "plain", work / "history"
        for target in (plain, with_log):
            target.mkdir()
            shutil.copy2(data / f"{db}.json", target / f"{db}.json")
            if (data / db).is_dir():
                shutil.copytree(data / db, target / db, ignore=shutil.ignore_patterns("history"))
        log = work / "log.jsonl"
        rows = synthetic_log(load_schema(plain / f"{db}.json"), statements)
        log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        _log(f"importing {statements:,} statements ...")
        start = time.perf_counter()
        report = import_queries([str(log)], db=db, data=with_log)
        import_s = time.perf_counter() - start
        _log(report.summary())
        _log("warm-up build (loads the model; not timed) ...")
        _cold_build(db, plain, work, "warmup")
        builds: dict[str, list[float]] = {"plain": [], "history": []}
        for r in range(repeats):
            for label, folder in (("plain", plain), ("history", with_log)):
                _log(f"cold build {r + 1}/{repeats} {label} ...")
                builds[label].append(_cold_build(db, folder, work, label))
        _log("searching ...")
        search = _search_ms(
            db, {label: work / f"artifacts-{label}" for label in ("plain", "history")}, questions
        )
        history_bytes = sum(p.stat().st_size for p in history_dir(with_log, db).rglob("*") if p.is_file())
    build = {k: statistics.median(v) for k, v in builds.items()}
    p50 = {k: _pct(v, 0.5) for k, v in search.items()}
    return {
        "database": db,
        "statements": statements,
        "distinct_rows": report.rows,
        "import_s": import_s,
        "stored_history_bytes": history_bytes,
        "build_s": build,
        "build_ratio": build["history"] / build["plain"],
        "search_p50_ms": p50,
        "search_p95_ms": {k: _pct(v, 0.95) for k, v in search.items()},
        "search_p50_ratio": p50["history"] / p50["plain"],
        "targets": {"build_ratio": BUILD_RATIO_TARGET, "search_p50_ratio": SEARCH_RATIO_TARGET},
    }


def _table(res: dict[str, Any]) -> str:
    b, p50, p95 = res["build_s"], res["search_p50_ms"], res["search_p95_ms"]
    return "\n".join(
        [
            f"history bench: {res['database']}, {res['statements']:,} statements "
            f"({res['distinct_rows']:,} distinct, imported in {res['import_s']:.1f} s)",
            f"cold build      without {b['plain']:.2f} s   with {b['history']:.2f} s   "
            f"ratio {res['build_ratio']:.2f} (target <= {BUILD_RATIO_TARGET})",
            f"search p50      without {p50['plain']:.2f} ms  with {p50['history']:.2f} ms  "
            f"ratio {res['search_p50_ratio']:.2f} (target <= {SEARCH_RATIO_TARGET})",
            f"search p95      without {p95['plain']:.2f} ms  with {p95['history']:.2f} ms",
        ]
    )


def run(args: argparse.Namespace) -> int:
    data = data_dir(getattr(args, "data", None))
    if not (data / f"{args.db}.json").is_file():
        raise SchemaragError(
            f"bench history: no {data / (args.db + '.json')}; pass --data and --db of a schema"
        )
    path = Path(args.questions or f"data/questions/{args.db}.jsonl")
    if not path.is_file():
        raise SchemaragError(f"bench history: no questions file {path}; pass --questions FILE.jsonl")
    questions = [
        json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line
    ]
    res = measure(args.db, args.statements, max(1, args.repeats), questions, data)
    write_json(res, getattr(args, "json_out", None))
    if getattr(args, "json_stdout", False):
        print_json(res)
    else:
        print(_table(res))
    return 0
