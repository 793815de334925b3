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
from schemarag.tools.evaluation.gold import Gold, SchemaView, gold_from_sql
from schemarag.tools.evaluation.metrics import aggregate
from schemarag.tools.evaluation.questions import Question
from schemarag.tools.importers.spider_bird import UNION_SEPARATOR

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
    from schemarag.runtime import retriever as retriever_module
    from schemarag.runtime.formatting import format_full_schema, render_schema

    retriever = retriever_module.Retriever.open(name, artifacts=config.artifacts)
    db = retriever.schema
    ddl = render_schema(db)
    source = _Datasource(retriever, db, ddl, estimate_tokens(format_full_schema(db, ddl=ddl)))
    retriever.rank_tables("warm up", budget=max(config.budgets))  # load models/indexes, untimed
    return source


def _view(source: _Datasource, db_id: str, union: bool) -> SchemaView:
    key = db_id if union else ""
    if key not in source.views:
        prefix = f"{db_id}{UNION_SEPARATOR}" if union else ""
        source.views[key] = SchemaView(source.db, prefix)
    return source.views[key]


def _shown_columns(source: _Datasource, tables: list[str], columns: dict[str, list[str]]) -> dict[str, list]:
    """Columns the focused schema shows per table: the kept ones plus keys, or all of them."""
    out: dict[str, list[str]] = {}
    for name in tables:
        table = source.db.table(name)
        if table is None:
            continue
        if table.name in columns:
            out[table.name] = sorted(set(columns[table.name]) | set(source.ddl[table.name].key_columns))
        else:
            out[table.name] = [c.name for c in table.columns]
    return out


def _run_method(
    source: _Datasource, text: str, method: str, fk: bool, budgets: Sequence[int]
) -> dict[str, Any]:
    from schemarag.runtime.formatting import format_focused_schema_tables

    kept_by_budget: dict[int, list[str]] = {}
    top = max(budgets)
    # Timed first, with the query-embedding cache cleared: latency includes embedding the question.
    source.retriever.clear_query_cache()
    started = time.perf_counter()
    ranking = source.retriever.rank_tables(text, top, method, fk)
    focused = format_focused_schema_tables(
        source.db, ranking.tables, ranking.columns, source.ddl, ranking.described
    )
    latency = (time.perf_counter() - started) * 1000.0
    for budget in sorted(budgets):
        if budget != top:
            kept_by_budget[budget] = list(source.retriever.rank_tables(text, budget, method, fk).tables)
    kept_by_budget[top] = list(ranking.tables)
    return {
        "kept_by_budget": kept_by_budget,
        "kept_columns": _shown_columns(source, list(ranking.tables), dict(ranking.columns)),
        "scores": {k: round(float(v), 6) for k, v in ranking.scores.items()},
        "focused_tokens": estimate_tokens(focused),
        "full_tokens": source.full_tokens,
        "latency_ms": latency,
    }


def _setting(config: EvalConfig) -> str:
    where = f"union:{config.union}" if config.union else "per-db"
    return f"{where}, {'question+evidence' if config.with_evidence else 'question'}"


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
            rec = _run_method(source, text, method, fk, config.budgets)
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
        "questions": len(questions),
        "metrics": metrics[headline],
        "baselines": {label: m for label, m in metrics.items() if label != headline},
        "method": headline,
        "budgets": list(config.budgets),
        "gold_unresolved": gold_problems,
    }
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
