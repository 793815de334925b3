"""Join keys from names alone, scored where the truth is known: strip declared foreign keys and
recover them (``schemarag bench keys``).

For every database of the given Spider-format ``tables.json`` files (BIRD dev + train by
default: 80 databases, their declared keys the truth), the declared foreign keys are removed
and inferred again, by :func:`~schemarag.assets.lib.join_inference.infer_foreign_keys` (the two
name rules BIRD's ``--infer-joins`` uses) and by
:func:`~schemarag.assets.lib.join_inference.infer_join_keys` (those plus the warehouse rules:
owner by name, shared keys), the latter also per confidence tier. Precision and recall are
reported on **table pairs** (undirected: what join-path completion and FK expansion use) and
on **columns** (child column -> parent table). Spider 2.0-lite declares no foreign keys (its
``foreign_keys.csv`` files hold primary keys only), so it cannot be scored this way.

    schemarag bench keys [--tables a.json,b.json] [--json OUT] [--chart PNG]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from schemarag.runtime.core.schema import Database
from schemarag.tools.commands.json_output import add_json_output

BIRD = Path("../shared/benchmarks")
DEFAULT_TABLES = f"{BIRD}/bird_dev/dev_tables.json,{BIRD}/bird_train/train_tables.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tables",
        default=DEFAULT_TABLES,
        help="Spider-format tables.json files, comma-separated (default: BIRD dev + train)",
    )
    add_json_output(parser)
    parser.add_argument("--chart", default=None, metavar="PNG", help="precision/recall bar chart")


def _edges(
    db: Database, keep: Callable[[Any], bool]
) -> tuple[set[tuple[str, str]], set[tuple[str, str, str]]]:
    """``(table pairs, (table, column, parent table))`` of the foreign keys ``keep`` accepts."""
    pairs: set[tuple[str, str]] = set()
    cols: set[tuple[str, str, str]] = set()
    for t in db.tables:
        for c in t.columns:
            fk = c.foreign_key
            if fk is None or not keep(fk) or fk.table.lower() == t.name.lower():
                continue
            a, b = sorted((t.name.lower(), fk.table.lower()))
            pairs.add((a, b))
            cols.add((t.name.lower(), c.name.lower(), fk.table.lower()))
    return pairs, cols


def _prf(tp: int, predicted: int, gold: int) -> dict[str, float | int]:
    p = tp / predicted if predicted else 0.0
    r = tp / gold if gold else 0.0
    f1 = round(2 * p * r / (p + r), 4) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": f1,
            "predicted": predicted, "gold": gold, "true_positive": tp}  # fmt: skip


def load_databases(files: list[Path]) -> list[Database]:
    from schemarag.tools.importers.spider_bird import build_database

    dbs = []
    for path in files:
        for entry in json.loads(path.read_text(encoding="utf-8")):
            dbs.append(build_database(entry, [], source=str(path)))
    return dbs


def measure(dbs: list[Database]) -> dict[str, Any]:
    """Pooled precision/recall per rule set (and per confidence tier of the warehouse rules)."""
    from schemarag.assets.lib.join_inference import infer_foreign_keys, infer_join_keys

    settings: dict[str, tuple[Callable[[Database], Database], Callable[[Any], bool]]] = {
        "names (infer_foreign_keys)": (infer_foreign_keys, lambda fk: fk.inferred),
        "warehouse (infer_join_keys)": (infer_join_keys, lambda fk: fk.inferred),
        "warehouse, confidence >= 0.8": (
            infer_join_keys,
            lambda fk: fk.inferred and (fk.confidence or 0) >= 0.8,
        ),
    }
    totals: dict[str, dict[str, list[int]]] = {
        s: {"pairs": [0, 0, 0], "columns": [0, 0, 0]} for s in settings
    }
    for db in dbs:
        gold_pairs, gold_cols = _edges(db, lambda fk: not fk.inferred)
        if not gold_pairs:
            continue
        stripped = db.model_copy(
            update={
                "tables": [
                    t.model_copy(
                        update={"columns": [c.model_copy(update={"foreign_key": None}) for c in t.columns]}
                    )
                    for t in db.tables
                ]
            }
        )
        for name, (infer, keep) in settings.items():
            pairs, cols = _edges(infer(stripped), keep)
            for kind, got, gold in (("pairs", pairs, gold_pairs), ("columns", cols, gold_cols)):
                acc = totals[name][kind]
                acc[0] += len(got & gold)
                acc[1] += len(got)
                acc[2] += len(gold)
    scored = sum(1 for db in dbs if _edges(db, lambda fk: not fk.inferred)[0])
    return {
        "databases_with_declared_keys": scored,
        "results": {
            name: {kind: _prf(*acc) for kind, acc in kinds.items()} for name, kinds in totals.items()
        },
    }


def run(args: argparse.Namespace) -> int:
    files = [Path(p.strip()) for p in args.tables.split(",") if p.strip()]
    missing = [str(p) for p in files if not p.is_file()]
    if missing:
        from schemarag.runtime.core.errors import ConfigError

        raise ConfigError(f"bench keys: {', '.join(missing)} not found; pass --tables")
    result = measure(load_databases(files))
    result["tables"] = [str(p) for p in files]
    print(f"{'rule set':<32}{'pair P':>8}{'pair R':>8}{'col P':>8}{'col R':>8}{'predicted pairs':>17}")
    for name, r in result["results"].items():
        p, c = r["pairs"], r["columns"]
        print(f"{name:<32}{p['precision']:>8.3f}{p['recall']:>8.3f}{c['precision']:>8.3f}{c['recall']:>8.3f}"
              f"{p['predicted']:>17}")  # fmt: skip
    print(
        f"({result['databases_with_declared_keys']} databases with declared keys; truth: their declared FKs)"
    )
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.chart:
        from schemarag.tools.benchmarks.charts import grouped_bars

        names = list(result["results"])
        series = {
            f"{kind} {m}": [result["results"][n][kind][m] for n in names]
            for kind in ("pairs", "columns")
            for m in ("precision", "recall")
        }
        grouped_bars(Path(args.chart), names, series, ylabel="precision / recall vs declared FKs",
                     title="Join keys inferred from names (declared FKs stripped and recovered)")  # fmt: skip
        print(f"chart: {args.chart}", file=sys.stderr)
    return 0
