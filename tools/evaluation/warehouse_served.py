"""``eval --warehouse DIR --focus default|compact``: the warehouse questions as every surface
serves them (issue 40, item 7).

The plain warehouse evaluation ranks each question with ``rank()`` and scores the tables; this
one calls ``Retriever.search(question, table_budget=B, focus=...)`` per budget, exactly what HTTP,
MCP and ``retrieve`` do, and measures the served text at the largest budget against the full
schema (context ratio), retrieved docs included. Spider 2.0-lite has gold tables but no gold
columns, so there is no column SRR here.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from schemarag.tools.evaluation.warehouse import GoldMap, Record, WarehouseQuestion, aggregate, say


def served_run(
    questions: Sequence[WarehouseQuestion],
    artifacts: Path,
    available: set[str],
    budgets: Sequence[int],
    focus: str,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Record], list[float]]:
    """Per question, the served tables at each budget, and the context ratio of the served
    text at the largest budget (focused tokens over the full schema's)."""
    from schemarag.runtime.artifact.chunk_model import estimate_tokens
    from schemarag.runtime.core.errors import SchemaragError
    from schemarag.runtime.formatting import focused_schema_levels, format_full_schema, render_schema
    from schemarag.runtime.search.retriever import Retriever

    by_db: dict[str, list[WarehouseQuestion]] = {}
    for q in questions:
        by_db.setdefault(q.db, []).append(q)
    records: list[Record] = []
    ratios: list[float] = []
    done, top = 0, max(budgets)
    for db, qs in by_db.items():
        retriever = None
        if db in available:
            try:
                retriever = Retriever.open(db, artifacts=artifacts)
            except SchemaragError as exc:
                say(f"eval: {db}: no index ({str(exc).splitlines()[0][:160]}); its questions count as misses")
        names = list(retriever.artifact.table_names) if retriever is not None else []
        gold_map = GoldMap(names)
        full = ddl = None
        if retriever is not None:
            ddl = render_schema(retriever.schema)
            full = estimate_tokens(format_full_schema(retriever.schema, ddl=ddl))
            retriever.search("warm up", table_budget=top, focus=focus)
        for q in qs:
            units = gold_map.units(q.gold_tables)
            rec = Record(q.question_id, q.db, q.engine, len(names), units, question=q.question)
            if retriever is not None:
                for b in sorted(budgets, reverse=True):
                    retriever.clear_query_cache()
                    started = time.perf_counter()
                    result = retriever.search(q.question, table_budget=b, focus=focus)
                    rec.kept_by_budget[b] = list(result.ranking.tables) if result.ranking is not None else []
                    if b == top:
                        text, _ = focused_schema_levels(retriever.schema, result, ddl=ddl)
                        rec.latency_ms = (time.perf_counter() - started) * 1000.0
                        ratios.append(estimate_tokens(text) / full if full else 0.0)
            records.append(rec)
            done += 1
            if progress:
                progress(done, len(questions))
    return records, ratios


def served_payload(
    records: Sequence[Record], ratios: Sequence[float], budgets: Sequence[int], focus: str
) -> dict[str, Any]:
    """The warehouse aggregate of the served tables, with the served context ratio."""
    agg = aggregate(records, budgets)
    return {
        "focus": focus,
        "served": True,
        "metrics": agg,
        "context_ratio": statistics.fmean(ratios) if ratios else 0.0,
        "context_ratio_median": statistics.median(ratios) if ratios else 0.0,
    }
