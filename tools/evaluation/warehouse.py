"""Table retrieval on warehouse catalog exports (Spider 2.0-lite layout), question only.

Each question is answered against its own database's index (per-db), built from the export
the way a user builds it (:mod:`.warehouse_prep`). Gold tables are full warehouse names
(``project.dataset.events_20210101``); they are mapped to the index's tables by
case-insensitive dotted suffix (gold ``proj.ds.orders`` is the kept ``ds.orders`` or
``orders``), and a date/number shard to its collapsed family (``ds.events_*``): a retrieved
family counts for every shard of it, so a question whose gold lists 30 shards of one family
needs that one family. Gold that names no indexed table (its database failed to import, or
the table is not in the export) stays unresolved and can never be hit: reported, not hidden.

Metrics, per engine and over all questions, at each budget B: CR@B (every gold table kept)
and table recall@B (share of gold tables kept). **Nontrivial** at B: questions whose database
has more than B tables after families collapse (on a smaller one any B keeps everything).

Knobs are chosen by leave-one-database-out (:func:`cross_validate`), as the BIRD harness does:
each database's questions are scored with the candidate that did best on the other databases.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from schemarag.tools.evaluation.opt_in import apply_opt_in
from schemarag.tools.evaluation.warehouse_knobs import ranking_config
from schemarag.tools.importers.shards import split_shard

WAREHOUSE_BUDGETS = (5, 10, 20)


@dataclass(frozen=True)
class WarehouseQuestion:
    question_id: str
    db: str
    engine: str
    question: str
    gold_tables: tuple[str, ...]


def load_warehouse_questions(path: Path) -> list[WarehouseQuestion]:
    """``questions.jsonl`` records: ``instance_id, db, engine, question, gold_tables``."""
    import json

    from schemarag.runtime.core.errors import ConfigError

    if not path.is_file():
        raise ConfigError(
            f"{path}: questions file not found (expected questions.jsonl beside the engine folders)"
        )
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        raw = json.loads(line)
        missing = [k for k in ("db", "engine", "question", "gold_tables") if k not in raw]
        if missing:
            raise ConfigError(f"{path}: line {n} lacks {', '.join(missing)}")
        out.append(
            WarehouseQuestion(
                str(raw.get("instance_id", n)),
                raw["db"],
                raw["engine"],
                raw["question"],
                tuple(raw["gold_tables"]),
            )
        )
    return out


class GoldMap:
    """Warehouse gold names -> the index's table names (dotted suffix; shards to families)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.by_last: dict[str, list[str]] = {}
        for name in names:
            self.by_last.setdefault(name.lower().rpartition(".")[2], []).append(name)

    @staticmethod
    def _suffix_match(a: str, b: str) -> bool:
        pa, pb = a.lower().split("."), b.lower().split(".")
        k = min(len(pa), len(pb))
        return pa[-k:] == pb[-k:]

    def _find(self, gold: str) -> str | None:
        last = gold.lower().rpartition(".")[2]
        hits = [n for n in self.by_last.get(last, ()) if self._suffix_match(n, gold)]
        return min(hits, key=len) if hits else None

    def units(self, gold: Iterable[str]) -> list[str]:
        """The indexed tables standing for a question's ``gold`` tables, deduplicated (shards of
        one family count once); an unresolved gold table as ``?<name>``, which no ranking keeps."""
        out: list[str] = []
        for g in gold:
            u = self.unit(g) or f"?{g}"
            if u not in out:
                out.append(u)
        return out

    def unit(self, gold: str) -> str | None:
        """The indexed table standing for ``gold``, or None."""
        hit = self._find(gold)
        if hit is not None:
            return hit
        shard = split_shard(gold)
        if shard is not None:
            return self._find(f"{shard[0]}*")
        return None


@dataclass
class Record:
    """One question under one setting."""

    question_id: str
    db: str
    engine: str
    n_tables: int  # tables in the database's index (after families collapse)
    gold: list[str]  # index units (deduplicated); unresolved gold as "?<name>"
    kept_by_budget: dict[int, list[str]] = field(default_factory=dict)
    latency_ms: float = 0.0
    question: str = ""

    def kept(self) -> dict[str, list[str]]:
        """The tables kept per budget, keyed as JSON keys them (``"10"``)."""
        return {str(b): t for b, t in self.kept_by_budget.items()}

    def prediction(self) -> dict[str, Any]:
        """The record as one line of a ``--predictions`` file.

        >>> Record("q1", "shop", "sqlite", 7, ["a"], {5: ["a", "b"]}, question="Q?").prediction()["kept"]
        {'5': ['a', 'b']}
        """
        return {"question_id": self.question_id, "db": self.db, "engine": self.engine,
                "question": self.question, "n_tables": self.n_tables, "gold": self.gold,
                "kept": self.kept()}  # fmt: skip


def _hit(kept: Sequence[str], gold: Sequence[str]) -> tuple[bool, float]:
    have = {k.lower() for k in kept}
    got = sum(g.lower() in have for g in gold)
    return (bool(gold) and got == len(gold)), (got / len(gold) if gold else 0.0)


def aggregate(records: Sequence[Record], budgets: Sequence[int]) -> dict[str, Any]:
    """Rows ``all``, per engine, ``nontrivial`` and ``nontrivial <engine>``: questions, CR@B
    and table recall@B per budget."""
    scopes: dict[str, Callable[[Record, int], bool]] = {"all": lambda r, b: True}
    for engine in sorted({r.engine for r in records}):
        scopes[engine] = lambda r, b, e=engine: r.engine == e
    scopes["nontrivial"] = lambda r, b: r.n_tables > b
    for engine in sorted({r.engine for r in records}):
        scopes[f"nontrivial {engine}"] = lambda r, b, e=engine: r.engine == e and r.n_tables > b
    rows: dict[str, Any] = {}
    for scope, keep in scopes.items():
        row: dict[str, Any] = {"questions": {}, "complete_recall": {}, "table_recall": {}}
        for b in budgets:
            chosen = [r for r in records if keep(r, b)]
            pairs = [_hit(r.kept_by_budget.get(b, []), r.gold) for r in chosen]
            row["questions"][str(b)] = len(chosen)
            row["complete_recall"][str(b)] = sum(p[0] for p in pairs) / len(pairs) if pairs else None
            row["table_recall"][str(b)] = sum(p[1] for p in pairs) / len(pairs) if pairs else None
        rows[scope] = row
    lat = [r.latency_ms for r in records if r.latency_ms > 0]
    return {
        "scopes": rows,
        "latency_ms": {
            "p50": statistics.median(lat) if lat else 0.0,
            "p95": sorted(lat)[int(0.95 * (len(lat) - 1))] if lat else 0.0,
        },
        "mean_tables_kept": {
            str(b): statistics.fmean(len(r.kept_by_budget.get(b, [])) for r in records) if records else 0.0
            for b in budgets
        },
        "gold_unresolved": sum(any(g.startswith("?") for g in r.gold) for r in records),
    }


def _objective(agg: dict[str, Any]) -> tuple:
    """Mean CR over the budgets on nontrivial questions, then over all questions."""
    rows = agg["scopes"]

    def mean(scope: str) -> float:
        vals = [v for v in rows.get(scope, {}).get("complete_recall", {}).values() if v is not None]
        return sum(vals) / len(vals) if vals else 0.0

    return (round(mean("nontrivial"), 9), round(mean("all"), 9))


@dataclass
class WarehouseRun:
    records: dict[int, list[Record]]  # candidate index -> records (index 0: the plain setting)
    candidates: list[dict[str, Any]]


def run_questions(
    questions: Sequence[WarehouseQuestion],
    artifacts: Path,
    available: set[str],
    budgets: Sequence[int],
    candidates: Sequence[dict[str, Any]],
    progress: Callable[[int, int], None] | None = None,
    calibration: dict[str, float] | None = None,
) -> WarehouseRun:
    """Rank every question once per candidate setting (the question is embedded and its chunks
    scored once per distinct chunk-score setting; only the table ranking runs per candidate).
    A candidate's ``calibration`` entry overrides :class:`Calibration` fields for its scoring
    (grid ``calibration``); candidates without one share the plain scoring. Databases are
    opened one at a time, so memory follows the largest index, not all of them.
    ``calibration``: opt-in Calibration overrides for every candidate
    (:func:`~tools.evaluation.opt_in.opt_in_calibration`)."""
    from schemarag.runtime.core.errors import SchemaragError
    from schemarag.runtime.ranking.candidates import RankingRequest
    from schemarag.runtime.ranking.pipeline import rank
    from schemarag.runtime.search.retriever import Retriever

    by_db: dict[str, list[WarehouseQuestion]] = {}
    for q in questions:
        by_db.setdefault(q.db, []).append(q)
    out: dict[int, list[Record]] = {k: [] for k in range(len(candidates))}
    done = 0
    top = max(budgets)
    configs = [ranking_config(c) for c in candidates]
    # candidates sharing chunk-score overrides share one scoring of the question
    scorings: dict[tuple, list[int]] = {}
    for k, c in enumerate(candidates):
        scorings.setdefault(tuple(sorted((c.get("calibration") or {}).items())), []).append(k)
    for db, qs in by_db.items():
        retriever = None
        if db in available:
            try:
                retriever = Retriever.open(db, artifacts=artifacts)
                apply_opt_in(retriever, calibration or {})
            except SchemaragError as exc:  # not built (its build failed): every question misses
                say(f"eval: {db}: no index ({str(exc).splitlines()[0][:160]}); its questions count as misses")
        names = list(retriever.artifact.table_names) if retriever is not None else []
        gold_map = GoldMap(names)
        base = retriever.calibration if retriever is not None else None
        if retriever is not None:
            retriever.rank_tables("warm up", budget=top)
        for q in qs:
            units = gold_map.units(q.gold_tables)
            for overrides, members in scorings.items():
                rel = None
                hits = []
                score_ms = 0.0
                if retriever is not None:
                    retriever.calibration = replace(base, **dict(overrides))
                    retriever.clear_query_cache()
                    started = time.perf_counter()
                    rel, _, _ = retriever.score_chunks(q.question, "hybrid")
                    hits = retriever.mention_hits(q.question, retriever.artifact)
                    score_ms = (time.perf_counter() - started) * 1000.0
                for k in members:
                    rec = Record(q.question_id, q.db, q.engine, len(names), units, question=q.question)
                    if rel is not None:
                        for b in sorted(budgets, reverse=True):
                            started = time.perf_counter()
                            ask = RankingRequest(q.question, b, None, None, hits, True, retriever.calibration)
                            ranking = rank(retriever.artifact, rel, ask, configs[k])
                            if b == top:
                                rec.latency_ms = score_ms + (time.perf_counter() - started) * 1000.0
                            rec.kept_by_budget[b] = list(ranking.tables)
                    out[k].append(rec)
            if retriever is not None:
                retriever.calibration = base
            done += 1
            if progress:
                progress(done, len(questions))
    return WarehouseRun(out, list(candidates))


def _in_sample(
    candidate: dict[str, Any], records: Sequence[Record], budgets: Sequence[int]
) -> dict[str, Any]:
    """One candidate's CR@B on all databases, all and nontrivial questions."""
    scopes = aggregate(records, budgets)["scopes"]
    return {
        "candidate": candidate,
        "complete_recall": {s: scopes[s]["complete_recall"] for s in ("all", "nontrivial")},
    }


def cross_validate(run: WarehouseRun, budgets: Sequence[int]) -> dict[str, Any]:
    """Leave-one-database-out over ``run``'s candidates: the held-out figure, each fold's choice
    and the candidate chosen on all databases."""
    from schemarag.tools.evaluation.crossval import lodo

    per_knob = [run.records[k] for k in range(len(run.candidates))]
    dbs = [r.db for r in per_knob[0]]
    held, chosen, overall = lodo(per_knob, dbs, budgets, _objective, aggregate)
    agree = sum(k == overall for k in chosen.values())
    return {
        "objective": "max mean CR over the budgets on nontrivial questions, then on all",
        "candidates": run.candidates,
        "cross_validated": aggregate(held, budgets),
        "chosen_per_held_out_db": {d: run.candidates[k] for d, k in sorted(chosen.items())},
        "folds_agreeing_with_chosen_on_all": f"{agree}/{len(chosen)}",
        "chosen_on_all": run.candidates[overall],
        "in_sample_of_chosen_on_all": aggregate(run.records[overall], budgets),
        # every candidate on all databases (in-sample: for reading the grid, not as a result)
        "in_sample_per_candidate": [
            _in_sample(c, run.records[k], budgets) for k, c in enumerate(run.candidates)
        ],
    }


def format_table(agg: dict[str, Any], budgets: Sequence[int], title: str) -> str:
    """A fixed-width table: one row per scope, CR@B and table recall@B."""
    head = f"{'scope':<22}" + "".join(f"{'n@' + str(b):>7}" for b in budgets)
    head += "".join(f"{'CR@' + str(b):>8}" for b in budgets) + "".join(
        f"{'TR@' + str(b):>8}" for b in budgets
    )
    lines = [title, head]

    def cell(v: float | None) -> str:
        return f"{v:8.3f}" if v is not None else f"{'-':>8}"

    for scope, row in agg["scopes"].items():
        line = f"{scope:<22}" + "".join(f"{row['questions'][str(b)]:>7}" for b in budgets)
        line += "".join(cell(row["complete_recall"][str(b)]) for b in budgets)
        line += "".join(cell(row["table_recall"][str(b)]) for b in budgets)
        lines.append(line)
    lat = agg["latency_ms"]
    lines.append(
        f"search latency p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms "
        f"(score + rank at B={max(budgets)}); "
        f"questions with unresolved gold: {agg['gold_unresolved']}"
    )
    return "\n".join(lines)


def format_engine_table(rows: Sequence[dict[str, Any]]) -> str:
    """The import/build table: one row per engine."""
    head = (
        f"{'engine':<10}{'dbs':>9}{'raw tables':>12}{'tables':>9}{'columns':>10}{'import s':>10}"
        f"{'build s':>9}{'peak RSS MB':>13}{'warnings':>10}"
    )
    lines = [head]
    for r in rows:
        rss = max(r["import_peak_rss_mb"] or 0.0, r["build_peak_rss_mb"] or 0.0)
        build = f"{r['build_seconds']:.0f}" if r["build_seconds"] is not None else "-"
        dbs = f"{r['databases']}/{r['databases_found']}"
        lines.append(
            f"{r['engine']:<10}{dbs:>9}{r['raw_tables']:>12}"
            f"{r['tables']:>9}{r['columns']:>10}{r['import_seconds']:>10.0f}{build:>9}{rss:>13.0f}{r['warnings']:>10}"
        )
        for db, err in r["failed"].items():
            lines.append(f"  import failed: {r['engine']}/{db}: {err}")
    return "\n".join(lines)


def plot_recall(agg: dict[str, Any], budgets: Sequence[int], path: Path, title: str) -> Path:
    """Complete recall (solid) and table recall (dotted) against the budget, one colour per scope."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    xs = list(budgets)
    for scope, row in agg["scopes"].items():
        if scope.startswith("nontrivial ") and scope != "nontrivial":
            continue
        cr = [row["complete_recall"][str(b)] for b in xs]
        tr = [row["table_recall"][str(b)] for b in xs]
        pts = [(x, c, t) for x, c, t in zip(xs, cr, tr, strict=True) if c is not None]
        if not pts:
            continue
        (line,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], "-o", label=f"{scope} CR@B",
                          linewidth=2.4 if scope in ("all", "nontrivial") else 1.4)  # fmt: skip
        ax.plot(
            [p[0] for p in pts], [p[2] for p in pts], ":", color=line.get_color(), label=f"{scope} recall@B"
        )
    ax.set_xlabel("table budget B (tables in the focused schema; a family counts once)")
    ax.set_ylabel("complete recall CR@B (solid) / table recall@B (dotted)")
    ax.set_ylim(0, 1.02)
    ax.set_xticks(xs)
    ax.grid(True, alpha=0.3)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right", fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
