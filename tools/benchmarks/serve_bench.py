"""``schemarag bench serve``: load-test a real ``schemarag serve`` process over loopback.

Starts the server as a child process on a free loopback port over the artifacts (the
benchmarked sample index built first when missing), waits for ``/readyz``, then drives
``POST /v1/retrieve`` with async httpx at each concurrency level (default 16 and 64
connections) for a fixed time. Every request asks a different question (the sample questions
crossed with phrasing templates and numbers), so the server's query-embedding cache never hits
and each request pays the full model cost.

Prints, per level: throughput (successful requests/s), p50/p95/p99 latency as the client saw
it, the server's own in-process search time (``metadata.timings_ms.total``), and errors
(non-200 answers and transport failures); writes JSON and a PNG chart. The client runs on the
same machine as the server and competes for the same cores: on a 2-core box that is part of
the measurement, so say so when quoting the numbers.

    schemarag bench serve [--artifacts DIR] [--connections 16 64] [--duration 15] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.core.paths import artifacts_dir
from schemarag.tools.commands.json_output import add_json_output

SAMPLE_DBS = ("ecommerce", "b2b_saas")
TEMPLATES = (  # every template uses the number: "{q}" alone would repeat once per number
    "{q} Answer for store {n}.",
    "{q} Limit it to the top {n}.",
    "For the last {n} days: {q}",
    "{q} Show only the first {n} rows.",
    "Quick question #{n}: {q}",
    "{q} Group the result by month, going back {n} months.",
    "I need this for report {n}: {q}",
    "{q} Exclude anything older than {n} weeks.",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="b2b_saas", help="database to query (default b2b_saas)")
    parser.add_argument("--questions", default="data/questions", help="folder of *.jsonl question files")
    parser.add_argument("--connections", type=int, nargs="+", default=[16, 64], help="concurrency levels")
    parser.add_argument("--duration", type=float, default=15.0, help="seconds measured per level")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of unmeasured load first")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--threads", type=int, default=None, help="search threads per worker")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument(
        "--client",
        choices=("auto", "wrk", "httpx"),
        default="auto",
        help="load generator: wrk (apt-get install wrk; least client CPU) or async httpx "
        "(auto: wrk if installed)",
    )
    add_json_output(parser, default_out="build/bench/serve.json")
    parser.add_argument("--chart", default="build/bench/serve.png", help="PNG chart output")


def distinct_questions(folder: Path, count: int, seed: int = 0) -> list[str]:
    """``count`` different questions: every sample question under every template and number."""
    base = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                base.append(json.loads(line)["question"])
    if not base:
        raise SystemExit(f"no questions in {folder}/*.jsonl")
    combos = itertools.product(range(2, 10_000), TEMPLATES, base)
    out = [t.format(q=q, n=n) for n, t, q in itertools.islice(combos, count)]
    random.Random(seed).shuffle(out)
    return out


def ensure_artifacts(artifacts: Path, data: Path, db: str) -> None:
    """Build the benchmarked sample index when it is missing; nothing else is written into
    ``artifacts`` (a server listing its databases must not find extra ones afterwards)."""
    if (artifacts / db / CURRENT).is_file() or db not in SAMPLE_DBS:
        return  # a missing non-sample index: the server's readiness check names it
    from schemarag.pipelines.build import build_databases

    print(f"building {db} into {artifacts} first ...", file=sys.stderr)
    failed = [r for r in build_databases([db], data, artifacts) if not r.ok]
    if failed:
        raise SystemExit(f"build failed: {failed}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(artifacts: Path, port: int, workers: int, threads: int | None) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "schemarag", "serve", "--artifacts", str(artifacts), "--port", str(port),
           "--workers", str(workers), "--no-access-log"]  # fmt: skip
    if threads:
        cmd += ["--threads", str(threads)]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


async def wait_ready(base: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                ready = await client.get(f"{base}/readyz")
                if ready.status_code == 200:
                    return
                if ready.json().get("error"):
                    raise SystemExit(f"server not ready: {ready.json()['error']}")
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.3)
    raise SystemExit(f"server not ready after {timeout:.0f} s")


async def drive(base: str, db: str, feed: Iterator[str], conns: int, seconds: float, top_k: int):
    """``conns`` clients in a closed loop for ``seconds``: (latencies ms, server ms, errors, elapsed)."""
    import httpx

    lat: list[float] = []
    server: list[float] = []
    errors: dict[str, int] = {}
    limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        stop = time.perf_counter() + seconds

        async def one() -> None:
            while time.perf_counter() < stop:
                body = {"database": db, "question": next(feed), "top_k": top_k}
                t0 = time.perf_counter()
                try:
                    r = await client.post("/v1/retrieve", json=body)
                except httpx.HTTPError as exc:
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                    continue
                took = (time.perf_counter() - t0) * 1000
                if r.status_code != 200:
                    errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
                    continue
                lat.append(took)
                server.append(r.json()["metadata"]["timings_ms"]["total"])

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(conns)))
        return lat, server, errors, time.perf_counter() - start


def tree_cpu_seconds(pid: int) -> float | None:
    """User+system CPU seconds of ``pid`` and its children (Linux /proc), or None elsewhere.

    CPU per request is the load-independent figure: wall-clock numbers on a shared machine
    swing with the neighbours, the CPU a request costs does not (much).
    """
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total, todo, seen = 0.0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            if p == pid:
                return None
    return total


WRK_SCRIPT = r"""
-- distinct request bodies: thread i sends lines i, i+n, i+2n, ... of the bodies file
local threads, counter = {}, 1
function setup(thread)
  thread:set("id", counter); table.insert(threads, thread); counter = counter + 1
end
function init(args)
  bodies = {}
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  step = tonumber(args[2]); idx = id - step; errors = 0
  wrk.method = "POST"; wrk.headers["Content-Type"] = "application/json"
end
function request()
  idx = idx + step
  if idx > #bodies then idx = id end
  return wrk.format(nil, nil, nil, bodies[idx])
end
function response(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end
function done(summary, latency, requests)
  local bad = 0
  for _, t in ipairs(threads) do bad = bad + t:get("errors") end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests": %d, "duration_us": %d, "p50": %.3f, "p95": %.3f, "p99": %.3f, "non200": %d, '
    .. '"socket_errors": %d}\n', summary.requests, summary.duration, latency:percentile(50) / 1000,
    latency:percentile(95) / 1000, latency:percentile(99) / 1000, bad,
    e.connect + e.read + e.write + e.timeout))
end
"""


def drive_wrk(base: str, db: str, feed: Iterator[str], conns: int, seconds: float, top_k: int, tmp: Path):
    """The same closed-loop load from ``wrk`` (C, epoll): the client costs far less CPU than
    httpx, which matters when client and server share two cores. Returns a summary dict."""
    script = tmp / "bench.lua"
    script.write_text(WRK_SCRIPT)
    bodies = tmp / "bodies.jsonl"
    n = int(seconds * 2500) + 1000  # more than wrk can send in `seconds`: no body repeats
    with bodies.open("w") as fh:
        for q in itertools.islice(feed, n):
            fh.write(json.dumps({"database": db, "question": q, "top_k": top_k}) + "\n")
    threads = 2 if conns >= 2 else 1
    cmd = ["wrk", "-t", str(threads), "-c", str(conns), "-d", f"{seconds:g}s", "--timeout", "30s",
           "-s", str(script), f"{base}/v1/retrieve", "--", str(bodies), str(threads)]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    line = next((x for x in out.stdout.splitlines() if x.startswith("WRKJSON ")), None)
    if line is None:
        raise SystemExit(f"wrk failed: {out.stdout}\n{out.stderr}")
    return json.loads(line[len("WRKJSON ") :])


def _summary(lat: list[float], server: list[float], errors: dict[str, int], elapsed: float, conns: int):
    a = np.asarray(lat) if lat else np.asarray([float("nan")])
    return {
        "connections": conns,
        "requests_ok": len(lat),
        "throughput_rps": round(len(lat) / elapsed, 1),
        "p50_ms": round(float(np.percentile(a, 50)), 2),
        "p95_ms": round(float(np.percentile(a, 95)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2),
        "server_search_p50_ms": round(float(np.percentile(server, 50)), 2) if server else None,
        "errors": sum(errors.values()),
        "error_kinds": errors,
        "seconds": round(elapsed, 2),
    }


def chart(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    labels = [str(r["connections"]) for r in rows]
    ax1.bar(labels, [r["throughput_rps"] for r in rows], color="tab:blue")
    ax1.axhline(250, color="tab:red", linestyle="--", label="target 250 req/s")
    ax1.set_xlabel("concurrent connections")
    ax1.set_ylabel("successful retrieve requests / s")
    ax1.legend()
    x = np.arange(len(rows))
    for i, key in enumerate(("p50_ms", "p95_ms", "p99_ms")):
        ax2.bar(x + (i - 1) * 0.27, [r[key] for r in rows], width=0.27, label=key.split("_")[0])
    ax2.axhline(100, color="tab:red", linestyle="--", label="p99 target 100 ms")
    ax2.set_xticks(x, labels)
    ax2.set_yscale("log")
    ax2.set_xlabel("concurrent connections")
    ax2.set_ylabel("client-side latency (ms, log scale)")
    ax2.legend()
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # finished wrk runs
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure_level(
    base: str, args: argparse.Namespace, feed: Iterator[str], conns: int, server_pid: int, client: str
) -> dict[str, Any]:
    """Warm up, then measure one concurrency level; CPU is counted for the measured part only."""
    with tempfile.TemporaryDirectory(prefix="schemarag-bench-") as tmp:
        if client == "wrk":
            drive_wrk(base, args.db, feed, conns, args.warmup, args.top_k, Path(tmp))
        else:
            asyncio.run(drive(base, args.db, feed, conns, args.warmup, args.top_k))
        cpu0, client0 = tree_cpu_seconds(server_pid), _cpu_now()
        if client == "wrk":
            w = drive_wrk(base, args.db, feed, conns, args.duration, args.top_k, Path(tmp))
            ok = w["requests"] - w["non200"]
            errors = {k: w[k] for k in ("non200", "socket_errors") if w[k]}
            row = {"connections": conns, "requests_ok": ok,
                   "throughput_rps": round(ok / (w["duration_us"] / 1e6), 1),
                   "p50_ms": w["p50"], "p95_ms": w["p95"], "p99_ms": w["p99"],
                   "server_search_p50_ms": None, "errors": sum(errors.values()), "error_kinds": errors,
                   "seconds": round(w["duration_us"] / 1e6, 2)}  # fmt: skip
        else:
            lat, server, errs, elapsed = asyncio.run(
                drive(base, args.db, feed, conns, args.duration, args.top_k)
            )
            row = _summary(lat, server, errs, elapsed, conns)
        cpu1, client1 = tree_cpu_seconds(server_pid), _cpu_now()
    n = max(1, row["requests_ok"])
    row["client"] = client
    row["server_cpu_ms_per_request"] = round((cpu1 - cpu0) * 1000 / n, 2) if cpu0 and cpu1 else None
    row["client_cpu_ms_per_request"] = round((client1 - client0) * 1000 / n, 2)
    return row


def run(args: argparse.Namespace) -> int:
    artifacts = artifacts_dir(getattr(args, "artifacts", None))
    data = Path(getattr(args, "data", None) or "data/schemas")
    ensure_artifacts(artifacts, data, args.db)
    # at most ~2,000 requests/s on this kind of machine: enough questions that none repeats
    total = int(sum(args.duration + args.warmup for _ in args.connections) * 2000)
    feed = iter(distinct_questions(Path(args.questions), total))
    client = args.client
    if client == "auto":
        client = "wrk" if shutil.which("wrk") else "httpx"
    elif client == "wrk" and not shutil.which("wrk"):
        raise SystemExit("--client wrk: wrk is not installed (apt-get install wrk)")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_server(artifacts, port, args.workers, args.threads)
    rows = []
    try:
        asyncio.run(wait_ready(base, proc))
        for conns in args.connections:
            row = measure_level(base, args, feed, conns, proc.pid, client)
            rows.append(row)
            print(
                f"{conns:>3} connections: {row['throughput_rps']:>7.1f} req/s  p50 {row['p50_ms']:.1f} ms  "
                f"p95 {row['p95_ms']:.1f} ms  p99 {row['p99_ms']:.1f} ms  errors {row['errors']} "
                f"{row['error_kinds'] or ''}\n     CPU per request: server "
                f"{row['server_cpu_ms_per_request']} ms, "
                f"client ({client}) {row['client_cpu_ms_per_request']} ms"
                + (
                    f"; server search p50 {row['server_search_p50_ms']} ms"
                    if row["server_search_p50_ms"]
                    else ""
                )
            )
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # graceful shutdown of the server and its workers
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    load = os.getloadavg()[0]
    meta = {"db": args.db, "client": client, "workers": args.workers, "threads": args.threads,
            "cores": os.cpu_count(),
            "duration_s": args.duration, "load_avg_1m_after": round(load, 2),
            "note": "client and server share the machine's cores"}  # fmt: skip
    print(f"({args.workers} worker(s), {os.cpu_count()} cores, 1-min load average after: {load:.1f})")
    if args.json_out:
        Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_out).write_text(json.dumps({"meta": meta, "levels": rows}, indent=2))
    if args.chart:
        chart(rows, Path(args.chart), f"schemarag serve, POST /v1/retrieve on {args.db}: "
              f"{args.workers} worker(s), {os.cpu_count()} cores, load avg {load:.1f}")  # fmt: skip
        print(f"chart: {args.chart}")
    return 0
