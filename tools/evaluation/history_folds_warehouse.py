"""``eval --warehouse DIR --query-log-folds K --gold-sql DIR``: the query-history folds on warehouse
exports (issue 38 item 5, Spider 2.0-lite).

The protocol is BIRD's (:mod:`.history_folds`): each database's questions are dealt into ``K``
seeded folds; for fold ``k`` the history of a database is the gold SQL of its questions in the
*other* folds (the ones with a ``<instance_id>.sql`` in ``--gold-sql``), written as the ``.jsonl``
a user exports, imported with :func:`~schemarag.tools.importers.query_log.importer.import_queries`
in the schema's own dialect into a per-fold copy of the warehouse's import folder, and built with
:func:`~schemarag.pipelines.build.build_databases` into the fold's own artifacts; fold ``k``'s
questions are then ranked by their question alone. A question's own SQL never reaches its index.

What differs from BIRD:

* Gold SQL lives beside the questions (one file per instance), not in them, and only about half
  of Spider 2.0-lite's questions have one; a question *has a history* when its database kept at
  least one statement in its fold. The figures are over those questions only (the others' index
  is the base one), and their count is reported.
* Warehouse SQL does not always resolve against the export (a wildcard over part of a shard
  family's suffix, ``ga_sessions_2017*``; a table the export lacks) nor is always one query (a
  ``DECLARE`` first): the import counts and skips those statements, and the report gives per
  database how many statements each fold kept of the queries it logged.
* The warehouse imports per engine (``<work>/data/<engine>``) into one artifacts folder, so a fold
  links and builds per engine; and a warehouse's embeddings are the expensive part of a build, so
  every fold's ``_cache/embeddings`` points at one copy of the base build's cache (a history
  changes no chunk text: the fold builds re-embed nothing the base build embedded).
* Scoring is the warehouse's (:func:`~.warehouse.run_questions`: gold tables, families, the
  nontrivial scopes) and the knobs of :func:`~.history_folds.history_grid` are chosen
  leave-one-database-out with the warehouse objective (:func:`~.warehouse.cross_validate`:
  mean CR over the budgets on nontrivial questions, then on all).
"""

from __future__ import annotations

import collections
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ConfigError, ImportFormatError
from schemarag.tools.evaluation.history_folds import (
    _link_data,
    assign_folds,
    describe,
    history_grid,
    write_histories,
    write_predictions,
)
from schemarag.tools.evaluation.warehouse import (
    Record,
    WarehouseQuestion,
    WarehouseRun,
    aggregate,
    cross_validate,
    format_table,
    run_questions,
)

Say = Callable[[str], None]


@dataclass(frozen=True)
class LoggedQuestion:
    """A warehouse question as :func:`assign_folds` and :func:`write_histories` read it
    (``db_id``, ``question``, ``sql``: None when the question has no gold SQL)."""

    db_id: str
    question: str
    sql: str | None


@dataclass
class FoldImport:
    """One database's history in one fold: queries logged (one gold SQL file each), statements
    kept by the import and skipped per reason (a file may hold several statements: a
    ``DECLARE`` before the query), table names written short that it qualified per rule
    (:data:`~schemarag.tools.importers.query_log.short_names.RULES`); an import that kept nothing
    leaves the database without a history."""

    logged: int = 0
    kept: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    error: str = ""
    qualified: dict[str, int] = field(default_factory=dict)


def load_gold_sql(folder: Path, questions: Sequence[WarehouseQuestion]) -> dict[str, str]:
    """``instance_id -> SQL`` for every question with a non-empty ``<instance_id>.sql`` in
    ``folder`` (Spider2's ``spider2-lite/evaluation_suite/gold/sql``); files of no question are
    ignored, and a folder matching no question is an error (the wrong folder, not a result)."""
    if not folder.is_dir():
        raise ConfigError(
            f"--gold-sql {folder}: not a folder; pass the folder of <instance_id>.sql files "
            "(Spider2: spider2-lite/evaluation_suite/gold/sql)"
        )
    out: dict[str, str] = {}
    for q in questions:
        path = folder / f"{q.question_id}.sql"
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace").strip()
            if text:
                out[q.question_id] = text
    if not out:
        raise ConfigError(
            f"--gold-sql {folder}: no <instance_id>.sql file matches a question selected; pass the folder "
            "holding e.g. bq011.sql"
        )
    return out


def logged_questions(questions: Sequence[WarehouseQuestion], gold: dict[str, str]) -> list[LoggedQuestion]:
    """Each question with its gold SQL (or None), in the same order."""
    return [LoggedQuestion(q.db, q.question, gold.get(q.question_id)) for q in questions]


def seed_embedding_cache(base_artifacts: Path, shared: Path, fold_artifacts: Path) -> None:
    """Point ``fold_artifacts/_cache/embeddings`` at ``shared``, a copy of the base build's
    embedding cache made once (SQLite's backup: consistent even with its WAL). A copy, so the
    base build's own cache is never written by a fold; shared, so a vector the folds add is
    computed once for all of them."""
    source = base_artifacts / "_cache" / "embeddings"
    if not shared.is_dir():
        tmp = shared.with_name(shared.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for db_file in sorted(source.glob("*.sqlite")) if source.is_dir() else []:
            with (
                closing(sqlite3.connect(db_file)) as src,
                closing(sqlite3.connect(tmp / db_file.name)) as dst,
            ):
                src.backup(dst)
        tmp.rename(shared)
    link = fold_artifacts / "_cache" / "embeddings"
    if not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(shared.resolve(), target_is_directory=True)


def import_history(log: Path, db: str, data: Path) -> FoldImport:
    """``import queries`` of one fold's log of ``db`` into ``data`` (the schema's dialect); an
    import that keeps nothing (or refuses the log) is recorded, never raised: that database has
    no history in this fold."""
    from schemarag.tools.importers.query_log.importer import import_queries

    logged = sum(1 for line in log.read_text(encoding="utf-8").splitlines() if line.strip())
    try:
        report = import_queries([str(log)], db=db, data=data)
    except ImportFormatError as exc:
        return FoldImport(logged, 0, {}, str(exc).splitlines()[0][:300])
    return FoldImport(logged, report.statements, dict(report.skipped), qualified=dict(report.short_names))


def build_fold(by_engine: dict[str, list[str]], data: Path, artifacts: Path, say: Say) -> set[str]:
    """Build each engine's databases from ``data/<engine>`` into ``artifacts``; the databases built
    (a failed one is reported, and its questions keep no history in this fold)."""
    from schemarag.pipelines.build import build_databases

    built: set[str] = set()
    for engine, dbs in sorted(by_engine.items()):
        reports = build_databases(sorted(dbs), data / engine, artifacts)
        for r in reports:
            if r.ok:
                built.add(r.database)
            else:
                say(f"build of {r.database} failed: {r.error.splitlines()[0][:200] if r.error else '?'}")
        say(
            f"built {sum(r.ok for r in reports)}/{len(reports)} {engine} index(es): "
            f"{sum(r.embedded for r in reports)} chunk(s) embedded, {sum(r.cache_hits for r in reports)} "
            "from the base build's cache"
        )
    return built


@dataclass(frozen=True)
class FoldSettings:
    """How the folds are run: ``k`` folds, the share of the history kept, questions in it or
    not, the budgets scored, and the opt-in calibration every scoring uses."""

    k: int
    budgets: tuple[int, ...]
    fraction: float = 1.0
    with_questions: bool = False
    calibration: dict[str, float] | None = None

    @property
    def tag(self) -> str:
        """The folder of these folds under the work folder (BIRD's naming)."""
        return f"k{self.k}_f{self.fraction:g}{'_q' if self.with_questions else ''}"


@dataclass
class FoldsPlan:
    """What the folds run on: the questions, their folds, each database's engine, the base."""

    questions: list[WarehouseQuestion]
    logged: list[LoggedQuestion]
    folds: list[int]
    engines: dict[str, str]
    data_root: Path  # <work>/data: one import folder per engine
    base_artifacts: Path
    available: set[str]  # databases the base build indexed


def make_plan(
    questions: Sequence[WarehouseQuestion],
    gold: dict[str, str],
    k: int,
    work: Path,
    available: set[str],
) -> FoldsPlan:
    """The questions of indexed databases (a database the base import lost has nothing to add a
    history to), dealt into ``k`` folds per database."""
    kept = [q for q in questions if q.db in available]
    logged = logged_questions(kept, gold)
    return FoldsPlan(
        kept,
        logged,
        assign_folds(logged, k),
        {q.db: q.engine for q in kept},
        work / "data",
        work / "artifacts",
        available,
    )


def prepare_fold(
    plan: FoldsPlan, fold: int, base: Path, settings: FoldSettings, say: Say
) -> tuple[dict[str, FoldImport], set[str]]:
    """Fold ``fold``'s histories, imported and built under ``base``: per database of the fold its
    import, and the databases with a history and a built index."""
    in_fold = {q.db_id for q, f in zip(plan.logged, plan.folds, strict=True) if f == fold}
    logs = write_histories(
        plan.logged, plan.folds, fold, base / "logs",
        fraction=settings.fraction, with_questions=settings.with_questions, rename=None,
        target=lambda q: q.db_id,
    )  # fmt: skip
    imports: dict[str, FoldImport] = {}
    by_engine: dict[str, list[str]] = {}
    for db in sorted(in_fold & set(logs)):
        engine = plan.engines[db]
        _link_data(plan.data_root / engine, base / "data" / engine)
        imports[db] = imp = import_history(logs[db], db, base / "data" / engine)
        if imp.kept:
            by_engine.setdefault(engine, []).append(db)
    say(
        f"fold {fold + 1}: {sum(1 for i in imports.values() if i.kept)} of {len(in_fold)} database(s) "
        f"kept a history ({sum(i.kept for i in imports.values())} statement(s) kept of "
        f"{sum(i.logged for i in imports.values())} logged queries)"
    )
    if not by_engine:
        return imports, set()
    seed_embedding_cache(plan.base_artifacts, base.parents[1] / "_embeddings", base / "artifacts")
    return imports, build_fold(by_engine, base / "data", base / "artifacts", say)


def _by_question(run: WarehouseRun) -> dict[int, dict[str, Record]]:
    return {k: {r.question_id: r for r in recs} for k, recs in run.records.items()}


def run_warehouse_folds(
    plan: FoldsPlan, settings: FoldSettings, work: Path, say: Say = print, predictions: Path | None = None
) -> dict[str, Any]:
    """The fold evaluation of the module docstring under ``work/<tag>/fold<k>``; the payload
    :func:`format_warehouse_folds` prints. ``predictions``: a ``.jsonl`` for
    :func:`fold_predictions` (each question's kept tables without and with the history)."""
    candidates = [describe(c) for c in history_grid()]
    per_db: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    scored: dict[int, dict[str, Record]] = {c: {} for c in range(len(candidates))}
    for fold in range(settings.k):
        base = work / settings.tag / f"fold{fold}"
        imports, built = prepare_fold(plan, fold, base, settings, say)
        for db, imp in imports.items():
            per_db[db].append({"fold": fold, **asdict(imp), "built": db in built})
        fold_qs = [q for q, f in zip(plan.questions, plan.folds, strict=True) if f == fold and q.db in built]
        if not fold_qs:
            continue
        say(f"fold {fold + 1}/{settings.k}: scoring {len(fold_qs)} question(s), {len(candidates)} knob sets")
        run = run_questions(
            fold_qs, base / "artifacts", built, settings.budgets, candidates, calibration=settings.calibration
        )
        for c, by_id in _by_question(run).items():
            scored[c].update(by_id)
    order = [q.question_id for q in plan.questions if q.question_id in scored[0]]
    with_history = WarehouseRun({c: [scored[c][i] for i in order] for c in scored}, candidates)
    return _payload(plan, with_history, per_db, settings, say, predictions)


def _without(plan: FoldsPlan, order: Sequence[str], settings: FoldSettings) -> list[Record]:
    """The same questions on the base index (no history), shipped knobs, in ``order``."""
    wanted = set(order)
    qs = [q for q in plan.questions if q.question_id in wanted]
    run = run_questions(
        qs, plan.base_artifacts, plan.available, settings.budgets, [{}], calibration=settings.calibration
    )
    by_id = {r.question_id: r for r in run.records[0]}
    return [by_id[i] for i in order]


def _imports_summary(per_db: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per database over its folds: queries logged, statements kept and skipped per reason."""
    out: dict[str, Any] = {}
    for db, rows in sorted(per_db.items()):
        skipped: collections.Counter = collections.Counter()
        for r in rows:
            skipped.update(r["skipped"])
        out[db] = {
            "folds": len(rows),
            "folds_with_history": sum(1 for r in rows if r["kept"] and r["built"]),
            "logged": sum(r["logged"] for r in rows),
            "kept": sum(r["kept"] for r in rows),
            "skipped": dict(skipped),
            "errors": sorted({r["error"] for r in rows if r["error"]}),
            "per_fold": rows,
        }
    return out


def _protocol(settings: FoldSettings) -> str:
    history = " with their questions" if settings.with_questions else " (SQL only)"
    return (
        f"{settings.k}-fold per database; fold k's history is the other folds' gold SQL{history}, "
        f"{settings.fraction:.0%} of it, imported with `import queries` (the schema's dialect) and "
        "built with `schemarag build`; scored on the questions whose database kept a history in "
        "their fold; knobs leave-one-database-out (mean CR over the budgets on nontrivial "
        "questions, then on all)"
    )


def _payload(
    plan: FoldsPlan,
    run: WarehouseRun,
    per_db: dict[str, list[dict[str, Any]]],
    settings: FoldSettings,
    say: Say,
    predictions: Path | None = None,
) -> dict[str, Any]:
    order = [r.question_id for r in run.records[0]]
    say(f"scoring the {len(order)} question(s) with a history on the base index (no history)")
    without = _without(plan, order, settings)
    imports = _imports_summary(per_db)
    budgets = list(settings.budgets)
    payload: dict[str, Any] = {
        "protocol": _protocol(settings),
        "folds": settings.k,
        "log_fraction": settings.fraction,
        "with_questions": settings.with_questions,
        "budgets": budgets,
        "questions": len(plan.questions),
        "questions_with_gold_sql": sum(1 for q in plan.logged if q.sql),
        "questions_with_history": len(order),
        "databases_with_history": len({r.db for r in run.records[0]}),
        "statements": {
            "logged": sum(v["logged"] for v in imports.values()),
            "kept": sum(v["kept"] for v in imports.values()),
        },
        "imports_per_db": imports,
        "without_history": aggregate(without, budgets),
        "with_history_shipped": aggregate(run.records[0], budgets),
    }
    if order:
        payload["cross_validation"] = _held_out(run, budgets)
    if predictions is not None:
        chosen = payload.get("cross_validation", {}).get("chosen_per_held_out_db", {})
        n = write_predictions(predictions, fold_predictions(run, without, chosen))
        say(f"wrote {n} question(s) to {predictions}")
    return payload


def fold_predictions(
    run: WarehouseRun, without: Sequence[Record], chosen: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per question with a history, the tables kept per budget without it, with it under the
    shipped knobs and under the knobs chosen without its database (``chosen``: held-out database
    -> candidate): where the history gained or lost a question, and what is still missed."""
    rows = []
    for i, (plain, ship) in enumerate(zip(without, run.records[0], strict=True)):
        held = run.records[run.candidates.index(chosen[ship.db])][i]
        row = ship.prediction()
        del row["kept"]
        row.update(kept_without=plain.kept(), kept_shipped=ship.kept(), kept_held_out=held.kept())
        rows.append(row)
    return rows


def _held_out(run: WarehouseRun, budgets: Sequence[int]) -> dict[str, Any]:
    """:func:`~.warehouse.cross_validate` over the history grid, with the chosen knobs counted
    (how many held-out databases chose each setting)."""
    cv = cross_validate(run, budgets)
    counts = collections.Counter(tuple(sorted(c.items())) for c in cv["chosen_per_held_out_db"].values())
    cv["chosen_counts"] = [{"knobs": dict(c), "databases": n} for c, n in counts.most_common()]
    return cv


def format_warehouse_folds(payload: dict[str, Any]) -> str:
    """The fold evaluation as text: counts, per-database imports, and CR tables without a
    history, with it (shipped knobs) and with the knobs held out."""
    budgets = payload["budgets"]
    st = payload["statements"]
    lines = [
        payload["protocol"],
        f"questions: {payload['questions']}, {payload['questions_with_gold_sql']} with gold SQL, "
        f"{payload['questions_with_history']} with a history in their fold "
        f"({payload['databases_with_history']} databases); over the folds {st['kept']} statement(s) "
        f"kept of {st['logged']} logged queries",
        "",
        "history imports per database (over the folds: statements kept / queries logged; skipped):",
    ]
    for db, v in payload["imports_per_db"].items():
        skipped = ", ".join(f"{n} {r}" for r, n in sorted(v["skipped"].items())) or "-"
        err = f"; {v['errors'][0]}" if v["errors"] else ""
        lines.append(
            f"  {db:<34} {v['kept']:>4}/{v['logged']:<4} folds with history "
            f"{v['folds_with_history']}/{v['folds']}; skipped: {skipped}{err}"
        )
    for key, title in (
        ("without_history", "the same questions without a history (base index, shipped knobs)"),
        ("with_history_shipped", "with the history, shipped knobs"),
    ):
        lines += ["", format_table(payload[key], budgets, title)]
    cv = payload.get("cross_validation")
    if cv:
        lines += ["", format_table(cv["cross_validated"], budgets, "with the history, knobs held out")]
        lines.append(
            f"chosen on all databases: {cv['chosen_on_all']} ({cv['folds_agreeing_with_chosen_on_all']})"
        )
        for row in cv["chosen_counts"]:
            lines.append(f"  chosen for {row['databases']} held-out database(s): {row['knobs']}")
    return "\n".join(lines)
