"""``schemarag bench build``: build throughput and no-op rebuild time of the sample databases.

Works on a temporary copy of the data and a fresh temporary artifacts folder, so it never
touches real artifacts or a real Dagster instance. Three phases:

1. cold build: empty embedding cache, every chunk is embedded (model already loaded, so the
   number is build throughput, not ONNX start-up, which is reported separately);
2. warm-cache build: the artifacts are deleted but ``_cache`` is kept, so the whole graph runs
   again and only embedding inference is saved;
3. no-op rebuild: ``schemarag build`` in a fresh process (what a user or CI runs) minus the
   start-up of ``python -c pass``, plus the in-process key check it consists of.

Progress goes to stderr; the table to stdout; ``--json OUT`` writes every number.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import SchemaFileError, SchemaragError
from schemarag.runtime.core.paths import data_dir, list_databases
from schemarag.tools.commands.json_output import add_json_output

NOOP_TARGET_SECONDS = 3.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", action="append", default=None, help="database to include (default: all)")
    parser.add_argument(
        "--repeats", type=int, default=5, help="runs of each no-op timing (median; default 5)"
    )
    parser.add_argument(
        "--max-noop-seconds",
        type=float,
        default=NOOP_TARGET_SECONDS,
        help=f"exit 1 if the no-op rebuild exceeds this (default {NOOP_TARGET_SECONDS})",
    )
    add_json_output(parser)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _build_phase(name: str, dbs: list[str], data: Path, artifacts: Path, instance: Any) -> dict[str, Any]:
    """Build each database (one Dagster run each), timing them separately."""
    from schemarag.pipelines.build import build_databases

    per_db = []
    for db in dbs:
        _log(f"{name}: {db} ...")
        start = time.perf_counter()
        (report,) = build_databases([db], data, artifacts, instance=instance)
        seconds = time.perf_counter() - start
        if not report.ok:
            raise SchemaragError(f"bench build: {name} of {db} failed: {report.error}")
        per_db.append(
            {
                "database": db,
                "seconds": seconds,
                "chunks": report.chunks,
                "embedded": report.embedded,
                "cache_hits": report.cache_hits,
                "chunks_per_s": report.chunks / seconds,
            }
        )
    total_s = sum(r["seconds"] for r in per_db)
    chunks = sum(r["chunks"] for r in per_db)
    return {
        "seconds": total_s,
        "chunks": chunks,
        "embedded": sum(r["embedded"] for r in per_db),
        "cache_hits": sum(r["cache_hits"] for r in per_db),
        "chunks_per_s": chunks / total_s if total_s else 0.0,
        "databases": per_db,
    }


def _median_wall(cmd: list[str], repeats: int, env: dict[str, str], check_output: str = "") -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0 or check_output not in proc.stdout:
            raise SchemaragError(
                f"bench build: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-500:]}"
            )
    return statistics.median(times)


def _key_check_seconds(dbs: list[str], data: Path, artifacts: Path, repeats: int) -> float:
    """What the no-op path of ``schemarag build`` does in-process: hash inputs, compare CURRENT."""
    from schemarag.assets.lib.artifact_store import read_current
    from schemarag.assets.lib.inputs import read_sources
    from schemarag.runtime.core.embedding.embedder import Embedder

    model = Embedder.get().identity
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for db in dbs:
            snap = read_sources(data, db, model, artifacts)
            if not (snap.existing and read_current(snap.root) == snap.key):
                raise SchemaragError(f"bench build: {db} is not up to date after the warm build")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _noop_phase(dbs: list[str], data: Path, artifacts: Path, repeats: int, all_dbs: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    script = Path(sys.executable).with_name("schemarag")
    cli = [str(script)] if script.is_file() else [sys.executable, "-m", "schemarag.cli"]
    cmd = [*cli, "build", "--data", str(data), "--artifacts", str(artifacts)]
    if not all_dbs:  # else exactly what a user types: `schemarag build` (every database)
        for db in dbs:
            cmd += ["--db", db]
    _log(f"no-op: {repeats} x `python -c pass` and {repeats} x `{' '.join(cmd)}` ...")
    startup = _median_wall([sys.executable, "-c", "pass"], repeats, env)
    wall = _median_wall(cmd, repeats, env, check_output="unchanged")
    return {
        "command": cmd,
        "interpreter_startup_s": startup,
        "wall_s": wall,
        "rebuild_s": wall - startup,
        "key_check_s": _key_check_seconds(dbs, data, artifacts, repeats),
    }


def _table(res: dict[str, Any]) -> str:
    rows = [f"{'phase':<30} {'chunks':>7} {'embedded':>9} {'cached':>7} {'seconds':>8} {'chunks/s':>9}"]
    for label, key in (("cold build (empty cache)", "cold"), ("warm-cache build", "warm")):
        p = res[key]
        rows.append(
            f"{label:<30} {p['chunks']:>7} {p['embedded']:>9} {p['cache_hits']:>7} "
            f"{p['seconds']:>8.2f} {p['chunks_per_s']:>9.1f}"
        )
        for d in p["databases"]:
            rows.append(
                f"  {d['database']:<28} {d['chunks']:>7} {d['embedded']:>9} {d['cache_hits']:>7} "
                f"{d['seconds']:>8.2f} {d['chunks_per_s']:>9.1f}"
            )
    n = res["noop"]
    rows += [
        f"{'no-op rebuild (after start-up)':<30} {'':>7} {'':>9} {'':>7} {n['rebuild_s']:>8.3f}",
        f"  wall {n['wall_s']:.3f}s - `python -c pass` {n['interpreter_startup_s']:.3f}s; "
        f"target < {res['noop_target_s']:.2f}s: {'ok' if res['noop_ok'] else 'MISSED'}",
        f"{'no-op key check (in-process)':<30} {'':>7} {'':>9} {'':>7} {n['key_check_s']:>8.4f}",
        f"(one-off: import pipelines+lancedb {res['import_pipelines_s']:.2f}s, "
        f"load model {res['model_load_s']:.2f}s; load average {res['load_average_1m']:.1f} "
        f"on {res['cpu_count']} CPUs)",
    ]
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    source = data_dir(args.data)
    dbs = args.db or list_databases(source)
    if not dbs:
        raise SchemaFileError(f"{source}: no <db>.json schema files found; check --data")
    with tempfile.TemporaryDirectory(prefix="schemarag-bench-build-") as tmp:
        data, artifacts = Path(tmp) / "data", Path(tmp) / "artifacts"
        shutil.copytree(source, data)
        _log(f"bench build: {', '.join(dbs)}; data copied to {data}; artifacts in {artifacts}")
        start = time.perf_counter()
        import dagster as dg  # lazily, as `schemarag build` does: the runtime never imports it
        import lancedb  # noqa: F401  (the artifact writer's imports, also one-off costs)
        import pyarrow.parquet  # noqa: F401

        import schemarag.pipelines.build  # noqa: F401  (timed once, so phases measure only the build)

        import_s = time.perf_counter() - start
        from schemarag.runtime.core.embedding.embedder import Embedder

        start = time.perf_counter()
        Embedder.get().passage_embed(["warm up the ONNX session"])
        model_s = time.perf_counter() - start
        instance = dg.DagsterInstance.ephemeral()
        cold = _build_phase("cold build", dbs, data, artifacts, instance)
        for db in dbs:
            shutil.rmtree(artifacts / db)
        warm = _build_phase("warm-cache build", dbs, data, artifacts, instance)
        noop = _noop_phase(dbs, data, artifacts, max(1, args.repeats), all_dbs=not args.db)
    res = {
        "databases": dbs,
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "load_average_1m": os.getloadavg()[0],
        "import_pipelines_s": import_s,
        "model_load_s": model_s,
        "cold": cold,
        "warm": warm,
        "noop": noop,
        "noop_target_s": args.max_noop_seconds,
        "noop_ok": noop["rebuild_s"] < args.max_noop_seconds,
    }
    print(_table(res))
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps(res, indent=2), encoding="utf-8")
        _log(f"wrote {args.json_out}")
    return 0 if res["noop_ok"] else 1
