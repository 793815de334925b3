"""``schemarag eval``: score table retrieval on a BIRD or Spider question file, or (``--warehouse``)
on a folder of warehouse catalog exports imported and built the user's way.

Examples:
    schemarag eval --questions bird_dev/dev.json --union bird_union --budgets 5,8,10,15 \\
        --out out/eval.json --predictions out/pred.jsonl --report out/report
    schemarag eval --warehouse ../shared/benchmarks/spider2_lite --cross-validate join_paths \\
        --out out/warehouse.json --chart out/warehouse.png

A table goes to stdout; ``--json`` prints the metrics JSON there instead, ``--out FILE`` writes it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from schemarag.pipelines.commands.build_feedback import progress_enabled
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import artifacts_dir
from schemarag.tools.commands.json_output import add_json_output, check_json_output, print_json, write_json
from schemarag.tools.evaluation.warehouse_knobs import WAREHOUSE_FAMILIES

if TYPE_CHECKING:
    from schemarag.runtime.ranking.config import AdaptiveBudget, RankingConfig


def _budgets(value: str) -> list[int]:
    try:
        budgets = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--budgets {value!r}: use comma-separated integers like 5,8,10,15"
        ) from None
    if not budgets or budgets[0] < 1:
        raise argparse.ArgumentTypeError(f"--budgets {value!r}: budgets must be positive integers")
    return budgets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--questions",
        default="data/questions",
        help="BIRD dev.json / Spider dev.json question file, or a folder of <db>.jsonl files "
        "(default: data/questions, the bundled samples; build them first with `schemarag build`)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--union", default=None, metavar="NAME", help="evaluate against one union datasource")
    where.add_argument("--per-db", action="store_true", help="each question against its own db (default)")
    parser.add_argument("--with-evidence", action="store_true", help="append BIRD's evidence to the question")
    parser.add_argument(
        "--budgets",
        type=_budgets,
        default=None,
        help="table budgets (default 5,8,10,15; with --warehouse 5,10,20)",
    )
    parser.add_argument("--no-baselines", action="store_true", help="only the hybrid method (faster)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    add_json_output(parser, "the metrics")
    parser.add_argument("--predictions", default=None, metavar="OUT.jsonl", help="per-question predictions")
    parser.add_argument("--report", default=None, metavar="DIR", help="markdown table + PNG charts")
    parser.add_argument(
        "--progress-every",
        type=int,
        default=None,
        help="progress every N questions (default: a bar moving every 10 on a terminal, else a line per 100)",
    )
    wh = parser.add_argument_group(
        "warehouse exports (Spider 2.0-lite layout: <DIR>/<engine>/<db>/columns.csv.gz + questions.jsonl)"
    )
    wh.add_argument(
        "--warehouse",
        default=None,
        metavar="DIR",
        help="import every export with `schemarag import catalog`, build, and score table retrieval per "
        "engine and on nontrivial questions (database larger than the budget), question only",
    )
    wh.add_argument("--engines", default=None, help="with --warehouse: only these engines (comma-separated)")
    wh.add_argument("--dbs", default=None, help="with --warehouse: only these databases (comma-separated)")
    wh.add_argument(
        "--work",
        default="build/warehouse",
        metavar="DIR",
        help="with --warehouse: where imports, artifacts and the import/build table are cached "
        "(default build/warehouse; a rerun re-imports only changed exports and rebuilds only "
        "changed indexes)",
    )
    wh.add_argument("--force-import", action="store_true", help="with --warehouse: import every export again")
    wh.add_argument(
        "--reuse-imports",
        action="store_true",
        help="with --warehouse: keep earlier imports even if the importer changed since (compare ranking "
        "changes on the same indexes)",
    )
    wh.add_argument(
        "--skip-build", action="store_true", help="with --warehouse: evaluate the indexes already built"
    )
    wh.add_argument("--chart", default=None, metavar="PNG", help="with --warehouse: recall-vs-budget chart")
    parser.add_argument(
        "--cross-validate",
        choices=("columns", "tables", "adaptive", "routing", "hedging", "neighbours", *WAREHOUSE_FAMILIES),
        default=None,
        help="also choose that knob family by leave-one-database-out and report the held-out figure",
    )
    parser.add_argument("--max-ratio", type=float, default=0.30, help="columns objective: context ratio cap")
    parser.add_argument("--max-tables", type=float, default=8.0, help="adaptive objective: mean tables cap")
    parser.add_argument(
        "--confidence", type=float, default=None, help="adaptive budget: keep tables scoring >= this x best"
    )
    parser.add_argument(
        "--adaptive",
        action="store_true",
        help="adaptive budget with the shipped knobs (ADAPTIVE_BUDGET); the budgets are ceilings; "
        "scored through the serving path, as --focus",
    )
    parser.add_argument(
        "--focus",
        choices=("default", "compact"),
        default=None,
        help="score exactly what retrieve/generate/HTTP/MCP serve with this focus: Retriever.search "
        "(ranking, columns, compact cap) and the served text, docs included (context ratio)",
    )
    parser.add_argument(
        "--join-paths",
        action="store_true",
        help="complete FK join paths of kept tables in every index, unions too "
        "(default: in single-database indexes only, as served)",
    )
    parser.add_argument(
        "--no-hedging", action="store_true", help="ablation: union routing without RouteHedge"
    )
    parser.add_argument(
        "--abbreviations",
        action="store_true",
        help="question words also match their abbreviations in the index (cust, amt, ...; off by default, "
        "docs/ranking.md)",
    )
    parser.add_argument(
        "--no-compounds",
        action="store_true",
        help="ablation: two adjacent question words no longer match the index term they spell as one "
        "('census tract' -> censustract; on by default, docs/ranking.md)",
    )
    hist = parser.add_argument_group("query history (docs/query-history.md, issue 38)")
    hist.add_argument(
        "--query-log-folds",
        type=int,
        default=None,
        metavar="K",
        help="K folds per database: the other folds' gold SQL is the history (import queries + build)",
    )
    hist.add_argument("--with-questions", action="store_true", help="the history carries the questions too")
    hist.add_argument(
        "--keep-literals",
        action="store_true",
        help="the histories keep their literal values (import queries --keep-literals); BIRD sets only",
    )
    hist.add_argument(
        "--log-fraction", type=float, default=1.0, metavar="F", help="keep this share of the history (0-1]"
    )
    hist.add_argument(
        "--folds-work",
        default="build/query_log_folds",
        metavar="DIR",
        help="where the folds' imports and indexes go (default: build/query_log_folds)",
    )
    hist.add_argument(
        "--gold-sql",
        default=None,
        metavar="DIR",
        help="with --warehouse --query-log-folds: the folder of <instance_id>.sql gold queries (Spider2: "
        "spider2-lite/evaluation_suite/gold/sql); BIRD's SQL is in its question file",
    )
    parser.add_argument("--no-eval", action="store_true", help="with --cross-validate: skip the plain run")
    parser.add_argument("--small-grid", action="store_true", help="cross-validation: a smaller fixed grid")
    parser.add_argument(
        "--scored-cache", default=None, metavar="FILE", help="cross-validation: cache question scores here"
    )


def _ranking(args: argparse.Namespace) -> RankingConfig:
    """The shipped ranking config, with this run's ablations (``--join-paths``, ``--no-hedging``)."""
    from dataclasses import replace

    from schemarag.runtime.ranking.config import SHIPPED

    config = SHIPPED
    if args.join_paths:
        config = replace(config, join_paths=True)
    if args.no_hedging:
        config = replace(config, route_hedge=None)
    return config


def _adaptive(args: argparse.Namespace) -> AdaptiveBudget | None:
    """The adaptive budget of ``--adaptive`` (the shipped one) or ``--confidence`` (a plain
    confidence cut), or None for fixed budgets."""
    from schemarag.runtime.ranking.config import ADAPTIVE_BUDGET, AdaptiveBudget

    if args.adaptive and args.confidence is not None:
        raise ConfigError("--adaptive sets the confidence itself; drop --confidence")
    if args.adaptive:
        return ADAPTIVE_BUDGET
    return AdaptiveBudget(args.confidence) if args.confidence is not None else None


def run(args: argparse.Namespace) -> int:
    check_json_output(args)
    if args.warehouse and args.keep_literals:
        raise ConfigError(
            "--keep-literals is measured on the BIRD sets only (--questions ... --query-log-folds K); "
            "drop it with --warehouse"
        )
    if args.warehouse:
        from schemarag.tools.commands.eval_warehouse import run_warehouse

        return run_warehouse(args)
    if args.cross_validate in WAREHOUSE_FAMILIES:
        raise ConfigError(
            f"--cross-validate {args.cross_validate} is a warehouse knob family; add --warehouse DIR"
        )
    args.budgets = args.budgets or [5, 8, 10, 15]
    from schemarag.tools.evaluation.harness import METHODS, EvalConfig, evaluate
    from schemarag.tools.evaluation.questions import load_questions

    questions = load_questions(Path(args.questions), args.limit)
    if not questions:
        raise ConfigError(f"{args.questions}: no questions to evaluate")

    bars = progress_enabled(getattr(args, "quiet", False))
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if getattr(args, "quiet", False):
            return
        if not bars:
            print(f"eval: {done}/{total} questions", file=sys.stderr, flush=True)
            return
        if bar is None:
            from tqdm import tqdm

            bar = tqdm(total=total, desc="eval", unit="question", file=sys.stderr)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    config = EvalConfig(
        budgets=args.budgets,
        with_evidence=args.with_evidence,
        union=args.union,
        methods=METHODS[:1] if args.no_baselines else METHODS,
        artifacts=artifacts_dir(args.artifacts),
        progress_every=max(1, args.progress_every or (10 if bars else 100)),
        progress=progress,
        data=Path(args.data) if getattr(args, "data", None) else None,
        ranking=_ranking(args),
        abbreviations=args.abbreviations,
        compounds=not args.no_compounds,
        adaptive=_adaptive(args),
        # --adaptive with an ablation stays on the evaluation path (an ablation is not served)
        served=args.focus is not None or (args.adaptive and not (args.join_paths or args.no_hedging)),
        focus=args.focus,
    )
    if args.focus is not None and (args.join_paths or args.no_hedging or args.confidence is not None):
        raise ConfigError(
            "--focus scores the served retrieval with its shipped knobs; drop --join-paths, "
            "--no-hedging and --confidence (they are ablations of the evaluation path)"
        )
    if args.query_log_folds is not None:
        return _query_log_folds(args, questions, config)
    payload: dict = {}
    result = None
    if not (args.no_eval and args.cross_validate):
        result = evaluate(questions, config)
        payload = result.payload
    if args.cross_validate:
        from schemarag.tools.evaluation.crossval import cross_validate, load_or_collect
        from schemarag.tools.evaluation.harness import _setting, input_label

        sources: dict = {}
        cache = Path(args.scored_cache) if args.scored_cache else None
        scored = load_or_collect(cache, questions, sources, config)
        payload.setdefault("setting", _setting(config))
        payload.setdefault("inputs", input_label(config))
        payload["cross_validation"] = cross_validate(
            scored,
            sources,
            args.cross_validate,
            args.budgets,
            args.max_ratio,
            args.max_tables,
            small=args.small_grid,
        )
    write_json(payload, args.json_out)
    if args.predictions and result is not None:
        Path(args.predictions).parent.mkdir(parents=True, exist_ok=True)
        with open(args.predictions, "w", encoding="utf-8") as fh:
            for row in result.predictions:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.report and result is not None:
        from schemarag.tools.evaluation.report import write_report

        for path in write_report(result.payload, Path(args.report)):
            print(f"wrote {path}", file=sys.stderr)
    if args.json_stdout:
        print_json(payload)
    else:
        from schemarag.tools.evaluation.summary import format_summary

        print(format_summary(payload))
        if args.json_out:
            print(f"wrote {args.json_out}", file=sys.stderr)
    return 0


def _query_log_folds(args: argparse.Namespace, questions: list, config: object) -> int:
    """``--query-log-folds K``: the history evaluation of :mod:`~schemarag.tools.evaluation.history_folds`."""
    from schemarag.tools.evaluation.history_folds import run_folds

    if args.query_log_folds < 2:
        raise ConfigError(f"--query-log-folds {args.query_log_folds}: give at least 2 folds")
    if not 0 < args.log_fraction <= 1:
        raise ConfigError(f"--log-fraction {args.log_fraction}: give a share in (0, 1]")
    if args.focus is not None or args.cross_validate:
        raise ConfigError(
            "--query-log-folds chooses the history knobs itself; drop --focus and --cross-validate"
        )
    payload = run_folds(
        questions,
        config,
        k=args.query_log_folds,
        work=Path(args.folds_work),
        fraction=args.log_fraction,
        with_questions=args.with_questions,
        keep_literals=args.keep_literals,
        say=lambda line: print(line, file=sys.stderr, flush=True),
        predictions=Path(args.predictions) if args.predictions else None,
    )
    write_json(payload, args.json_out)
    if args.json_stdout:
        print_json(payload)
    else:
        from schemarag.tools.evaluation.history_folds import format_folds

        print(format_folds(payload))
    return 0
