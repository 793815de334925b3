"""``schemarag retrieve --db DB "question"``: the focused tables for one question, with evidence.

What it prints is what every surface serves (see ``runtime.ranking.pipeline``): the table ranking
(at most 15 tables by default, each with the columns it shows), FK neighbours the ranking took,
then the top chunks behind it. ``--table-budget 0`` prints only the chunks and every FK neighbour
of the tables they name (the raw evidence).

With ``--debug`` the one-time start-up (opening and verifying the index, loading the embedding
model and running its first inference) is timed here, apart from the per-query timings the
Retriever reports, so a one-shot CLI run does not bill the ~0.5 s model load to "embed".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from schemarag.app.commands.hints import missing_index_message
from schemarag.runtime.core.errors import ArtifactNotFoundError, ConfigError
from schemarag.runtime.core.paths import artifacts_dir, data_dir
from schemarag.runtime.ranking.config import TableFocus, focus_policies
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.retriever import Retriever


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question", help="the natural-language question")
    parser.add_argument("--db", required=True, help="database name")
    parser.add_argument("--tenant", default=None, help="tenant owning the database (live datasources)")
    parser.add_argument(
        "--top-k", type=int, default=None, help="chunks to return (default $DOC_RETRIEVAL_TOP_K or 5)"
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="minimum relevance in [0,1] (default $DOC_RELEVANCE_THRESHOLD or 0.3)",
    )
    add_focus_arguments(parser)
    parser.add_argument("--debug", action="store_true", help="include the timing breakdown")
    parser.add_argument("--json", action="store_true", help="print JSON")


def add_focus_arguments(parser: argparse.ArgumentParser) -> None:
    """``--table-budget``, ``--focus`` and ``--adaptive``, shared by ``retrieve`` and ``generate``."""
    parser.add_argument(
        "--table-budget",
        type=int,
        default=None,
        help="at most N tables ranked from all evidence, each with its focused columns (the selection "
        "`schemarag eval` measures; default 15; 0: no ranking, chunks and all their FK neighbours)",
    )
    parser.add_argument(
        "--focus",
        choices=sorted(focus_policies()),
        default=None,
        help="what each ranked table shows: 'default' focused columns as DDL with descriptions; "
        "'compact' the whole focused schema capped at 30%% of the full one (other columns by name)",
    )
    parser.add_argument(
        "--adaptive",
        action="store_true",
        help="choose the number of tables per question (the table budget, default 15, is the ceiling): "
        "a clear question keeps fewer, an uncertain one the whole budget",
    )


def table_focus(args: argparse.Namespace) -> TableFocus:
    """What ``--table-budget``, ``--focus`` and ``--adaptive`` ask of the table ranking."""
    if args.table_budget is not None and args.table_budget < 0:
        raise ConfigError(f"--table-budget {args.table_budget}: use a whole number >= 1 (0: no ranking)")
    if args.table_budget == 0 and (args.focus is not None or args.adaptive):
        raise ConfigError("--table-budget 0 ranks no tables; --focus and --adaptive need a budget >= 1")
    return TableFocus(args.table_budget, args.focus, args.adaptive)


def open_retriever(db: str, artifacts: str | None, tenant: str | None, data: str | None) -> Retriever:
    """``Retriever.open``, with a missing index explained for the local user (see ``hints``)."""
    try:
        return Retriever.open(db, artifacts=artifacts, tenant=tenant)
    except ArtifactNotFoundError:
        msg = missing_index_message(db, artifacts_dir(artifacts), tenant, data_dir(data))
        raise ArtifactNotFoundError(msg) from None


def _startup(args: argparse.Namespace) -> tuple[Retriever, dict[str, float]]:
    """Open the index and load the model, timing each (milliseconds)."""
    t0 = time.perf_counter()
    retriever = open_retriever(args.db, args.artifacts, args.tenant, args.data)
    t1 = time.perf_counter()
    if args.debug:  # first inference pays ONNX session creation and allocation: start-up, not query
        retriever.embedder.query_embed(["warm up"])
    t2 = time.perf_counter()
    return retriever, {"open_index": (t1 - t0) * 1000, "load_model": (t2 - t1) * 1000}


def run(args: argparse.Namespace) -> int:
    retriever, startup = _startup(args)
    ranking = table_focus(args)
    result = retriever.search(
        args.question,
        top_k=args.top_k,
        relevance_threshold=args.threshold,
        debug=args.debug,
        **ranking.search_kwargs(),
    )
    if args.json:
        payload = {"database": args.db, **result.to_dict()}
        if args.debug:
            payload["startup_ms"] = {k: round(v, 3) for k, v in startup.items()}
        json.dump(payload, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    m = result.metadata
    print(f"{args.db} (key {m.artifact_key})")
    if m.nothing_relevant:
        print(f"  {m.message}")
    if result.ranking is not None:
        _print_ranking(result.ranking, set(result.expanded_tables), result.schema)
    else:
        if result.tables:
            print(f"tables: {', '.join(result.tables)}")
        if result.expanded_tables:
            print(f"FK neighbours: {', '.join(result.expanded_tables)}")
    if result.chunks:
        print(
            f"evidence: top {m.chunks_returned} of {m.total_chunks_searched} chunks at relevance >= "
            f"{m.relevance_threshold:g} (avg {m.avg_relevance_score:.2f})"
        )
    for sc in result.chunks:
        print(f"  {sc.score:.3f}  {sc.chunk.chunk_type:<12} {sc.chunk.title}")
    if args.debug:
        print(
            "start-up timings (ms, once per process): "
            + ", ".join(f"{k}={v:.1f}" for k, v in startup.items())
        )
    if m.timings_ms:
        print("per-query timings (ms): " + ", ".join(f"{k}={v:.2f}" for k, v in m.timings_ms.items()))
    return 0


def _print_ranking(ranking: TableRanking, neighbours: set[str], schema: Any = None) -> None:
    """The budgeted selection in rank order, numbered (the order is the ranking's, not the
    score's: a foreign-key neighbour or join-path table follows the kept table it joins, and
    says which); per kept table its evidence score, the columns shown as DDL and those named
    only, and for a collapsed shard family the shards the question's date names."""
    cap = f", capped at {ranking.token_budget} tokens" if ranking.token_budget is not None else ""
    how = ", adaptive" if ranking.adaptive else ""
    print(f"focused tables ({ranking.focus} focus{how}, {len(ranking.tables)} kept{cap}; rank, score):")
    for rank, t in enumerate(ranking.tables, start=1):
        shown = ", ".join(ranking.columns.get(t, [])) or "-"
        named = ranking.compact.get(t, [])
        extra = f"  (+ {len(named)} named only)" if named else ""
        via = f"  [FK neighbour{_joins(t, ranking.tables[: rank - 1], schema)}]" if t in neighbours else ""
        print(f"  {rank:>2}. {ranking.scores.get(t, 0.0):.3f}  {t}: {shown}{extra}{via}")
        if t in ranking.shard_hints:  # a collapsed family: the shards the question's date names
            print(f"         {ranking.shard_hints[t]}")


def _joins(table: str, before: list[str], schema: Any) -> str:
    """`` of X`` for the better-ranked kept table ``table`` joins (the nearest before it), or ""."""
    near = schema.neighbours(table) if schema is not None else set()
    joined = [t for t in reversed(before) if t in near]
    return f" of {joined[0]}" if joined else ""
