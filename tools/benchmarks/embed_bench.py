"""``schemarag bench embed``: the catalogue's embedding models side by side, as a server runs them.

Per model (``--models``, catalogue names or aliases):

* **query embedding**: one question per call, one ONNX thread (``ModelSpec(threads=1)``, what
  ``schemarag serve`` uses), p50/p95 over ``--repeats`` calls after a warm-up, wall time and
  the calling thread's CPU time (one ONNX thread runs on the caller: on a shared machine the CPU
  time is the steadier figure, and it is what bounds a server's requests per core);
* **batch-8 query embedding**: ms per question when 8 questions share one call;
* **passage throughput**: chunk texts (``title\ntext``, what a build embeds, from the first
  ``--index``'s artifacts) per second with the build's settings (default threads, batch 16);
* **retrieval** (with ``--index MODEL=ARTIFACTS``): warm ``Retriever.search`` p50/p95, query
  cache off, each question against its own database's index built with that model: what one
  request costs end to end in process;
* **model folder preparation**: seconds to assemble the folder when it is not cached yet (the
  one-time int8 rewrite or static-table derivation), else ``null``.

Prints one row per model, writes ``--json`` and a PNG chart (p50 bars, p95 whiskers). Timing
numbers are only meaningful on a quiet machine: run it under the bench lock.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec, resolve_spec
from schemarag.runtime.core.embedding.model_catalog import MODELS, known_model
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.names import is_reserved
from schemarag.tools.commands.json_output import add_json_output

DEFAULT_MODELS = ",".join(m.alias for m in MODELS.values())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models", default=DEFAULT_MODELS, help=f"comma-separated (default {DEFAULT_MODELS})"
    )
    parser.add_argument(
        "--questions",
        default="data/questions/b2b_saas.jsonl",
        help="BIRD/Spider dev.json or a JSONL with 'question' (and 'db_id' for --index)",
    )
    parser.add_argument("--limit", type=int, default=300, help="questions used (default 300)")
    parser.add_argument("--repeats", type=int, default=600, help="timed single-question calls (default 600)")
    parser.add_argument(
        "--passages",
        type=int,
        default=1000,
        help="chunk texts for the throughput pass (from the first --index, else the questions)",
    )
    parser.add_argument(
        "--index",
        action="append",
        default=[],
        metavar="MODEL=ARTIFACTS",
        help="also time Retriever.search on indexes built with MODEL in ARTIFACTS (repeatable)",
    )
    add_json_output(parser)
    parser.add_argument("--chart", default="reports/bench_embed.png", help="PNG chart path")


def _pct(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(float(np.percentile(values, 50)), 4),
        "p95": round(float(np.percentile(values, 95)), 4),
        "mean": round(float(np.mean(values)), 4),
    }


def _questions(path: Path, limit: int) -> list[dict[str, str]]:
    if not path.is_file():
        raise ConfigError(f"--questions {path}: no such file")
    text = path.read_text(encoding="utf-8")
    rows = (
        json.loads(text)
        if path.suffix == ".json"
        else [json.loads(x) for x in text.splitlines() if x.strip()]
    )
    out = [{"question": r["question"], "db_id": r.get("db_id", "")} for r in rows if r.get("question")]
    if not out:
        raise ConfigError(f"--questions {path}: no rows with a 'question' field")
    return out[:: max(1, len(out) // limit)][:limit]  # evenly spaced: BIRD files are sorted by database


def _chunk_texts(artifacts: str, limit: int) -> list[str]:
    """``title\ntext`` of the published chunks under ``artifacts`` (what a build embeds)."""
    from schemarag.runtime.artifact.parquet_rows import read_columns
    from schemarag.runtime.artifact.reader import current_key

    texts: list[str] = []
    for root in sorted(p for p in Path(artifacts).iterdir() if not is_reserved(p.name)):
        key = current_key(root) if root.is_dir() else None
        if key:
            cols = read_columns(root / key / "chunks.parquet")
            texts += [f"{t}\n{x}" for t, x in zip(cols["title"], cols["text"], strict=True)]
    return texts[:limit]


def _prepare_seconds(name: str) -> float | None:
    """Time the model folder's one-time preparation, None when it was already cached."""
    known = known_model(name)
    if known is None:
        return None
    t0 = time.perf_counter()
    known.folder()
    took = time.perf_counter() - t0
    return round(took, 2) if took > 1.0 else None  # a cache hit costs a few stat() calls


def _retrieval(artifacts: str, questions: list[dict[str, str]], repeats: int) -> dict[str, Any]:
    from schemarag.runtime.search.retriever import Retriever

    asked = [q for q in questions if q["db_id"]]
    if not asked:
        raise ConfigError("--index needs questions with a 'db_id' (a BIRD/Spider dev.json)")
    spec = ModelSpec(threads=1)  # the index's own model, one ONNX thread as a server runs it
    opened = {}
    for q in asked:
        if q["db_id"] not in opened:
            r = Retriever.open(q["db_id"], artifacts=artifacts, model=spec)
            r.query_cache_size = 0
            opened[q["db_id"]] = r
    for q in asked[:10]:
        opened[q["db_id"]].search(q["question"], table_budget=15)
    took, cpu = [], []
    for i in range(repeats):
        q = asked[i % len(asked)]
        c0, t0 = time.thread_time(), time.perf_counter()
        opened[q["db_id"]].search(q["question"], table_budget=15)
        took.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    model = next(iter(opened.values())).embedder.spec.name
    return {"model": model, "artifacts": artifacts, **_pct(took), "cpu": _pct(cpu)}


def measure(name: str, questions: list[str], repeats: int, passages: list[str]) -> dict[str, Any]:
    spec = resolve_spec(ModelSpec(name=name))
    prepare = _prepare_seconds(spec.name or name)
    one = Embedder.get(ModelSpec(name=spec.name, threads=1))
    build = Embedder.get(ModelSpec(name=spec.name))
    one.query_embed(questions[:8])  # load the session, map the table
    build.passage_embed(questions[:8])
    single, cpu = [], []
    for i in range(repeats):
        q = questions[i % len(questions)]
        c0, t0 = time.thread_time(), time.perf_counter()
        one.query_embed([q])
        single.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    batched = []
    for i in range(0, max(8, min(len(questions), repeats)) - 7, 8):
        t0 = time.perf_counter()
        one.query_embed(questions[i : i + 8])
        batched.append((time.perf_counter() - t0) * 1000 / 8)
    t0 = time.perf_counter()
    build.passage_embed(passages)
    per_s = len(passages) / (time.perf_counter() - t0)
    return {
        "model": spec.name,
        "dimension": one.dimension,
        "identity": one.identity,
        "query_ms": _pct(single),
        "query_cpu_ms": _pct(cpu),
        "query_batch8_ms_per_question": _pct(batched),
        "passages_per_s": round(per_s, 1),
        "prepare_s": prepare,
    }


def run(args: argparse.Namespace) -> int:
    import os

    rows = _questions(Path(args.questions), args.limit)
    texts = [r["question"] for r in rows]
    index = dict(item.split("=", 1) for item in args.index)
    passages = _chunk_texts(next(iter(index.values())), args.passages) if index else []
    if not passages:  # no index given: the questions stand in for chunk texts
        passages = (texts * (args.passages // len(texts) + 1))[: args.passages]
    results = []
    for alias in [m.strip() for m in args.models.split(",") if m.strip()]:
        res = measure(alias, texts, args.repeats, passages)
        key = next((k for k in index if resolve_spec(ModelSpec(name=k)).name == res["model"]), None)
        if key is not None:
            res["retrieve_ms"] = _retrieval(index[key], rows, args.repeats)
        results.append(res)
        q, r, qc = res["query_ms"], res.get("retrieve_ms"), res["query_cpu_ms"]
        line = (
            f"{res['model']:<46} dim={res['dimension']:<4} query p50={q['p50']:.3f} p95={q['p95']:.3f} ms "
            f"(CPU p50={qc['p50']:.3f})  "
            f"batch8={res['query_batch8_ms_per_question']['p50']:.3f} ms/q  "
            f"passages={res['passages_per_s']:.0f}/s"
        )
        if r:
            line += f"  retrieve p50={r['p50']:.2f} p95={r['p95']:.2f} ms (CPU p50={r['cpu']['p50']:.2f})"
        print(line, flush=True)
    load = os.getloadavg()
    out = {
        "questions": len(texts),
        "repeats": args.repeats,
        "loadavg": [round(x, 2) for x in load],
        "models": results,
    }
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    if args.chart:
        from schemarag.tools.benchmarks.charts import grouped_bars

        cats = [r["model"].split("/")[-1] for r in results]
        series = {"query embedding p50": [r["query_ms"]["p50"] for r in results]}
        upper = {"query embedding p50": [r["query_ms"]["p95"] for r in results]}
        if all("retrieve_ms" in r for r in results):
            series["retrieve (embed + search) p50"] = [r["retrieve_ms"]["p50"] for r in results]
            upper["retrieve (embed + search) p50"] = [r["retrieve_ms"]["p95"] for r in results]
        path = grouped_bars(
            Path(args.chart), cats, series, "milliseconds per question (whisker: p95)",
            "Embedding models: per-question latency, 1 thread", upper=upper,
        )  # fmt: skip
        print(f"chart: {path}", file=sys.stderr)
    return 0
