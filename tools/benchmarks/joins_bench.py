"""Precision and recall of inferred joins (``infer_joins: names | values | both``) against the
foreign keys BIRD dev declares, on SQLite databases rebuilt from BIRD's released statistics.

BIRD's SQLite files are not on this machine (only ``dev_tables.json`` and ``dev_metadata.json``),
so each dev database is regenerated: the declared tables, columns, types and primary keys, and
per column the row count (capped at ``--rows``), null fraction, distinct fraction, min/max and
sample values from the metadata. A foreign-key column draws its values from its parent's
generated values; every other column draws from its own pool, so integer codes, years and
counts overlap id ranges as they do in the real data. Then the foreign keys are left out of the
DDL and the live-datasource snapshot has to find them.

``--orphans 0.01`` deletes 1% of every parent table's rows after its children were written, as
deleted customers leave orders behind; the default (0) writes no orphans. What this does not
reproduce: correlations between columns, and the real values of high-cardinality columns.
Read the numbers as "the rules on realistic shapes", not as BIRD itself.

    schemarag bench joins [--rows 2000] [--db NAME ...] [--orphans 0.01] [--min-containment 0.95]
                          [--json OUT] [--chart PNG]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import sqlite3
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schemarag.tools.commands.json_output import add_json_output

BIRD = Path("/work/shared/benchmarks/bird_dev")
MODES = ("names", "values", "both")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bird", default=str(BIRD), help="folder with dev_tables.json and dev_metadata.json")
    parser.add_argument(
        "--rows",
        type=int,
        default=2000,
        help="real row counts up to this, log-compressed above (default 2000)",
    )
    parser.add_argument("--db", action="append", default=[], help="only these databases (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--orphans",
        type=float,
        default=0.0,
        help="share of parent rows deleted after the children were written (default 0)",
    )
    parser.add_argument(
        "--min-containment",
        type=float,
        default=None,
        help="join_inference.min_containment (default: the datasource default, 0.95)",
    )
    add_json_output(parser)
    parser.add_argument(
        "--loo",
        nargs="+",
        metavar="RESULTS_JSON",
        help="instead of measuring: choose min_containment leave-one-database-out from earlier --json files",
    )
    parser.add_argument("--chart", default="reports/bench_joins.png", help="PNG chart of the results")


# -- regenerating one database ------------------------------------------------------------------


def _mutate(template: str, rng: random.Random) -> str:
    """A value shaped like ``template``: digits and letters replaced, punctuation kept."""
    out = []
    for ch in template:
        if ch.isdigit():
            out.append(rng.choice(string.digits))
        elif ch.isalpha():
            out.append(rng.choice(string.ascii_uppercase if ch.isupper() else string.ascii_lowercase))
        else:
            out.append(ch)
    return "".join(out)


def _int(value: Any) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def _pool(col: dict[str, Any], full_rows: int, d: int, rng: random.Random) -> list[Any]:
    """``d`` distinct values shaped like the column's statistics."""
    kind = (col.get("type") or "text").lower()
    samples = [s for s in col.get("sample_values") or [] if s is not None]
    if kind == "integer":
        lo, hi = _int(col.get("min_value")), _int(col.get("max_value"))
        lo = 0 if lo is None else lo
        hi = lo + d if hi is None or hi < lo else hi
        span = hi - lo + 1
        if span <= d:
            return list(range(lo, hi + 1))
        if span <= 1.5 * max(full_rows, 1):  # dense in the real data (ids, sequences): dense here
            return list(range(lo, lo + d))
        return rng.sample(range(lo, hi + 1), d)
    if kind == "real":
        lo = float(col.get("min_value") or 0)
        hi = float(col.get("max_value") or lo + 100)
        return list({round(rng.uniform(lo, hi), 2) for _ in range(d)})
    if kind in ("date", "datetime"):
        start = dt.date(1990, 1, 1)
        days = rng.sample(range(0, 12000), min(d, 12000))
        return [str(start + dt.timedelta(days=x)) for x in days]
    values = list(dict.fromkeys(str(s) for s in samples))[:d]
    seen = set(values)
    templates = values or [f"{col['name']}_0000"]
    attempts = 0
    while len(values) < d and attempts < 20 * d:
        attempts += 1
        v = _mutate(rng.choice(templates), rng)
        if v not in seen:
            seen.add(v)
            values.append(v)
    i = 0
    while len(values) < d:  # templates too short to vary: number them
        i += 1
        v = f"{templates[0]}-{i}"
        if v not in seen:
            seen.add(v)
            values.append(v)
    return values


def _column_values(
    pool: list[Any], n: int, null_fraction: float, unique: bool, rng: random.Random
) -> list[Any]:
    if unique:
        values = list(pool[:n])
        rng.shuffle(values)
        return values + [None] * (n - len(values))
    values = list(pool) + [rng.choice(pool) for _ in range(max(0, n - len(pool)))] if pool else [None] * n
    values = values[:n]
    rng.shuffle(values)
    for i in rng.sample(range(n), round(null_fraction * n)):
        values[i] = None
    return values


def gold_foreign_keys(spider: dict[str, Any]) -> set[tuple[str, str, str, str]]:
    """Declared single-column FKs ``(table, column, ref_table, ref_column)`` from ``dev_tables.json``."""
    tables = spider["table_names_original"]
    cols = spider["column_names_original"]
    out = set()
    for child, parent in spider["foreign_keys"]:
        (ct, cc), (pt, pc) = cols[child], cols[parent]
        if (tables[ct], cc) != (tables[pt], pc):
            out.add((tables[ct], cc, tables[pt], pc))
    return out


def _rows(real: int, cap: int) -> int:
    """Real row counts up to ``cap``; above it, log-compressed so bigger tables stay bigger
    (a one-to-one extension table must keep fewer rows than its parent)."""
    return max(1, real if real <= cap else round(cap * (1 + math.log10(real / cap))))


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def regenerate(
    meta: dict[str, Any],
    gold: set[tuple[str, str, str, str]],
    path: Path,
    max_rows: int,
    seed: int,
    orphans: float = 0.0,
) -> None:
    """Write a SQLite database shaped like ``meta``, declaring primary keys but no foreign keys."""
    rng = random.Random(f"{seed}:{meta['name']}")
    tables = {t["name"]: t for t in meta["tables"]}
    rows = {name: _rows(int(t.get("row_count") or 1), max_rows) for name, t in tables.items()}
    parent_of = {(ct, cc): (pt, pc) for ct, cc, pt, pc in gold}
    parent_tables = {pt for _, _, pt, _ in gold}
    pools: dict[tuple[str, str], list[Any]] = {}

    def pk_of(t: dict[str, Any]) -> list[str]:
        return list(t.get("primary_key") or [])

    def pool_of(tname: str, cname: str, depth: int = 0) -> list[Any]:
        key = (tname, cname)
        if key in pools:
            return pools[key]
        t = tables[tname]
        col = next(c for c in t["columns"] if c["name"] == cname)
        n, full = rows[tname], int(t.get("row_count") or 1)
        unique = pk_of(t) == [cname] or (col.get("unique_fraction") or 0) >= 0.999
        d = n if unique else max(1, min(n, round((col.get("unique_fraction") or 0) * n) or 1))
        parent = parent_of.get(key)
        if parent is not None and parent[0] in tables and depth < 5:
            source = [v for v in pool_of(*parent, depth + 1) if v is not None]
            pools[key] = rng.sample(source, min(d, len(source))) if source else []
        else:
            pools[key] = _pool(col, full, d, rng)
        return pools[key]

    conn = sqlite3.connect(path)
    try:
        for tname, t in tables.items():
            pk = pk_of(t)
            cols = [f"{_q(c['name'])} {c.get('type') or 'text'}" for c in t["columns"]]
            if pk:
                cols.append(f"PRIMARY KEY ({', '.join(_q(c) for c in pk)})")
            conn.execute(f"CREATE TABLE {_q(tname)} ({', '.join(cols)})")
        for tname, t in tables.items():
            n = rows[tname]
            pk = pk_of(t)
            data = []
            for c in t["columns"]:
                unique = pk == [c["name"]] or (c.get("unique_fraction") or 0) >= 0.999
                nf = 0.0 if c["name"] in pk else float(c.get("null_fraction") or 0)
                data.append(_column_values(pool_of(tname, c["name"]), n, nf, unique, rng))
            records = list(zip(*data, strict=True))
            if orphans and tname in parent_tables and len(records) > 1:
                # parent rows deleted after their children were written: the children's orphans
                drop = set(rng.sample(range(len(records)), round(orphans * len(records))))
                records = [r for i, r in enumerate(records) if i not in drop] or records[:1]
            marks = ", ".join("?" for _ in t["columns"])
            conn.executemany(f"INSERT OR IGNORE INTO {_q(tname)} VALUES ({marks})", records)
        conn.commit()
    finally:
        conn.close()


# -- measuring ----------------------------------------------------------------------------------


def inferred_pairs(db: Any) -> set[tuple[str, str, str, str]]:
    return {
        (t.name, c.name, c.foreign_key.table, c.foreign_key.column)
        for t in db.tables
        for c in t.columns
        if c.foreign_key is not None and c.foreign_key.inferred
    }


def _prf(tp: int, predicted: int, gold: int) -> dict[str, float]:
    return {
        "precision": round(tp / predicted, 4) if predicted else 0.0,
        "recall": round(tp / gold, 4) if gold else 0.0,
    }


def measure(
    bird: Path,
    max_rows: int,
    only: list[str],
    seed: int,
    orphans: float = 0.0,
    min_containment: float | None = None,
) -> dict[str, Any]:
    from schemarag.assets.lib.datasources.config import JoinInference, parse_datasources
    from schemarag.assets.lib.datasources.snapshot import take_snapshot

    if min_containment is None:
        min_containment = JoinInference().min_containment
    spider = {d["db_id"]: d for d in json.loads((bird / "dev_tables.json").read_text(encoding="utf-8"))}
    metas = json.loads((bird / "dev_metadata.json").read_text(encoding="utf-8"))
    per_db: list[dict[str, Any]] = []
    totals = {m: {"tp": 0, "predicted": 0, "reversed": 0} for m in MODES}
    gold_total = 0
    with tempfile.TemporaryDirectory(prefix="schemarag-joins-") as tmp:
        for meta in metas:
            name = meta["name"]
            if only and name not in only:
                continue
            gold = gold_foreign_keys(spider[name])
            path = Path(tmp) / f"{name}.sqlite"
            regenerate(meta, gold, path, max_rows, seed, orphans)
            gold_total += len(gold)
            row: dict[str, Any] = {"db": name, "gold": len(gold)}
            for mode in MODES:
                entry = parse_datasources(
                    {
                        "datasources": [
                            {
                                "name": name,
                                "kind": "sqlite",
                                "tenant": "bench",
                                "connection": str(path),
                                "infer_joins": mode,
                                "join_inference": {"min_containment": min_containment},
                                "sampling": {"enabled": False},
                            }
                        ]
                    },
                    Path(tmp) / "datasources.yaml",
                )[0]
                start = time.perf_counter()
                predicted = inferred_pairs(take_snapshot(entry).database)
                seconds = time.perf_counter() - start
                tp = len(predicted & gold)
                rev = len({(pt, pc, ct, cc) for ct, cc, pt, pc in predicted} & gold)
                totals[mode]["tp"] += tp
                totals[mode]["predicted"] += len(predicted)
                totals[mode]["reversed"] += rev
                row[mode] = {
                    "predicted": len(predicted),
                    "tp": tp,
                    "reversed": rev,
                    "seconds": round(seconds, 3),
                    "false": sorted(".".join(p[:2]) + " -> " + ".".join(p[2:]) for p in predicted - gold),
                    "missed": sorted(".".join(p[:2]) + " -> " + ".".join(p[2:]) for p in gold - predicted),
                    **_prf(tp, len(predicted), len(gold)),
                }
            per_db.append(row)
    overall = {
        m: {**totals[m], "gold": gold_total, **_prf(totals[m]["tp"], totals[m]["predicted"], gold_total)}
        for m in MODES
    }
    return {
        "rows_cap": max_rows,
        "seed": seed,
        "orphans": orphans,
        "min_containment": min_containment,
        "databases": per_db,
        "overall": overall,
    }


def chart(results: dict[str, Any], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.35
    xs = range(len(MODES))
    prec = [results["overall"][m]["precision"] for m in MODES]
    rec = [results["overall"][m]["recall"] for m in MODES]
    ax.bar([x - width / 2 for x in xs], prec, width, label="precision")
    ax.bar([x + width / 2 for x in xs], rec, width, label="recall")
    ax.set_xticks(list(xs), [f"infer_joins: {m}" for m in MODES])
    ax.set_ylim(0, 1.2)
    ax.set_xlabel("inference mode")
    ax.set_ylabel("precision / recall vs declared FKs")
    ax.set_title(
        "Inferred joins vs declared FKs\nBIRD dev databases regenerated from their statistics "
        f"(rows capped near {results['rows_cap']}, orphans {results['orphans']:.0%}, "
        f"min_containment {results['min_containment']})"
    )
    ax.title.set_fontsize(9)
    ax.legend(loc="upper left", ncol=2)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def leave_one_out(files: list[Path]) -> list[str]:
    """Choose ``min_containment`` per held-out database by pooled F1 (values mode) on the other
    databases, over every data setting in ``files`` (e.g. clean and ``--orphans 0.01`` runs of
    each candidate value); score the held-out database with its choice."""
    runs: dict[float, list[dict[str, Any]]] = {}
    for f in files:
        r = json.loads(Path(f).read_text(encoding="utf-8"))
        runs.setdefault(float(r["min_containment"]), []).append(r)

    def f1(tp: int, pred: int, gold: int) -> float:
        p, r = (tp / pred if pred else 0.0), (tp / gold if gold else 0.0)
        return 2 * p * r / (p + r) if p + r else 0.0

    def pooled(c: float, keep: Any) -> tuple[int, int, int]:
        rows = [d for r in runs[c] for d in r["databases"] if keep(d["db"])]
        return (
            sum(d["values"]["tp"] for d in rows),
            sum(d["values"]["predicted"] for d in rows),
            sum(d["gold"] for d in rows),
        )

    names = sorted({d["db"] for rs in runs.values() for r in rs for d in r["databases"]})
    lines, held_tp, held_pred, held_gold = [], 0, 0, 0
    for held in names:
        scores = {c: f1(*pooled(c, lambda db, h=held: db != h)) for c in runs}
        best = max(sorted(scores), key=lambda c: scores[c])
        tp, pred, gold = pooled(best, lambda db, h=held: db == h)
        held_tp, held_pred, held_gold = held_tp + tp, held_pred + pred, held_gold + gold
        shown = ", ".join(f"{c}: F1 {s:.3f}" for c, s in sorted(scores.items()))
        lines.append(f"{held:26} chosen {best}  (on the other databases {shown})")
    lines.append(
        f"held out, all settings: precision {held_tp / max(held_pred, 1):.3f} ({held_tp}/{held_pred}), "
        f"recall {held_tp / max(held_gold, 1):.3f} ({held_tp}/{held_gold})"
    )
    return lines


def run(args: argparse.Namespace) -> int:
    if args.loo:
        print("\n".join(leave_one_out([Path(f) for f in args.loo])))
        return 0
    bird = Path(args.bird)
    if not (bird / "dev_metadata.json").is_file():
        print(f"{bird}: no dev_metadata.json; pass --bird FOLDER", file=sys.stderr)
        return 2
    results = measure(bird, args.rows, args.db, args.seed, args.orphans, args.min_containment)
    print(f"{'database':28} {'gold':>4}  " + "  ".join(f"{m:>18}" for m in MODES))
    for row in results["databases"]:
        cells = "  ".join(
            f"{row[m]['tp']:>3}/{row[m]['predicted']:<3} P{row[m]['precision']:.2f} R{row[m]['recall']:.2f}"
            for m in MODES
        )
        print(f"{row['db']:28} {row['gold']:>4}  {cells}")
    for m in MODES:
        o = results["overall"][m]
        print(
            f"overall {m:6}: precision {o['precision']:.3f} ({o['tp']}/{o['predicted']}), "
            f"recall {o['recall']:.3f} ({o['tp']}/{o['gold']}), {o['reversed']} inferred in reverse"
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    if args.chart:
        print(f"chart: {chart(results, Path(args.chart))}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
