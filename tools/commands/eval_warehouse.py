"""``schemarag eval --warehouse DIR``: import, build and score a folder of warehouse exports.

    schemarag eval --warehouse ../shared/benchmarks/spider2_lite [--engines sqlite] [--dbs a,b]
                   [--budgets 5,10,20] [--cross-validate join_paths] [--json] [--out FILE] [--chart PNG]
    schemarag eval --warehouse DIR --query-log-folds 5 --gold-sql spider2-lite/evaluation_suite/gold/sql
                   [--with-questions] [--log-fraction F] [--folds-work DIR]

Prints the per-engine import/build table (issue 24.3), then CR@B and table recall@B per engine
and on nontrivial questions (plain run, and with ``--cross-validate`` the leave-one-database-out
figure with each fold's choice). Everything heavy is cached under ``--work`` (build/warehouse).
With ``--query-log-folds K`` the questions are scored with a simulated query history instead
(:mod:`~schemarag.tools.evaluation.history_folds_warehouse`, issue 38): the other folds' gold SQL
of each database, imported and built under ``--folds-work``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from schemarag.pipelines.commands.build_feedback import progress_enabled
from schemarag.runtime.core.errors import ConfigError
from schemarag.tools.commands.json_output import print_json, write_json

if TYPE_CHECKING:
    from schemarag.tools.evaluation.warehouse import WarehouseQuestion


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _progress(args: argparse.Namespace):
    bars = progress_enabled(getattr(args, "quiet", False))
    state: dict = {}

    def report(done: int, total: int) -> None:
        if getattr(args, "quiet", False):
            return
        if not bars:
            if done % 50 == 0 or done == total:
                print(f"eval: {done}/{total} questions", file=sys.stderr, flush=True)
            return
        if "bar" not in state:
            from tqdm import tqdm

            state["bar"] = tqdm(total=total, desc="eval", unit="question", file=sys.stderr)
        state["bar"].update(done - state["bar"].n)
        if done >= total:
            state["bar"].close()

    return report


@dataclass
class Prepared:
    """A warehouse folder imported and built under ``--work``, with its questions."""

    root: Path
    work: Path
    budgets: list[int]
    table: list[dict]  # the per-engine import/build table
    questions: list[WarehouseQuestion]
    available: set[str]  # databases imported (their questions can be scored)


def _prepare(args: argparse.Namespace) -> Prepared:
    """Import and build the exports ``--warehouse`` selects (cached under ``--work``), print the
    import/build table, and load their questions."""
    from schemarag.tools.evaluation.warehouse import (
        WAREHOUSE_BUDGETS,
        format_engine_table,
        load_warehouse_questions,
        say,
    )
    from schemarag.tools.evaluation.warehouse_prep import discover, engine_table, prepare

    if args.union or args.with_evidence:
        raise ConfigError("--warehouse is per database and question only; drop --union / --with-evidence")
    root = Path(args.warehouse)
    exports = discover(root, _split(args.engines), _split(args.dbs))
    work = Path(args.work)
    imports, builds = prepare(
        exports,
        work,
        force_import=args.force_import,
        skip_build=args.skip_build,
        reuse_imports=args.reuse_imports,
    )
    table = engine_table(imports, builds)
    say("\nimport/build per engine (tables = after shard families collapse; build s 0-ish = cached):")
    say(format_engine_table(table))
    selected = {(e.engine, e.db) for e in exports}
    questions = [
        q for q in load_warehouse_questions(root / "questions.jsonl") if (q.engine, q.db) in selected
    ]
    if args.limit:
        questions = questions[: args.limit]
    if not questions:
        raise ConfigError(f"{root / 'questions.jsonl'}: no questions for the databases selected")
    budgets = args.budgets or list(WAREHOUSE_BUDGETS)
    return Prepared(root, work, budgets, table, questions, {s.db for s in imports if s.ok})


def run_warehouse(args: argparse.Namespace) -> int:
    from schemarag.tools.evaluation.opt_in import opt_in_calibration
    from schemarag.tools.evaluation.warehouse import (
        aggregate,
        cross_validate,
        format_table,
        plot_recall,
        run_questions,
        say,
    )
    from schemarag.tools.evaluation.warehouse_knobs import knob_grid

    _check_folds_args(args)
    prep = _prepare(args)
    if args.query_log_folds is not None:
        return _query_log_folds(args, prep)
    if args.focus is not None:
        return _served(args, prep)
    root, work, budgets, table = prep.root, prep.work, prep.budgets, prep.table
    questions, available = prep.questions, prep.available
    candidates = knob_grid(args.cross_validate)
    run = run_questions(
        questions,
        work / "artifacts",
        available,
        budgets,
        candidates,
        _progress(args),
        calibration=opt_in_calibration(args.abbreviations, not args.no_compounds),
    )
    plain = aggregate(run.records[0], budgets)
    title = (
        f"table retrieval, question only, per database: {len(questions)} questions, "
        f"{len(available)} databases"
    )
    show = sys.stderr if args.json_stdout else sys.stdout  # --json: stdout carries only the JSON
    print(format_table(plain, budgets, title + " (shipped knobs)"), file=show)
    payload: dict = {
        "setting": "warehouse per-db, question",
        "warehouse": str(root),
        "budgets": budgets,
        "questions": len(questions),
        "databases": len(available),
        "import_build": table,
        "metrics": plain,
        "knobs": {**candidates[0], "abbreviations": args.abbreviations, "compounds": not args.no_compounds},
    }
    if args.cross_validate:
        cv = cross_validate(run, budgets)
        payload["cross_validation"] = cv
        print(file=show)
        print(
            format_table(
                cv["cross_validated"], budgets, f"leave-one-database-out over {args.cross_validate}"
            ),
            file=show,
        )
        print(
            f"chosen on all databases: {cv['chosen_on_all']} "
            f"(folds agreeing: {cv['folds_agreeing_with_chosen_on_all']})",
            file=show,
        )
    if args.chart:
        shown = payload.get("cross_validation", {}).get("cross_validated", plain)
        label = "leave-one-database-out" if args.cross_validate else "shipped knobs"
        path = plot_recall(shown, budgets, Path(args.chart), f"{title} ({label})")
        say(f"wrote {path}")
    if args.predictions:
        from schemarag.tools.evaluation.history_folds import write_predictions

        write_predictions(Path(args.predictions), (r.prediction() for r in run.records[0]))
    if args.json_out:
        write_json(payload, args.json_out)
        say(f"wrote {args.json_out}")
    if args.json_stdout:
        print_json(payload)
    return 0


def _check_folds_args(args: argparse.Namespace) -> None:
    """``--query-log-folds`` / ``--gold-sql`` with ``--warehouse``: both or neither, and the
    fold arguments in range (checked before anything is imported or built)."""
    k = getattr(args, "query_log_folds", None)
    gold = getattr(args, "gold_sql", None)
    if k is None:
        if gold:
            raise ConfigError("--gold-sql is the history of --query-log-folds K; add --query-log-folds 5")
        return
    if not gold:
        raise ConfigError(
            "--warehouse --query-log-folds needs --gold-sql DIR (the <instance_id>.sql files; Spider2: "
            "spider2-lite/evaluation_suite/gold/sql of github.com/xlang-ai/Spider2)"
        )
    if k < 2:
        raise ConfigError(f"--query-log-folds {k}: give at least 2 folds")
    if not 0 < args.log_fraction <= 1:
        raise ConfigError(f"--log-fraction {args.log_fraction}: give a share in (0, 1]")
    if args.cross_validate or args.chart:
        raise ConfigError(
            "--query-log-folds chooses the history knobs itself; drop --cross-validate and --chart"
        )


def _query_log_folds(args: argparse.Namespace, prep: Prepared) -> int:
    """``--warehouse --query-log-folds K``: :mod:`~schemarag.tools.evaluation.history_folds_warehouse`."""
    from schemarag.tools.evaluation.history_folds_warehouse import (
        FoldSettings,
        format_warehouse_folds,
        load_gold_sql,
        make_plan,
        run_warehouse_folds,
    )
    from schemarag.tools.evaluation.opt_in import opt_in_calibration
    from schemarag.tools.evaluation.warehouse import say

    gold = load_gold_sql(Path(args.gold_sql), prep.questions)
    plan = make_plan(prep.questions, gold, args.query_log_folds, prep.work, prep.available)
    settings = FoldSettings(
        args.query_log_folds,
        tuple(prep.budgets),
        args.log_fraction,
        args.with_questions,
        opt_in_calibration(args.abbreviations, not args.no_compounds),
    )
    predictions = Path(args.predictions) if args.predictions else None
    payload = run_warehouse_folds(plan, settings, Path(args.folds_work), say, predictions)
    payload = {
        "warehouse": str(prep.root),
        "gold_sql": str(args.gold_sql),
        "import_build": prep.table,
        **payload,
    }
    if args.json_out:
        write_json(payload, args.json_out)
        say(f"wrote {args.json_out}")
    if args.json_stdout:
        print_json(payload)
    else:
        print(format_warehouse_folds(payload))
    return 0


def _served(args: argparse.Namespace, prep: Prepared) -> int:
    """``--focus default|compact``: the questions as ``Retriever.search`` serves them, with the
    served text's context ratio (:mod:`~schemarag.tools.evaluation.warehouse_served`)."""
    from schemarag.tools.evaluation.warehouse import format_table
    from schemarag.tools.evaluation.warehouse_served import served_payload, served_run

    if args.cross_validate:
        raise ConfigError("--focus scores what is served with the shipped knobs; drop --cross-validate")
    records, ratios = served_run(
        prep.questions, prep.work / "artifacts", prep.available, prep.budgets, args.focus, _progress(args)
    )
    payload = {"setting": "warehouse per-db, question, as served", "budgets": prep.budgets}
    payload |= served_payload(records, ratios, prep.budgets, args.focus)
    show = sys.stderr if args.json_stdout else sys.stdout
    n_q, n_db = len(prep.questions), len(prep.available)
    title = f"as served, --focus {args.focus}: {n_q} questions, {n_db} databases"
    print(format_table(payload["metrics"], prep.budgets, title), file=show)
    ratio, median = payload["context_ratio"], payload["context_ratio_median"]
    top = max(prep.budgets)
    line = f"context ratio (served text at B={top} / full schema): mean {ratio:.3f}, median {median:.3f}"
    print(line, file=show)
    write_json(payload, args.json_out)
    if args.json_stdout:
        print_json(payload)
    return 0
