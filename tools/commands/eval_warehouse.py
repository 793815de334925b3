"""``schemarag eval --warehouse DIR``: import, build and score a folder of warehouse exports.

    schemarag eval --warehouse ../shared/benchmarks/spider2_lite [--engines sqlite] [--dbs a,b]
                   [--budgets 5,10,20] [--cross-validate join_paths] [--json] [--out FILE] [--chart PNG]

Prints the per-engine import/build table (issue 24.3), then CR@B and table recall@B per engine
and on nontrivial questions (plain run, and with ``--cross-validate`` the leave-one-database-out
figure with each fold's choice). Everything heavy is cached under ``--work`` (build/warehouse).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from schemarag.pipelines.commands.build_feedback import progress_enabled
from schemarag.runtime.core.errors import ConfigError
from schemarag.tools.commands.json_output import print_json, write_json


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


def run_warehouse(args: argparse.Namespace) -> int:
    from schemarag.tools.evaluation.opt_in import opt_in_calibration
    from schemarag.tools.evaluation.warehouse import (
        WAREHOUSE_BUDGETS,
        aggregate,
        cross_validate,
        format_engine_table,
        format_table,
        load_warehouse_questions,
        plot_recall,
        run_questions,
        say,
    )
    from schemarag.tools.evaluation.warehouse_knobs import knob_grid
    from schemarag.tools.evaluation.warehouse_prep import discover, engine_table, prepare

    if args.union or args.with_evidence:
        raise ConfigError("--warehouse is per database and question only; drop --union / --with-evidence")
    root = Path(args.warehouse)
    budgets = args.budgets or list(WAREHOUSE_BUDGETS)
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
    available = {s.db for s in imports if s.ok}
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
        Path(args.predictions).parent.mkdir(parents=True, exist_ok=True)
        with open(args.predictions, "w", encoding="utf-8") as fh:
            for r in run.records[0]:
                kept = {str(b): t for b, t in r.kept_by_budget.items()}
                row = {"question_id": r.question_id, "db": r.db, "engine": r.engine, "question": r.question,
                       "n_tables": r.n_tables, "gold": r.gold, "kept": kept}  # fmt: skip
                fh.write(json.dumps(row) + "\n")
    if args.json_out:
        write_json(payload, args.json_out)
        say(f"wrote {args.json_out}")
    if args.json_stdout:
        print_json(payload)
    return 0
