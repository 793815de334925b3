"""``eval --query-log-folds K``: what a query history is worth, simulated honestly (issue 38).

Each database's questions are split into ``K`` folds (a seeded shuffle, round robin). For fold
``k`` the *other* folds' gold SQL is the database's query history (SQL only by default; with
``--with-questions`` as question/SQL pairs; ``--log-fraction F`` keeps a seeded share ``F`` of
it), written as the ``.jsonl`` a user would export, imported with the same
:func:`~schemarag.tools.importers.query_log.importer.import_queries` as ``schemarag import
queries`` and built with the same :func:`~schemarag.pipelines.build.build_databases` as
``schemarag build``, into a folder of its own; fold ``k`` is then ranked by its questions
alone. A question's own SQL never reaches the index it is scored on.

Every history knob of :class:`~schemarag.runtime.ranking.config.RankingConfig` is scored on the
same folds (:func:`history_grid`) and the reported figure is leave-one-database-out: each
database's questions are ranked with the candidate that wins on the other databases
(:func:`~.crossval.lodo`). Beside it: the same questions without a history (the index the
user passed with ``--artifacts``), and the shipped config with the history.

Each fold's scored questions (their embeddings and chunk scores, the slow part) are kept in the
fold's folder (``scored.pkl``, :func:`~.crossval.load_or_collect`, keyed by the index versions
and the question texts): a rerun with a changed ranking or grid re-imports, finds every build
published and scores no question again.

In a union (``--union``) the SQL is rewritten to the union's table names (``db__table``), as
a warehouse log names its tables with their schema.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.ranking.config import DEFAULT_COLUMN_POLICY, SHIPPED, RankingConfig
from schemarag.tools.evaluation.crossval import (
    Knobs,
    load_or_collect,
    lodo,
    objective,
    records_for,
    relevance,
)
from schemarag.tools.evaluation.metrics import aggregate

log = logging.getLogger(__name__)

SEED = 38  # fold assignment and --log-fraction sampling
# example evidence (weight, top): off, then the weights a first scan on BirdUnion and BIRD per
# database spanned (per database peaks near 0.2 over one example, BirdUnion above 0.5)
EXAMPLE_GRID: tuple[tuple[float, int], ...] = ((0.0, 1), (0.2, 1), (0.5, 1), (0.5, 2), (0.8, 2))
# co-usage prior (weight, over the best N tables); 0: off
CO_GRID: tuple[tuple[float, int], ...] = ((0.0, 3), (0.5, 3), (1.0, 3), (1.0, 1))
CO_PRIOR = 2.0  # pseudo-statements: a table logged twice shares at most half with a partner
# what a kept table shows with a history (ColumnPolicy.history_keys, .history_weak): scored with
# the shipped table ranking, so only the columns move (docs/query-history.md "What a kept table shows")
COLUMN_GRID: tuple[tuple[bool, int], ...] = ((False, 0), (True, 0), (True, 1), (True, 2), (True, 3))


def assign_folds(questions: Sequence[Any], k: int, seed: int = SEED) -> list[int]:
    """Fold of each question: per database, a seeded shuffle dealt round robin (balanced folds).

    >>> from types import SimpleNamespace as Q
    >>> folds = assign_folds([Q(db_id="a")] * 5 + [Q(db_id="b")] * 2, 2)
    >>> sorted(folds[:5]), sorted(folds[5:])
    ([0, 0, 0, 1, 1], [0, 1])
    """
    by_db: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        by_db.setdefault(q.db_id, []).append(i)
    out = [0] * len(questions)
    for db in sorted(by_db):
        rows = by_db[db][:]
        random.Random(f"{seed}:{db}").shuffle(rows)
        for j, i in enumerate(rows):
            out[i] = j % k
    return out


def history_grid(base: RankingConfig = SHIPPED) -> list[RankingConfig]:
    """Candidates for the history knobs, ``base`` first (the shipped setting), then each
    combination of popularity weight, co-usage prior and example evidence with the logged joins
    on (co-usage completion off), the co-usage priors again with ``history_co_prior``
    pseudo-statements (no popularity), and three structural alternatives at ``base``: no logged
    joins, join paths in a union too, co-usage completion switched (on at 0.5 when ``base`` has
    it off, off when on). Pseudo-statements without a co-usage prior are inert and left out, and
    a candidate equal to an earlier one is listed once."""
    out = [base]
    for pop, (weight, top), prior, (ex_weight, ex_top) in itertools.product(
        (0.0, 0.3), CO_GRID, (0.0, CO_PRIOR), EXAMPLE_GRID
    ):
        if prior and (not weight or pop):
            continue
        out.append(
            replace(
                base,
                history_popularity=pop,
                history_co_weight=weight,
                history_co_top=top,
                history_co_prior=prior,
                history_co_share=None,
                history_co_ratio=0.0,
                history_join_extra=0.1,
                history_join_paths=False,
                history_example_weight=ex_weight,
                history_example_top=ex_top,
            )
        )
    for changes in (
        {"history_join_extra": None},
        {"history_join_paths": True},
        {"history_co_share": None if base.history_co_share is not None else 0.5},
    ):
        out.append(replace(base, **changes))  # type: ignore[arg-type]
    return [c for i, c in enumerate(out) if i == 0 or c not in out[:i]]  # base first, no twin


def describe(config: RankingConfig) -> dict[str, Any]:
    """The history knobs of ``config``: every ``history_*`` field of the one config, so a field
    added there is gridded, reported and pooled without a list to keep in step."""
    return {f.name: getattr(config, f.name) for f in fields(config) if f.name.startswith("history_")}


def _link_data(source: Path, target: Path) -> None:
    """``target`` reads as the import folder ``source`` without any stored history: schema files
    and docs are symlinked, each database's ``history/`` is left for the fold's import."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        dest = target / entry.name
        if entry.is_dir() and not entry.name.startswith((".", "_")):
            dest.mkdir(exist_ok=True)
            for child in entry.iterdir():
                if child.name != "history" and not (dest / child.name).exists():
                    os.symlink(child.resolve(), dest / child.name)
        elif not dest.exists():
            os.symlink(entry.resolve(), dest)


def union_sql(sql: str, db_id: str, names: dict[str, dict[str, str]], dialect: str) -> str:
    """``sql`` of database ``db_id`` with its tables renamed to the union's (``db__table``).

    >>> union_sql("SELECT a.x FROM t AS a JOIN u ON a.id = u.id", "d",
    ...           {"d": {"t": "d__t", "u": "d__u"}}, "sqlite")
    'SELECT a.x FROM d__t AS a JOIN d__u ON a.id = d__u.id'
    """
    import sqlglot
    from sqlglot import exp

    mapping = names.get(db_id, {})
    tree = sqlglot.parse_one(sql, read=dialect)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        new = mapping.get(table.name.lower())
        if new and table.name.lower() not in ctes:
            table.set("this", exp.to_identifier(new))
    for column in tree.find_all(exp.Column):  # a column qualified by a bare table name
        new = mapping.get(column.table.lower()) if column.table else None
        if new and column.table.lower() not in ctes:
            column.set("table", exp.to_identifier(new))
    return tree.sql(dialect=dialect)


def _union_names(db: Any) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for t in db.tables:
        source = t.database or ""
        short = t.name.split("__", 1)[1] if "__" in t.name else t.name
        out.setdefault(source, {})[short.lower()] = t.name
    return out


def write_histories(
    questions: Sequence[Any],
    folds: Sequence[int],
    fold: int,
    folder: Path,
    *,
    fraction: float,
    with_questions: bool,
    rename: Callable[[Any], str] | None,
    target: Callable[[Any], str],
) -> dict[str, Path]:
    """One ``.jsonl`` per indexed database: the gold SQL of the questions outside ``fold``
    (a seeded ``fraction`` of them), with the question when ``with_questions``."""
    lines: dict[str, list[str]] = {}
    rng = random.Random(f"{SEED}:{fold}:{fraction}")
    for q, f in zip(questions, folds, strict=True):
        if f == fold or not q.sql or rng.random() >= fraction:
            continue
        row: dict[str, Any] = {"sql": rename(q) if rename else q.sql}
        if with_questions:
            row["question"] = q.question
        lines.setdefault(target(q), []).append(json.dumps(row, ensure_ascii=False))
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, rows in lines.items():
        path = folder / f"{name}.jsonl"
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        out[name] = path
    return out


def run_folds(
    questions: Sequence[Any],
    config: Any,
    *,
    k: int,
    work: Path,
    fraction: float = 1.0,
    with_questions: bool = False,
    keep_literals: bool = False,
    say: Callable[[str], None] = print,
    predictions: Path | None = None,
) -> dict[str, Any]:
    """The fold evaluation of the module docstring; ``config`` is the harness's ``EvalConfig``
    (``data`` and ``artifacts``: the user's import folder and its history-less index);
    ``keep_literals``: imported as ``import queries --keep-literals`` would (values kept);
    ``predictions``: a ``.jsonl`` of :func:`fold_predictions` (what each question kept without
    the history, with it under the shipped knobs and under the knobs held out)."""
    from schemarag.pipelines.build import build_databases
    from schemarag.runtime.core.schema import load_schema
    from schemarag.tools.importers.query_log.importer import import_queries

    if config.data is None:
        raise ConfigError(
            "--query-log-folds needs --data DIR: the import folder the --artifacts index was built from"
        )
    budgets = list(config.budgets)
    folds = assign_folds(questions, k)
    candidates = history_grid()
    key = objective("tables", 0.3, 8.0)
    target = (lambda q: config.union) if config.union else (lambda q: q.db_id)
    rename = None
    if config.union:
        union_db = load_schema(config.data / f"{config.union}.json")
        names = _union_names(union_db)
        rename = lambda q: union_sql(q.sql, q.db_id, names, union_db.dialect)  # noqa: E731
    tag = f"k{k}_f{fraction:g}{'_q' if with_questions else ''}{'_lit' if keep_literals else ''}"
    per_knob: list[list[dict[str, Any] | None]] = [[None] * len(questions) for _ in candidates]
    per_columns: list[list[dict[str, Any]]] = [[] for _ in COLUMN_GRID]
    shipped: list[dict[str, Any] | None] = [None] * len(questions)
    had_history = 0
    plain_sources: dict[str, Any] = {}
    plain = load_or_collect(
        work / tag / "scored_without.pkl", questions, plain_sources, replace(config, progress=None)
    )
    plain_knobs = Knobs(calibration=next(iter(plain_sources.values())).retriever.calibration)
    without = records_for(plain, plain_sources, plain_knobs, budgets)
    say(f"scored {len(questions)} questions without a history")
    for fold in range(k):
        rows = [i for i, f in enumerate(folds) if f == fold]
        fold_qs = [questions[i] for i in rows]
        base = work / tag / f"fold{fold}"
        data, artifacts = base / "data", base / "artifacts"
        _link_data(config.data, data)
        logs = write_histories(
            questions, folds, fold, base / "logs",
            fraction=fraction, with_questions=with_questions, rename=rename, target=target,
        )  # fmt: skip
        for name, path in sorted(logs.items()):
            report = import_queries([str(path)], db=name, data=data, keep_literals=keep_literals)
            say(f"fold {fold + 1}/{k}: {report.summary()}")
        dbs = sorted({target(q) for q in fold_qs})
        for r in build_databases(dbs, data, artifacts):
            if not r.ok:
                raise RuntimeError(f"fold {fold + 1}: build of {r.database} failed: {r.error}")
        say(f"fold {fold + 1}/{k}: built {len(dbs)} index(es); scoring {len(fold_qs)} questions")
        had_history += sum(1 for q in fold_qs if target(q) in logs)
        sources: dict[str, Any] = {}
        scored = load_or_collect(
            base / "scored.pkl", fold_qs, sources, replace(config, artifacts=artifacts, progress=None)
        )
        base_knobs = Knobs(calibration=next(iter(sources.values())).retriever.calibration)
        rels = relevances(scored, sources)  # one calibration per model: base_knobs' for every source
        for i, rec in zip(rows, records_for(scored, sources, base_knobs, budgets, rels), strict=True):
            shipped[i] = rec
        for c, recs in enumerate(column_records(scored, sources, base_knobs, max(budgets), rels)):
            per_columns[c] += recs
        for c, cand in enumerate(candidates):
            for i, rec in zip(rows, table_records(scored, sources, cand, budgets, rels), strict=True):
                per_knob[c][i] = rec
    dbs = [q.db_id for q in questions]
    complete = [[r for r in recs if r is not None] for recs in per_knob]
    held, chosen, overall = lodo(complete, dbs, budgets, key, table_recall)
    if predictions is not None:
        n = write_predictions(predictions, fold_predictions(questions, folds, without, shipped, held))
        say(f"wrote {n} question(s) to {predictions}")
    return {
        "protocol": (
            f"{k}-fold per database; fold k's history is the other folds' gold SQL"
            f"{' with their questions' if with_questions else ' (SQL only)'}, {fraction:.0%} of it"
            f"{', literals kept' if keep_literals else ''}, "
            "imported with `import queries` and built with `schemarag build`; knobs leave-one-database-out"
        ),
        "folds": k,
        "log_fraction": fraction,
        "with_questions": with_questions,
        "keep_literals": keep_literals,
        "questions": len(questions),
        "questions_with_history": had_history,
        "without_history": aggregate(without, budgets),
        "with_history_shipped": aggregate([r for r in shipped if r is not None], budgets),
        "cross_validated": table_recall(held, budgets),
        "chosen_per_held_out_db": {d: describe(candidates[c]) for d, c in sorted(chosen.items())},
        "chosen_on_all": describe(candidates[overall]),
        "in_sample_of_chosen_on_all": table_recall(complete[overall], budgets),
        "in_sample_per_candidate": [
            {**describe(cand), **table_recall(recs, budgets)}
            for cand, recs in zip(candidates, complete, strict=True)
        ],
        "history_columns": [
            {"history_keys": keys, "history_weak": weak, **_column_metrics(recs, max(budgets))}
            for (keys, weak), recs in zip(COLUMN_GRID, per_columns, strict=True)
        ],
    }


def write_predictions(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """A ``--predictions`` file: one JSON object a line (the BIRD and warehouse folds and the
    warehouse evaluation write theirs here); returns the rows written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
            n += 1
    return n


def fold_predictions(
    questions: Sequence[Any],
    folds: Sequence[int],
    without: Sequence[dict[str, Any]],
    shipped: Sequence[dict[str, Any] | None],
    held: Sequence[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Per question, its fold and the tables kept per budget without a history, with it under
    the shipped knobs and under the knobs chosen without its database: where the history gained
    or lost a question, and what is still missed (the warehouse folds write the same rows).

    >>> q = type("Q", (), {"question_id": 7, "db_id": "a", "question": "how many?"})()
    >>> rec = lambda *t: {"kept_by_budget": {5: list(t)}, "gold_tables": ["x", "y"]}
    >>> fold_predictions([q], [2], [rec("x")], [rec("x", "y")], [rec("y", "x")])[0]["kept_held_out"]
    {'5': ['y', 'x']}
    """

    def kept(record: dict[str, Any] | None) -> dict[str, list[str]]:
        return {str(b): list(t) for b, t in (record or {}).get("kept_by_budget", {}).items()}

    return [
        {
            "question_id": q.question_id,
            "db": q.db_id,
            "fold": folds[i],
            "question": q.question,
            "gold": without[i].get("gold_tables", []),
            "kept_without": kept(without[i]),
            "kept_shipped": kept(shipped[i]),
            "kept_held_out": kept(held[i]),
        }
        for i, q in enumerate(questions)
    ]


def column_records(
    scored: Sequence[Any], sources: dict[str, Any], knobs: Knobs, budget: int, rels: Sequence[Any]
) -> list[list[dict[str, Any]]]:
    """Per setting of :data:`COLUMN_GRID`, the questions' records at ``budget`` (shipped table
    ranking, the column policy's history fields varied): what the history adds to each kept
    table's shown columns."""
    out = []
    for keys, weak in COLUMN_GRID:
        policy = replace(DEFAULT_COLUMN_POLICY, history_keys=keys, history_weak=weak)
        out.append(records_for(scored, sources, replace(knobs, policy=policy), [budget], rels))
    return out


def _column_metrics(records: Sequence[dict[str, Any]], budget: int) -> dict[str, float]:
    m = aggregate(list(records), [budget])
    return {k: round(float(m[k]), 4) for k in ("column_srr", "column_srr_ddl", "context_ratio")}


def relevances(scored: Sequence[Any], sources: dict[str, Any]) -> list[Any]:
    """Each question's chunk relevance (knob-independent: a grid computes it once per question)."""
    return [relevance(item, sources[item.source].retriever.calibration) for item in scored]


def table_records(
    scored: Sequence[Any],
    sources: dict[str, Any],
    config: RankingConfig,
    budgets: Sequence[int],
    rels: Sequence[Any] | None = None,
) -> list[dict[str, Any]]:
    """Per question, the tables kept at each budget under ``config`` (no column stages: a knob
    grid over the table ranking needs only the tables, :func:`~.pipeline.kept_by_budget`);
    ``rels``: :func:`relevances` of ``scored``, computed here when not given."""
    from schemarag.runtime.ranking.candidates import RankingRequest
    from schemarag.runtime.ranking.pipeline import kept_by_budget

    rels = relevances(scored, sources) if rels is None else rels
    out = []
    for item, rel in zip(scored, rels, strict=True):
        retriever = sources[item.source].retriever
        ask = RankingRequest(item.text, max(budgets), None, None, item.hits, True, retriever.calibration)
        kept = kept_by_budget(retriever.artifact, rel, ask, list(budgets), config)
        out.append({"kept_by_budget": kept, "gold_tables": item.gold_tables})
    return out


def table_recall(records: Sequence[dict[str, Any]], budgets: Sequence[int]) -> dict[str, Any]:
    """Complete recall per budget (every gold table kept) over ``records`` with gold tables.

    >>> table_recall([{"kept_by_budget": {5: ["a", "b"]}, "gold_tables": ["a"]},
    ...               {"kept_by_budget": {5: ["a"]}, "gold_tables": ["a", "c"]}], [5])
    {'complete_recall': {'5': 0.5}, 'questions': 2}
    """
    scored = [r for r in records if r.get("gold_tables")]
    cr = {
        str(b): (sum(set(r["gold_tables"]) <= set(r["kept_by_budget"][b]) for r in scored) / len(scored))
        if scored
        else 0.0
        for b in budgets
    }
    return {"complete_recall": cr, "questions": len(scored)}


def format_folds(payload: dict[str, Any]) -> str:
    """The fold evaluation as a few lines: CR per budget without, shipped, and held out."""
    rows = [
        payload["protocol"],
        f"questions: {payload['questions']} ({payload['questions_with_history']} with a history)",
    ]
    for label, key in (
        ("without history", "without_history"),
        ("history, shipped knobs", "with_history_shipped"),
        ("history, knobs held out", "cross_validated"),
    ):
        m = payload[key]
        cr = " ".join(f"CR@{b} {v:.3f}" for b, v in m["complete_recall"].items())
        srr = f"  column SRR {m['column_srr']:.3f}" if "column_srr" in m else ""
        rows.append(f"{label:<26} {cr}{srr}")
    rows.append(f"chosen on all databases: {payload['chosen_on_all']}")
    for c in payload.get("history_columns", ()):
        setting = f"history_keys={c['history_keys']!s:<5} history_weak={c['history_weak']}"
        rows.append(
            f"columns, {setting}: column SRR {c['column_srr']:.3f} (in DDL {c['column_srr_ddl']:.3f})"
            f" at context ratio {c['context_ratio']:.3f}"
        )
    return "\n".join(rows)
