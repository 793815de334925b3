"""``schemarag bench catalog``: a warehouse-shaped catalog through import, build and search.

Generates an INFORMATION_SCHEMA-shaped export (:mod:`.warehouse_catalog`: default 2,000 tables,
120,000 columns, 6 schemas, 8 date-sharded families of 31 days), imports it with
``import catalog``, builds it cold (empty embedding cache, model already loaded), searches it, then
edits one table's doc and rebuilds, and times a no-op ``schemarag build`` in a fresh process.
Prints build columns/s, peak RSS of this process, index size, search p50/p95 and the two rebuild
times against the issue's targets. Everything lives in a temporary folder (``--keep DIR`` keeps it).

    schemarag bench catalog [--tables 2000] [--columns 120000] [--json OUT]

With several ``--documented`` fractions or ``--column-vectors`` tiers (comma-separated), it sweeps
instead: per (fraction, tier), a fresh export, import and cold build (empty embedding cache),
and prints wall columns/s, CPU seconds and columns per CPU-second; the chart is columns/s against
% documented, one line per tier:

    schemarag bench catalog --documented 0.1,1.0 --column-vectors full,short,bm25
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schemarag.runtime.artifact.format import COLUMN_VECTOR_TIERS
from schemarag.runtime.core.errors import SchemaragError
from schemarag.tools.benchmarks.warehouse_catalog import ATTRIBUTES, CatalogSpec, write_export
from schemarag.tools.commands.json_output import add_json_output

DB = "warehouse"
TARGETS = {"columns_per_s": 300.0, "peak_rss_gb": 6.0, "search_p50_ms": 30.0, "edit_s": 30.0, "noop_s": 3.0}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    spec = CatalogSpec()
    parser.add_argument("--tables", type=int, default=spec.tables, help=f"logical tables ({spec.tables})")
    parser.add_argument("--columns", type=int, default=spec.columns, help=f"logical columns ({spec.columns})")
    parser.add_argument("--schemas", type=int, default=spec.schemas, help=f"schemas ({spec.schemas})")
    parser.add_argument("--families", type=int, default=spec.families, help="date-sharded families")
    parser.add_argument("--shards", type=int, default=spec.shards, help="daily tables per family")
    parser.add_argument(
        "--documented",
        type=_fractions,
        default=[spec.documented],
        help=f"share of columns with a comment ({spec.documented}); several, comma-separated, sweep",
    )
    parser.add_argument(
        "--column-vectors",
        type=_tiers,
        default=["full"],
        help=f"column tier(s) to build with ({', '.join(COLUMN_VECTOR_TIERS)}); several (comma) sweep",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dialect", default="bigquery", help="dialect of the generated catalog")
    parser.add_argument("--queries", type=int, default=200, help="search questions timed (after 10 warm-up)")
    parser.add_argument("--repeats", type=int, default=3, help="no-op rebuild runs (median)")
    parser.add_argument("--keep", default=None, metavar="DIR", help="work in DIR and keep it")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    add_json_output(parser)


def _fractions(value: str) -> list[float]:
    try:
        out = [float(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--documented {value!r}: use fractions like 0.1,1.0") from None
    if not out or any(not 0.0 <= v <= 1.0 for v in out):
        raise argparse.ArgumentTypeError(f"--documented {value!r}: fractions between 0 and 1")
    return out


def _tiers(value: str) -> list[str]:
    out = [v.strip() for v in value.split(",") if v.strip()]
    bad = [v for v in out if v not in COLUMN_VECTOR_TIERS]
    if not out or bad:
        raise argparse.ArgumentTypeError(
            f"--column-vectors {value!r}: use one or more of {', '.join(COLUMN_VECTOR_TIERS)}"
        )
    return out


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _cpu_s() -> float:
    """CPU seconds of this process (all threads): unlike wall time, not inflated by other load."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux: KiB


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def _questions(names: list[str], n: int, seed: int) -> list[str]:
    """Questions in the catalog's own vocabulary (no benchmark data is read)."""
    rng = random.Random(seed + 1)
    attrs = [a.replace("_", " ") for a in ATTRIBUTES]
    out = []
    for _ in range(n):
        table = rng.choice(names).split(".")[-1].rstrip("_*").replace("_", " ")
        out.append(f"{rng.choice(['total', 'average', 'latest', 'number of'])} {rng.choice(attrs)} "
                   f"for each {table} by {rng.choice(attrs)}")  # fmt: skip
    return out


def _build(
    data: Path, artifacts: Path, instance: Any, what: str, tier: str = "full"
) -> tuple[float, float, Any]:
    """``(wall seconds, CPU seconds, build report)`` of one in-process build."""
    from schemarag.assets.resources import EmbeddingModel
    from schemarag.pipelines.build import build_databases

    _log(f"{what} ...")
    start, cpu = time.perf_counter(), _cpu_s()
    model = EmbeddingModel(column_vectors=tier)
    (report,) = build_databases([DB], data, artifacts, instance=instance, embedding_model=model)
    seconds, cpu = time.perf_counter() - start, _cpu_s() - cpu
    if not report.ok:
        raise SchemaragError(f"bench catalog: {what} failed: {report.error}")
    _log(f"{what}: {seconds:.1f}s wall, {cpu:.1f}s CPU, {report.chunks} chunks, {report.embedded} embedded")
    return seconds, cpu, report


def _search(artifacts: Path, questions: list[str]) -> dict[str, float]:
    from schemarag.runtime.search.retriever import Retriever

    retriever = Retriever.open(DB, artifacts=artifacts)
    for q in questions[:10]:
        retriever.search(q, top_k=8, table_budget=5)
    times, cpu = [], []
    for q in questions[10:]:
        start, c0 = time.perf_counter(), time.process_time()
        retriever.search(q, top_k=8, table_budget=5)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    times.sort()
    return {
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "cpu_p50_ms": statistics.median(cpu),
        "n": len(times),
    }


def _edit_one_table(data: Path) -> str:
    from schemarag.runtime.core.paths import docs_dir

    doc = sorted(docs_dir(data, DB).glob("*.md"))[1]  # [0] is _index.md
    text = doc.read_text(encoding="utf-8")
    doc.write_text(text.replace("## Purpose\n", "## Purpose\nAlso records loyalty tier upgrades. ", 1))
    return doc.name


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Every phase in ``work``; returns the numbers (see the module docstring)."""
    import dagster as dg

    from schemarag.runtime.core.embedding.embedder import Embedder
    from schemarag.tools.benchmarks.build_bench import _noop_phase
    from schemarag.tools.importers.catalog_export import import_catalog_export

    spec = CatalogSpec(args.tables, args.columns, args.schemas, args.families, args.shards,
                       args.documented[0], args.seed)  # fmt: skip
    data, artifacts = work / "data", work / "artifacts"
    start = time.perf_counter()
    export = write_export(spec, work / "export")
    gen_s = time.perf_counter() - start
    _log(f"generated {export.physical_tables} tables / {export.physical_columns} columns in {gen_s:.1f}s")
    start = time.perf_counter()
    imported = import_catalog_export(export.columns, data, database=DB, tables=export.tables,
                                     foreign_keys=export.foreign_keys, dialect=args.dialect)  # fmt: skip
    import_s = time.perf_counter() - start
    _log(f"imported {imported.tables} tables / {imported.columns} columns in {import_s:.1f}s")
    import schemarag.pipelines.build  # noqa: F401  (one-off import cost, outside the build timing)

    Embedder.get().passage_embed(["warm up the ONNX session"])
    instance = dg.DagsterInstance.ephemeral()
    tier = args.column_vectors[0]
    cold_s, cold_cpu, cold = _build(data, artifacts, instance, "cold build", tier)
    index_mb = _size_mb(artifacts / DB / cold.key)
    search = _search(artifacts, _questions(export.table_names, args.queries + 10, args.seed))
    edited = _edit_one_table(data)
    edit_s, edit_cpu, edit = _build(data, artifacts, instance, f"rebuild after editing {edited}", tier)
    saved = os.environ.get("SCHEMARAG_COLUMN_VECTORS")
    os.environ["SCHEMARAG_COLUMN_VECTORS"] = tier  # the no-op `schemarag build` of the same tier
    try:
        noop = _noop_phase([DB], data, artifacts, max(1, args.repeats), all_dbs=False)
    finally:
        if saved is None:
            os.environ.pop("SCHEMARAG_COLUMN_VECTORS", None)
        else:
            os.environ["SCHEMARAG_COLUMN_VECTORS"] = saved
    res = {
        "spec": spec.__dict__,
        "column_vectors": tier,
        "physical_tables": export.physical_tables,
        "physical_columns": export.physical_columns,
        "tables": imported.tables,
        "columns": imported.columns,
        "foreign_keys": imported.foreign_keys,
        "generate_s": gen_s,
        "import_s": import_s,
        "cold_build_s": cold_s,
        "cold_build_cpu_s": cold_cpu,
        "columns_per_cpu_s": imported.columns / cold_cpu,
        "chunks": cold.chunks,
        "embedded": cold.embedded,
        "columns_per_s": imported.columns / cold_s,
        "peak_rss_gb": _peak_rss_gb(),
        "index_mb": index_mb,
        "search_p50_ms": search["p50_ms"],
        "search_p95_ms": search["p95_ms"],
        "search_n": search["n"],
        "search_cpu_p50_ms": search["cpu_p50_ms"],
        "edit_s": edit_s,
        "edit_cpu_s": edit_cpu,
        "edit_embedded": edit.embedded,
        "noop_s": noop["rebuild_s"],
        "noop_command": noop["command"],
        "load_average_1m": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
    }
    res["ok"] = {
        "columns_per_s": res["columns_per_s"] >= TARGETS["columns_per_s"],
        "peak_rss_gb": res["peak_rss_gb"] <= TARGETS["peak_rss_gb"],
        "search_p50_ms": res["search_p50_ms"] <= TARGETS["search_p50_ms"],
        "edit_s": res["edit_s"] <= TARGETS["edit_s"],
        "noop_s": res["noop_s"] <= TARGETS["noop_s"],
    }
    return res


def report(res: dict[str, Any]) -> str:
    def mark(key: str) -> str:
        return "ok" if res["ok"][key] else "MISSED"

    rows = [
        f"catalog: {res['tables']} tables / {res['columns']} columns after import "
        f"({res['physical_tables']} tables / {res['physical_columns']} columns exported), "
        f"{res['foreign_keys']} foreign keys; import {res['import_s']:.1f}s",
        f"cold build         {res['cold_build_s']:>9.1f} s   {res['columns_per_s']:>8.0f} columns/s "
        f"(target >= {TARGETS['columns_per_s']:.0f}: {mark('columns_per_s')}); "
        f"{res['chunks']} chunks, {res['embedded']} embedded",
        f"  CPU time         {res['cold_build_cpu_s']:>9.1f} s   {res['columns_per_cpu_s']:>8.0f} "
        "columns per CPU-second (all threads; not inflated by other load)",
        f"peak RSS           {res['peak_rss_gb']:>9.2f} GB  (target <= {TARGETS['peak_rss_gb']:.0f}: "
        f"{mark('peak_rss_gb')})",
        f"index size         {res['index_mb']:>9.1f} MB",
        f"search p50 / p95   {res['search_p50_ms']:>9.1f} / {res['search_p95_ms']:.1f} ms over "
        f"{res['search_n']} questions (p50 target <= {TARGETS['search_p50_ms']:.0f}: "
        f"{mark('search_p50_ms')}); CPU p50 {res['search_cpu_p50_ms']:.1f} ms",
        f"edit-one-table     {res['edit_s']:>9.1f} s   ({res['edit_embedded']} re-embedded; target <= "
        f"{TARGETS['edit_s']:.0f}: {mark('edit_s')}); {res['edit_cpu_s']:.1f} s CPU",
        f"no-op rebuild      {res['noop_s']:>9.2f} s   (fresh process minus interpreter start-up; target <= "
        f"{TARGETS['noop_s']:.0f}: {mark('noop_s')})",
        f"(load average {res['load_average_1m']:.1f} on {res['cpu_count']} CPUs at the end)",
    ]
    return "\n".join(rows)


def sweep(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One cold build per (documented fraction, column tier), each from a fresh export, import,
    artifacts folder and embedding cache, in one process (model already loaded)."""
    import dagster as dg

    import schemarag.pipelines.build  # noqa: F401  (one-off import cost, outside the build timing)
    from schemarag.runtime.core.embedding.embedder import Embedder
    from schemarag.tools.importers.catalog_export import import_catalog_export

    Embedder.get().passage_embed(["warm up the ONNX session"])
    rows = []
    cells = [(d, t) for d in args.documented for t in args.column_vectors]
    for n, (documented, tier) in enumerate(cells, 1):
        cell = work / f"documented{documented:g}-{tier}"
        spec = CatalogSpec(args.tables, args.columns, args.schemas, args.families, args.shards, documented,
                           args.seed)  # fmt: skip
        export = write_export(spec, cell / "export")
        imported = import_catalog_export(export.columns, cell / "data", database=DB, tables=export.tables,
                                         foreign_keys=export.foreign_keys, dialect=args.dialect)  # fmt: skip
        load = os.getloadavg()[0]
        what = f"[{n}/{len(cells)}] cold build, {documented:.0%} documented, column tier {tier}"
        wall, cpu, report_ = _build(
            cell / "data", cell / "artifacts", dg.DagsterInstance.ephemeral(), what, tier
        )
        rows.append(
            {
                "documented": documented,
                "column_vectors": tier,
                "columns": imported.columns,
                "chunks": report_.chunks,
                "embedded": report_.embedded,
                "cold_build_s": wall,
                "cold_build_cpu_s": cpu,
                "columns_per_s": imported.columns / wall,
                "columns_per_cpu_s": imported.columns / cpu,
                "load_average_1m_start": load,
                "load_average_1m_end": os.getloadavg()[0],
            }
        )
        shutil.rmtree(cell, ignore_errors=True)  # several GB of artifacts per cell
    return {"sweep": rows, "tables": args.tables, "cpu_count": os.cpu_count(), "peak_rss_gb": _peak_rss_gb()}


def sweep_report(res: dict[str, Any]) -> str:
    rows = [
        f"{'documented':>10} {'tier':<6} {'embedded':>8} {'wall s':>8} {'columns/s':>9} {'CPU s':>8} "
        f"{'col/CPU-s':>9} {'load':>9}"
    ]
    for r in res["sweep"]:
        rows.append(
            f"{r['documented']:>10.0%} {r['column_vectors']:<6} {r['embedded']:>8} {r['cold_build_s']:>8.1f} "
            f"{r['columns_per_s']:>9.0f} {r['cold_build_cpu_s']:>8.1f} {r['columns_per_cpu_s']:>9.0f} "
            f"{r['load_average_1m_start']:>4.1f}-{r['load_average_1m_end']:<4.1f}"
        )
    rows.append(f"(target >= {TARGETS['columns_per_s']:.0f} columns/s; {res['cpu_count']} CPUs; load = "
                "1-minute load average at the start and end of each build)")  # fmt: skip
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    many = len(args.documented) > 1 or len(args.column_vectors) > 1
    if args.keep:
        work = Path(args.keep)
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        res = sweep(args, work) if many else measure(args, work)
    else:
        with tempfile.TemporaryDirectory(prefix="schemarag-bench-catalog-") as tmp:
            res = sweep(args, Path(tmp)) if many else measure(args, Path(tmp))
    print(sweep_report(res) if many else report(res))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(res, indent=2, default=str), encoding="utf-8")
        _log(f"wrote {args.json_out}")
    if many:
        return (
            1
            if args.check and any(r["columns_per_s"] < TARGETS["columns_per_s"] for r in res["sweep"])
            else 0
        )
    return 1 if args.check and not all(res["ok"].values()) else 0
