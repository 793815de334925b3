"""``schemarag retrieve --db DB "question"``: chunks, scores and metadata for one question."""

from __future__ import annotations

import argparse
import json
import sys

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
    parser.add_argument("--debug", action="store_true", help="include the timing breakdown")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    retriever = Retriever.open(args.db, artifacts=args.artifacts, tenant=args.tenant)
    result = retriever.search(
        args.question, top_k=args.top_k, relevance_threshold=args.threshold, debug=args.debug
    )
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    m = result.metadata
    print(
        f"{args.db} (key {m.artifact_key}): {m.chunks_returned} of {m.total_chunks_searched} chunks, "
        f"avg relevance {m.avg_relevance_score:.2f}"
    )
    if m.nothing_relevant:
        print(f"  {m.message}")
    for sc in result.chunks:
        print(f"  {sc.score:.3f}  {sc.chunk.chunk_type:<12} {sc.chunk.title}")
    if result.tables:
        print(f"tables: {', '.join(result.tables)}")
    if result.expanded_tables:
        print(f"FK neighbours: {', '.join(result.expanded_tables)}")
    if m.timings_ms:
        print("timings (ms): " + ", ".join(f"{k}={v:.2f}" for k, v in m.timings_ms.items()))
    return 0
