"""``schemarag bench retrieve``: warm in-process retrieval latency vs LanceDB's hybrid search.

Both sides embed the question with the same fastembed model on every call (the query cache
is disabled) and run in separate loops of the same process, then search the same artifact:
ours through the memory-mapped arrays, LanceDB through its own table in the artifact (vector
+ full-text, ``query_type="hybrid"``).
Prints p50/p95, the speed-up, top-k overlap and peak RSS; writes JSON and a PNG chart.

"At equal results" is checked two ways: the overlap of the two top-k chunk sets, and, where
the questions file carries ``gold_tables``, the share of gold tables each side's top-k chunks
cover (both without FK expansion, which LanceDB does not have). Because both sides pay the
same query embedding, the speed-up including it can never exceed ``(embed + lance) / embed``;
that ceiling is printed next to the measured ratio so a small index is read correctly.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.runtime.artifact.format import LANCE_DIR, LANCE_TABLE
from schemarag.runtime.core.paths import artifacts_dir
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.benchmarks.synthetic_index import build_synthetic_index, synthetic_questions
from schemarag.tools.commands.json_output import add_json_output


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="b2b_saas", help="built database to measure (default b2b_saas)")
    parser.add_argument("--questions", default="data/questions/b2b_saas.jsonl", help="JSONL with 'question'")
    parser.add_argument(
        "--synthetic", type=int, default=100_000, help="chunks in the synthetic index (0 = skip)"
    )
    parser.add_argument("--repeats", type=int, default=200, help="timed requests per setting")
    parser.add_argument("--top-k", type=int, default=10)
    add_json_output(parser)
    parser.add_argument(
        "--chart",
        default="reports/bench_retrieve.png",
        help="PNG latency chart (default reports/bench_retrieve.png)",
    )


LANCE_COLUMNS = ["chunk_id", "table", "chunk_type", "column", "text"]  # what our results carry too


def _pct(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(float(np.percentile(values, 50)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
        "mean": round(float(np.mean(values)), 3),
    }


def _gold_recall(tables: list[set[str]], gold: list[list[str]]) -> float:
    """Mean share of each question's gold tables named by its top-k chunks."""
    shares = [len(set(g) & t) / len(g) for t, g in zip(tables, gold, strict=True) if g]
    return round(float(np.mean(shares)), 3) if shares else float("nan")


def measure(
    retriever: Retriever,
    questions: list[str],
    repeats: int,
    top_k: int,
    gold: list[list[str]] | None = None,
) -> dict[str, Any]:
    # lance warns on every hybrid query that scoring columns are auto-projected; the baseline
    # is used as documented, so keep its log to errors (read once, at lancedb's first import)
    os.environ.setdefault("LANCEDB_LOG", "error")
    import lancedb

    retriever.query_cache_size = 0
    retriever._qcache.clear()
    art = retriever.artifact
    table = lancedb.connect(str(art.path / LANCE_DIR)).open_table(LANCE_TABLE)
    embedder = retriever.embedder
    for q in questions[:5]:  # warm both paths (pages mapped, ONNX session, Lance caches)
        retriever.search(q, top_k=top_k, relevance_threshold=0.0)
        table.search(query_type="hybrid").vector(embedder.query_embed([q])[0]).text(q).select(
            LANCE_COLUMNS
        ).limit(top_k).to_list()
    # Each side runs its own loop (ours first, then LanceDB's) so neither pays for the other's
    # idle worker threads; both embed every question, and the same questions in the same order.
    ours, lance, embed_only, overlap = [], [], [], []
    ours_search, lance_search = [], []  # the same requests without the shared query embedding
    mine: list[set[str]] = []
    ours_tables: dict[int, set[str]] = {}  # question index -> tables of our top-k chunks
    lance_tables: dict[int, set[str]] = {}
    for i in range(repeats):
        q = questions[i % len(questions)]
        t0 = time.perf_counter()
        res = retriever.search(q, top_k=top_k, relevance_threshold=0.0, debug=True)
        ours.append((time.perf_counter() - t0) * 1000)
        ours_search.append(ours[-1] - (res.metadata.timings_ms or {}).get("embed", 0.0))
        mine.append({c.chunk.chunk_id for c in res.chunks})
        ours_tables.setdefault(i % len(questions), {c.chunk.table for c in res.chunks})
        if (i + 1) % 100 == 0:
            print(f"  {art.manifest['database']} schemarag: {i + 1}/{repeats}", file=sys.stderr, flush=True)
    for i in range(repeats):
        q = questions[i % len(questions)]
        t1 = time.perf_counter()
        vec = embedder.query_embed([q])[0]
        t2 = time.perf_counter()
        rows = (
            table.search(query_type="hybrid").vector(vec).text(q).select(LANCE_COLUMNS).limit(top_k).to_list()
        )
        t3 = time.perf_counter()
        embed_only.append((t2 - t1) * 1000)
        lance.append((t3 - t1) * 1000)
        lance_search.append((t3 - t2) * 1000)
        overlap.append(len(mine[i] & {r["chunk_id"] for r in rows}) / max(1, top_k))
        lance_tables.setdefault(i % len(questions), {r["table"] for r in rows})
        if (i + 1) % 100 == 0:
            print(f"  {art.manifest['database']} lancedb: {i + 1}/{repeats}", file=sys.stderr, flush=True)
    o, lz = _pct(ours), _pct(lance)
    os_, ls_ = _pct(ours_search), _pct(lance_search)
    e50 = _pct(embed_only)["p50"]
    quality: dict[str, Any] | None = None
    if gold:
        asked = sorted(ours_tables)  # questions actually asked (repeats may be < len(questions))
        asked_gold = [gold[i] for i in asked]
        quality = {
            "questions": len(asked),
            "schemarag_gold_table_recall": _gold_recall([ours_tables[i] for i in asked], asked_gold),
            "lancedb_gold_table_recall": _gold_recall([lance_tables[i] for i in asked], asked_gold),
        }
    return {
        "database": art.manifest["database"],
        "chunks": art.n_chunks,
        "requests": repeats,
        "schemarag_ms": o,
        "lancedb_hybrid_ms": lz,
        "query_embed_ms": _pct(embed_only),
        "speedup_p50": round(lz["p50"] / o["p50"], 2),
        # the best any search could do while both sides pay the same query embedding
        "speedup_ceiling_p50": round((e50 + ls_["p50"]) / max(e50, 1e-6), 2),
        "search_only_ms": {"schemarag": os_, "lancedb_hybrid": ls_},
        "search_only_speedup_p50": round(ls_["p50"] / max(os_["p50"], 1e-6), 2),
        "topk_overlap": round(float(np.mean(overlap)), 3),
        "result_quality": quality,
    }


def _chart(results: list[dict[str, Any]], path: Path) -> None:
    from schemarag.tools.benchmarks.charts import retrieve_chart

    retrieve_chart(results, path)


def run(args: argparse.Namespace) -> int:
    artifacts = artifacts_dir(args.artifacts)
    rows = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    questions = [r["question"] for r in rows]
    gold = [list(r.get("gold_tables") or []) for r in rows]
    results = []
    print(f"measuring {args.db} ({args.repeats} requests)", file=sys.stderr)
    results.append(
        measure(
            Retriever.open(args.db, artifacts=artifacts),
            questions,
            args.repeats,
            args.top_k,
            gold if any(gold) else None,
        )
    )
    if args.synthetic:
        print(f"building/opening a synthetic index of {args.synthetic:,} chunks", file=sys.stderr, flush=True)
        name, _ = build_synthetic_index(artifacts, args.synthetic)
        results.append(
            measure(
                Retriever.open(name, artifacts=artifacts), synthetic_questions(200), args.repeats, args.top_k
            )
        )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{'database':<22}{'chunks':>9}{'ours p50':>10}{'ours p95':>10}{'lance p50':>11}{'lance p95':>11}"
        f"{'embed p50':>11}{'speedup':>9}{'overlap':>9}"
    )
    for r in results:
        print(
            f"{r['database']:<22}{r['chunks']:>9,}{r['schemarag_ms']['p50']:>10.2f}{r['schemarag_ms']['p95']:>10.2f}"
            f"{r['lancedb_hybrid_ms']['p50']:>11.2f}{r['lancedb_hybrid_ms']['p95']:>11.2f}"
            f"{r['query_embed_ms']['p50']:>11.2f}{r['speedup_p50']:>8.1f}x{r['topk_overlap']:>9.2f}"
        )
    print("speed-up ceiling while both sides pay the same query embedding, (embed + lance) / embed:")
    for r in results:
        print(f"  {r['database']:<20} {r['speedup_ceiling_p50']:.1f}x (measured {r['speedup_p50']:.1f}x)")
    for r in results:
        q = r["result_quality"]
        if q:
            print(
                f"gold-table recall of the top-{args.top_k} chunks on {r['database']} ({q['questions']} "
                f"questions): schemarag {q['schemarag_gold_table_recall']:.3f}, "
                f"LanceDB hybrid {q['lancedb_gold_table_recall']:.3f}"
            )
    print("search only (the same requests minus the shared query embedding):")
    for r in results:
        so = r["search_only_ms"]
        print(
            f"  {r['database']:<20} schemarag p50 {so['schemarag']['p50']:.2f} ms, LanceDB hybrid p50 "
            f"{so['lancedb_hybrid']['p50']:.2f} ms: {r['search_only_speedup_p50']:.1f}x"
        )
    print(f"peak RSS: {rss_mb:.0f} MB")
    out = {"results": results, "peak_rss_mb": round(rss_mb, 1)}
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(out, indent=2))
    if args.chart:
        Path(args.chart).parent.mkdir(parents=True, exist_ok=True)
        _chart(results, Path(args.chart))
        print(f"chart: {args.chart}")
    return 0
