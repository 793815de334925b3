"""The evaluation loop: run the real retriever on every question and score what it keeps.

For each question the harness does exactly what the query generator does: rank tables with
the artifact's retriever (``rank_tables``, which applies FK expansion and the table budget)
and format the focused schema from the kept tables and columns. Baselines (BM25 only, dense
only, and each method without FK expansion) run in the same process over the same artifact,
so differences are the method's, not the environment's.

Latency is the wall time of one ``rank_tables`` call at the largest budget plus formatting,
warm (one untimed call per datasource first), query embedding included.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.ranking.candidates import RankingRequest
from schemarag.runtime.ranking.config import SHIPPED, AdaptiveBudget, RankingConfig, adaptive_knobs
from schemarag.runtime.ranking.pipeline import rank as rank_tables
from schemarag.runtime.search.results import TableRanking
from schemarag.tools.evaluation.gold import Gold, SchemaView, gold_from_sql
from schemarag.tools.evaluation.metrics import aggregate
from schemarag.tools.evaluation.opt_in import apply_opt_in, opt_in_calibration
from schemarag.tools.evaluation.questions import Question

log = logging.getLogger(__name__)

# (label, retriever method, FK expansion); the first is the headline method.
METHODS: tuple[tuple[str, str, bool], ...] = (
    ("hybrid", "hybrid", True),
    ("bm25", "bm25", True),
    ("dense", "dense", True),
    ("hybrid_no_fk", "hybrid", False),
    ("bm25_no_fk", "bm25", False),
    ("dense_no_fk", "dense", False),
)
DEFAULT_BUDGETS = (5, 8, 10, 15)


@dataclass
class EvalConfig:
    budgets: Sequence[int] = DEFAULT_BUDGETS
    with_evidence: bool = False
    union: str | None = None
    methods: Sequence[tuple[str, str, bool]] = METHODS
    artifacts: Path | None = None
    progress_every: int = 100
    progress: Callable[[int, int], None] | None = None
    data: Path | None = None  # the import folder: its inputs.json labels the setting
    adaptive: AdaptiveBudget | None = None  # adaptive table budget (None: fixed budgets)
    # the ranking knobs: SHIPPED, or a replace() of it (`--join-paths`, `--no-hedging`)
    ranking: RankingConfig = SHIPPED
    abbreviations: bool = False  # question words also match their abbreviations (opt-in)
    compounds: bool = True  # adjacent question words also match the term they spell (False: ablation)
    # Score the headline method through the serving path itself (Retriever.search with this focus
    # and the adaptive budget, then the served text): `eval --focus` / `--adaptive`.
    served: bool = False
    focus: str | None = None


@dataclass
class _Datasource:
    """One opened artifact with what every question against it reuses."""

    retriever: Any
    db: Any
    ddl: dict[str, Any]
    full_tokens: int
    views: dict[str, SchemaView] = field(default_factory=dict)


@dataclass
class EvalResult:
    payload: dict[str, Any]
    predictions: list[dict[str, Any]]
    records: dict[str, list[dict[str, Any]]]


def _open(name: str, config: EvalConfig) -> _Datasource:
    from schemarag.runtime.formatting import format_full_schema, render_schema
    from schemarag.runtime.search.retriever import Retriever

    retriever = Retriever.open(name, artifacts=config.artifacts)
    apply_opt_in(retriever, opt_in_calibration(config.abbreviations, config.compounds))
    db = retriever.schema
    ddl = render_schema(db)
    source = _Datasource(retriever, db, ddl, estimate_tokens(format_full_schema(db, ddl=ddl)))
    retriever.rank_tables("warm up", budget=max(config.budgets))  # load models/indexes, untimed
    return source


def _view(source: _Datasource, db_id: str, union: bool) -> SchemaView:
    key = db_id if union else ""
    if key not in source.views:
        source.views[key] = SchemaView(source.db, db_id if union else None)
    return source.views[key]


def shown_columns(
    source: Any, ranking: TableRanking, levels: dict[str, int] | None = None, ddl_only: bool = False
) -> dict[str, list]:
    """Columns the focused schema shows per table (``source`` has ``db`` and ``ddl``): the
    kept ones, keys, and those listed by name only; or all of them when not pruned.

    ``levels`` (from :func:`~schemarag.runtime.formatting.focused_parts`) says how far a token
    budget thinned each table: a names line still shows its names, the last level only the
    focused ones. ``ddl_only``: just the columns shown as a typed DDL line (the stricter view
    behind ``column_srr_ddl``: present with a type and, when focused, a description)."""
    out: dict[str, list[str]] = {}
    columns, compact = dict(ranking.columns), dict(ranking.compact)
    levels = levels or {}
    for name in ranking.tables:
        table = source.db.table(name)
        if table is None:
            continue
        level = levels.get(table.name, 0)
        if ddl_only and level >= 2:
            out[table.name] = []
        elif table.name in columns:
            shown = set(columns[table.name]) | set(source.ddl[table.name].key_columns)
            if level <= 2 and not ddl_only:
                shown |= set(compact.get(table.name, ()))
            out[table.name] = sorted(shown)
        else:
            out[table.name] = [c.name for c in table.columns]
    return out


def _served_tables(result: Any) -> list[str]:
    return list(result.ranking.tables) if result.ranking is not None else []


def _run_served(source: _Datasource, text: str, config: EvalConfig) -> dict[str, Any]:
    """One question the way every surface answers it: ``Retriever.search`` (ranking, focus,
    adaptive budget, compact cap) and the served text, docs included (``focused_tokens``)."""
    from schemarag.runtime.formatting import focused_schema_levels

    budgets, top = sorted(config.budgets), max(config.budgets)
    ask = {"focus": config.focus or "default", "adaptive": config.adaptive or False}
    retriever = source.retriever
    retriever.clear_query_cache()
    started = time.perf_counter()
    result = retriever.search(text, table_budget=top, **ask)
    served, levels = focused_schema_levels(source.db, result, ddl=source.ddl)
    latency = (time.perf_counter() - started) * 1000.0
    ranking = result.ranking or TableRanking(tables=[])  # nothing relevant: no focused tables
    kept_by_budget = {b: _served_tables(retriever.search(text, table_budget=b, **ask)) for b in budgets[:-1]}
    kept_by_budget[top] = list(ranking.tables)
    return _outcome(source, ranking, levels, kept_by_budget, served, latency)


def _outcome(
    source: _Datasource,
    ranking: TableRanking,
    levels: Any,
    kept_by_budget: dict[int, list[str]],
    focused: str,
    latency: float,
) -> dict[str, Any]:
    """One question's record, the same for the served and the evaluation paths (so both score alike)."""
    return {
        "kept_by_budget": kept_by_budget,
        "kept_columns": shown_columns(source, ranking, levels),
        "ddl_columns": shown_columns(source, ranking, levels, ddl_only=True),
        "scores": {k: round(float(v), 6) for k, v in ranking.scores.items()},
        "focused_tokens": estimate_tokens(focused),
        "full_tokens": source.full_tokens,
        "latency_ms": latency,
    }


def _run_method(source: _Datasource, text: str, method: str, fk: bool, config: EvalConfig) -> dict[str, Any]:
    from schemarag.runtime.formatting import focused_parts

    if config.served and (method, fk) == tuple(config.methods[0][1:]):
        return _run_served(source, text, config)

    budgets = config.budgets
    kept_by_budget: dict[int, list[str]] = {}
    top = max(budgets)

    hits: list[Any] = []

    def rank(rel: Any, budget: int) -> TableRanking:
        retriever = source.retriever
        ask = RankingRequest(text, budget, None, config.adaptive, hits, fk, retriever.calibration)
        return rank_tables(retriever.artifact, rel, ask, config.ranking)

    # Timed first, with the query-embedding cache cleared: latency includes embedding the question
    # (and its value mentions, as serving does).
    source.retriever.clear_query_cache()
    started = time.perf_counter()
    rel, _, _ = source.retriever.score_chunks(text, method)
    if method != "bm25":
        hits = source.retriever.mention_hits(text, source.retriever.artifact)
    ranking = rank(rel, top)
    levels, parts = focused_parts(source.db, ranking, source.ddl)
    focused = "\n\n".join(parts.values())
    latency = (time.perf_counter() - started) * 1000.0
    for budget in sorted(budgets):
        if budget != top:
            kept_by_budget[budget] = list(rank(rel, budget).tables)
    kept_by_budget[top] = list(ranking.tables)
    return _outcome(source, ranking, levels, kept_by_budget, focused, latency)


def _setting(config: EvalConfig) -> str:
    where = f"union:{config.union}" if config.union else "per-db"
    return f"{where}, {'question+evidence' if config.with_evidence else 'question'}"


def input_label(config: EvalConfig) -> dict[str, Any]:
    """Whether every database of the union got the same kind of input (``symmetric``), from
    the importer's ``inputs.json``; per-db runs are symmetric by construction."""
    from schemarag.tools.importers.writer import input_setting

    if not config.union:
        return {"symmetric": True, "label": "per-db (each database against its own index)"}
    info = input_setting(config.data, config.union) if config.data else {}
    if not info:
        return {"symmetric": None, "label": "unknown inputs (no inputs.json from `schemarag import`)"}
    kinds = ", ".join(f"{k}: {n} db" for k, n in info["inputs"].items())
    word = "symmetric" if info["symmetric"] else "ASYMMETRIC"
    return {**info, "label": f"{word} ({kinds})"}


def evaluate(questions: Sequence[Question], config: EvalConfig) -> EvalResult:
    """Score every method on ``questions``; the first method is the headline, the rest baselines."""
    sources: dict[str, _Datasource] = {}
    records: dict[str, list[dict[str, Any]]] = {label: [] for label, _, _ in config.methods}
    predictions: list[dict[str, Any]] = []
    gold_problems = 0
    for i, q in enumerate(questions, start=1):
        name = config.union or q.db_id
        if name not in sources:
            sources[name] = _open(name, config)
        source = sources[name]
        gold: Gold = gold_from_sql(q.sql, _view(source, q.db_id, bool(config.union)), source.db.dialect)
        gold_problems += not gold.ok
        text = q.text(config.with_evidence)
        for label, method, fk in config.methods:
            rec = _run_method(source, text, method, fk, config)
            rec.update(gold_tables=gold.tables, gold_columns=gold.columns)
            records[label].append(rec)
        head = records[config.methods[0][0]][-1]
        predictions.append(_prediction(q, name, gold, head, max(config.budgets)))
        if config.progress and (i % config.progress_every == 0 or i == len(questions)):
            config.progress(i, len(questions))
    metrics = {label: aggregate(recs, config.budgets) for label, recs in records.items()}
    headline = config.methods[0][0]
    payload = {
        "setting": _setting(config),
        "inputs": input_label(config),
        "knobs": {
            **adaptive_knobs(config.adaptive),
            "join_paths": config.ranking.join_paths,
            "hedging": config.ranking.route_hedge is not None,
            "abbreviations": config.abbreviations,
            "compounds": config.compounds,
        },
        "questions": len(questions),
        "metrics": metrics[headline],
        "baselines": {label: m for label, m in metrics.items() if label != headline},
        "method": headline,
        "budgets": list(config.budgets),
        "gold_unresolved": gold_problems,
    }
    if config.served:  # what was scored is what the surfaces serve in this mode
        payload.update(focus=config.focus or "default", adaptive=config.adaptive is not None, served=True)
    return EvalResult(payload, predictions, records)


def _prediction(q: Question, datasource: str, gold: Gold, rec: dict[str, Any], top: int) -> dict[str, Any]:
    return {
        "question_id": q.question_id,
        "database": q.db_id,
        "datasource": datasource,
        "question": q.question,
        "gold_tables": gold.tables,
        "gold_columns": gold.columns,
        "gold_ok": gold.ok,
        "kept_tables": rec["kept_by_budget"][top],
        "kept_columns": rec["kept_columns"],
        "scores": rec["scores"],
        "latency_ms": round(rec["latency_ms"], 3),
    }
