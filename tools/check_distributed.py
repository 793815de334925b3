"""``make check-distributed``: the build on Dagster's Celery executor with real workers, broker and S3.

What it starts, all on loopback: a moto S3 server (the one the tests use) with an artifacts and an
intermediates bucket; a Dagster instance in a temporary ``DAGSTER_HOME`` with a queued run
coordinator and a ``dagster-daemon`` that launches the queued runs; two ``schemarag worker``
processes (Celery workers running dagster-celery's step task), each with its own working folder,
temporary folder and ``SCHEMARAG_CACHE_DIR``, as two machines would have. The broker is the Redis
(or RabbitMQ) server given by ``--broker`` (default ``$SCHEMARAG_CELERY_BROKER``, else
``redis://127.0.0.1:6379/0``; ``.ci/run`` starts Debian's redis-server when none listens); this
check's tasks go to a queue of its own.

Then, as a user would (docs/scale-out.md)::

    schemarag build --executor celery --jobs 3 --schema-partitions-from 1 \\
        --data DATA --artifacts s3://schemarag-artifacts/idx --intermediates s3://schemarag-intermediates/runs

for the bundled samples plus ``wh``, a generated three-schema warehouse whose embedding fans out
to one ``embed_schema`` run per schema. It checks that the published versions equal a local
``schemarag build`` of the same inputs (same keys; same bytes but for LanceDB's UUID-named files and
the manifest's build time), that a ``Retriever`` opened on the bucket from an empty cache ranks
like the local index, and that the instance holds every run as succeeded and launched from its
queue by the daemon, with steps on both workers, every version written in the publishing worker's
own copy and every asset check passed. The last line sums it up.

    python tools/check_distributed.py [--broker URL] [--keep]

:class:`Cluster` is also what the fault tests use (``tests/pipelines/test_celery_faults.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SAMPLES = REPO / "data" / "schemas"
ARTIFACTS_BUCKET = "schemarag-artifacts"
IO_BUCKET = "schemarag-intermediates"
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
WH = "wh"  # the generated multi-schema database
QUESTIONS = (
    "orders placed by a customer last month",
    "unpaid invoices and their sales rep",
    "revenue by product category",
    "which accounts signed up this year",
    "campaign spend per channel",
)
# Runs wait in the instance's queue until the dagster-daemon launches them, at most 3 at once.
QUEUED_YAML = """\
run_coordinator:
  module: dagster.core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 3
"""


class CheckFailed(Exception):
    """One line saying what did not hold."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(url: str) -> bool:
    parts = urlsplit(url)
    default = 5672 if parts.scheme.startswith("amqp") or parts.scheme == "pyamqp" else 6379
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or default), timeout=2):
            return True
    except OSError:
        return False


def schemarag_cmd() -> list[str]:
    return [str(BIN / "schemarag")] if (BIN / "schemarag").exists() else [sys.executable, "-m", "schemarag"]


@dataclass
class Worker:
    name: str
    hostname: str
    folder: Path
    proc: subprocess.Popen
    log: Path


class Cluster:
    """moto S3 with two buckets, a Dagster home and ``schemarag worker`` processes (module doc).

    Every process is started in its own session and stopped by its id on exit."""

    def __init__(
        self, work: Path, broker: str, lost_worker_seconds: int | None = None, queued: bool = False
    ) -> None:
        self.work = work
        self.queued = queued
        self.daemon: subprocess.Popen | None = None
        self.broker = broker
        self.queue = f"schemarag-check-{os.getpid()}-{time.monotonic_ns() % 10**6}"
        self.lost_worker_seconds = lost_worker_seconds
        self.home = work / "dagster-home"
        self.workers: dict[str, Worker] = {}
        self.moto: subprocess.Popen | None = None
        self.endpoint = ""
        self.artifacts = f"s3://{ARTIFACTS_BUCKET}/idx"
        self.intermediates = f"s3://{IO_BUCKET}/runs"

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> Cluster:
        try:
            self._start_moto()
            self.home.mkdir(parents=True, exist_ok=True)
            from schemarag.pipelines.instance import DAGSTER_YAML  # the instance config a build writes

            (self.home / "dagster.yaml").write_text(DAGSTER_YAML + (QUEUED_YAML if self.queued else ""))
            if self.queued:
                self._start_daemon()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for w in list(self.workers.values()):
            self.stop_worker(w.name)
        if self.daemon is not None:
            os.killpg(self.daemon.pid, signal.SIGTERM)
            try:
                self.daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.daemon.pid, signal.SIGKILL)
                self.daemon.wait()
            self.daemon = None
        self._forget_queue()
        if self.moto is not None:
            self.moto.terminate()
            try:
                self.moto.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.moto.kill()
                self.moto.wait()
            self.moto = None

    def _forget_queue(self) -> None:
        """Drop this check's queue and its bindings from a shared Redis (task results expire)."""
        if not self.broker.startswith("redis"):
            return
        try:
            import redis

            client = redis.Redis.from_url(self.broker, socket_timeout=5)
            keys = [f"_kombu.binding.{self.queue}", f"_kombu.binding_permanent.{self.queue}", self.queue]
            client.delete(*keys)
        except Exception:  # best effort: a leftover key costs a few bytes
            pass

    def _start_moto(self) -> None:
        server = shutil.which("moto_server", path=str(BIN)) or shutil.which("moto_server")
        if server is None:
            raise CheckFailed("moto_server not found: pip install -e '.[test]' (make install)")
        port = free_port()
        log = open(self.work / "moto.log", "wb")  # noqa: SIM115 - owned by the process
        self.moto = subprocess.Popen(
            [server, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
        )
        self.endpoint = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2)
                break
            except OSError:
                if self.moto.poll() is not None or time.monotonic() > deadline:
                    raise CheckFailed(f"moto_server did not start (exit {self.moto.poll()})") from None
                time.sleep(0.3)
        import pyarrow.fs as pafs

        admin = pafs.S3FileSystem(
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            access_key="testing",
            secret_key="testing",
            region="us-east-1",
            allow_bucket_creation=True,
        )
        for bucket in (ARTIFACTS_BUCKET, IO_BUCKET):
            admin.create_dir(bucket)  # the operator's job, once; builds never create buckets

    def _start_daemon(self) -> None:
        """``dagster-daemon run`` on the Celery code location: it dequeues and launches the runs."""
        folder = self.work / "daemon"
        env = self.env(**self.machine("daemon"))
        self.daemon = subprocess.Popen(
            [str(BIN / "dagster-daemon"), "run", "-m", "schemarag.pipelines.celery_definitions"],
            cwd=folder,
            env=env,
            stdout=(folder / "daemon.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_daemon(self, timeout: float = 180.0) -> None:
        """Until the daemon's run-queue loop heartbeats (builds then queue their runs for it)."""
        deadline = time.monotonic() + timeout
        instance = self.instance()
        while "QUEUED_RUN_COORDINATOR" not in instance.get_daemon_heartbeats():
            if self.daemon is None or self.daemon.poll() is not None or time.monotonic() > deadline:
                log = (self.work / "daemon" / "daemon.log").read_text(errors="replace").strip().splitlines()
                raise CheckFailed(f"dagster-daemon did not start: {log[-1] if log else 'no output'}")
            time.sleep(1)

    # -- environments ----------------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        """What every process of this deployment shares: S3, broker, queue, the Dagster home."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "SCHEMARAG_", "DAGSTER_"))}
        env.update(
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_REGION="us-east-1",
            AWS_EC2_METADATA_DISABLED="true",
            SCHEMARAG_S3_ENDPOINT=self.endpoint,
            SCHEMARAG_CELERY_BROKER=self.broker,
            SCHEMARAG_CELERY_QUEUE=self.queue,
            DAGSTER_HOME=str(self.home),
            PYTHONUNBUFFERED="1",
        )
        if self.lost_worker_seconds is not None:
            env["SCHEMARAG_CELERY_LOST_WORKER_SECONDS"] = str(self.lost_worker_seconds)
        env.update(extra)
        return env

    def machine(self, name: str) -> dict[str, str]:
        """A machine's own folders: working folder, temp folder, schemarag cache."""
        folder = self.work / name
        (folder / "tmp").mkdir(parents=True, exist_ok=True)
        return {
            "TMPDIR": str(folder / "tmp"),
            "SCHEMARAG_CACHE_DIR": str(folder / "cache"),
            "HOME": str(folder),
        }

    # -- workers ---------------------------------------------------------------------------------
    def start_worker(self, name: str, env: dict[str, str] | None = None) -> Worker:
        """``schemarag worker --name <name>`` in its own folder; returns once it started (not ready)."""
        folder = self.work / name
        machine = self.machine(name)
        log = folder / "worker.log"
        tag = f"{name}-{os.getpid()}"
        proc = subprocess.Popen(
            [*schemarag_cmd(), "worker", "--name", tag, "--loglevel", "INFO"],
            cwd=folder,
            env=env if env is not None else self.env(**machine),
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        worker = Worker(name, f"{tag}@{socket.gethostname()}", folder, proc, log)
        self.workers[name] = worker
        return worker

    def wait_ready(self, *names: str, timeout: float = 180.0) -> None:
        """Until every named worker logged Celery's ``ready.``; a worker that exits is one line."""
        deadline = time.monotonic() + timeout
        pending = set(names or self.workers)
        while pending:
            for name in sorted(pending):
                w = self.workers[name]
                text = w.log.read_text(encoding="utf-8", errors="replace") if w.log.exists() else ""
                if " ready." in text:
                    pending.discard(name)
                elif w.proc.poll() is not None:
                    last = text.strip().splitlines()[-1] if text.strip() else "(no output)"
                    raise CheckFailed(f"worker {name} exited ({w.proc.returncode}): {last}")
            if pending and time.monotonic() > deadline:
                raise CheckFailed(f"workers not ready after {timeout:.0f} s: {', '.join(sorted(pending))}")
            time.sleep(0.3)

    def kill_worker(self, name: str) -> None:
        """SIGKILL the worker's process group (Celery's main process and its pool): a lost machine."""
        w = self.workers[name]
        os.killpg(w.proc.pid, signal.SIGKILL)
        w.proc.wait(timeout=30)

    def stop_worker(self, name: str) -> None:
        w = self.workers.pop(name)
        if w.proc.poll() is None:
            os.killpg(w.proc.pid, signal.SIGTERM)  # Celery's warm shutdown
            try:
                w.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(w.proc.pid, signal.SIGKILL)
                w.proc.wait()

    # -- builds ----------------------------------------------------------------------------------
    def build(
        self, data: Path, *extra: str, echo: Callable[[str], None] | None = None, machine: str = "cli"
    ) -> subprocess.CompletedProcess[str]:
        """``schemarag build --executor celery`` from a machine of its own; stderr lines to ``echo``."""
        cmd = [*schemarag_cmd(), "build", "--executor", "celery", "--data", str(data)]
        cmd += ["--artifacts", self.artifacts, "--intermediates", self.intermediates, *extra]
        proc = subprocess.Popen(
            cmd,
            cwd=self.work,
            env=self.env(**self.machine(machine)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        err: list[str] = []
        assert proc.stderr is not None and proc.stdout is not None
        for line in proc.stderr:
            err.append(line)
            if echo:
                echo(line.rstrip())
        out = proc.stdout.read()
        proc.wait()
        return subprocess.CompletedProcess(cmd, proc.returncode, out, "".join(err))

    def instance(self):
        import dagster as dg

        return dg.DagsterInstance.from_config(str(self.home))

    @contextmanager
    def s3_env(self, cache: Path) -> Iterator[None]:
        """This process as a reader on another machine: the cluster's S3 settings, ``cache``."""
        saved = dict(os.environ)
        os.environ.update(
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_REGION="us-east-1",
            SCHEMARAG_S3_ENDPOINT=self.endpoint,
            SCHEMARAG_CACHE_DIR=str(cache),
        )
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)


# -- inputs ------------------------------------------------------------------------------------------
def prepare_data(folder: Path) -> Path:
    """The bundled samples plus ``wh``: 12 tables, 400 columns in three schemas (as the fan-out test)."""
    from schemarag.tools.benchmarks.warehouse_catalog import CatalogSpec, write_export
    from schemarag.tools.importers.catalog_export import import_catalog_export

    shutil.copytree(SAMPLES, folder)
    export = write_export(
        CatalogSpec(tables=12, columns=400, schemas=3, families=1, shards=3), folder.parent / "export"
    )
    import_catalog_export(
        export.columns, folder, database=WH, tables=export.tables, foreign_keys=export.foreign_keys
    )
    return folder


# -- comparisons -------------------------------------------------------------------------------------
def _comparable(files: dict[str, bytes]) -> dict[str, str]:
    """SHA-256 per file, LanceDB's own files (UUID names, write order) left out; the manifest
    without its build time and Lance entries."""
    out = {}
    for rel, raw in files.items():
        if rel.startswith("lance/"):
            continue
        if rel == "manifest.json":
            manifest = json.loads(raw)
            manifest.pop("built_at", None)
            manifest["files"] = {k: v for k, v in manifest["files"].items() if not k.startswith("lance/")}
            raw = json.dumps(manifest, sort_keys=True).encode()
        out[rel] = hashlib.sha256(raw).hexdigest()
    return out


def remote_version(uri: str, db: str) -> tuple[str | None, dict[str, bytes]]:
    """The key ``CURRENT`` names in the bucket and that version's files (as bytes)."""
    import pyarrow.fs as pafs

    from schemarag.runtime.artifact.remote import filesystem, read_remote_current

    fs, base = filesystem(uri)
    key = read_remote_current(fs, f"{base}/{db}")
    if key is None:
        return None, {}
    root = f"{base}/{db}/{key}"
    files = {}
    for info in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        if info.type == pafs.FileType.File:
            with fs.open_input_stream(info.path) as fh:
                files[info.path.removeprefix(root + "/")] = fh.read()
    return key, files


def leftover_intermediates(uri: str) -> list[str]:
    """Objects under the intermediates prefix (each run deletes its own when it ends)."""
    import pyarrow.fs as pafs

    from schemarag.runtime.artifact.remote import filesystem

    fs, base = filesystem(uri)
    found = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
    return [i.path for i in found if i.type == pafs.FileType.File]


def local_version(artifacts: Path, db: str) -> tuple[str | None, dict[str, bytes]]:
    from schemarag.assets.lib.artifact_store import read_current

    key = read_current(artifacts / db)
    if key is None:
        return None, {}
    root = artifacts / db / key
    return key, {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def rankings(db: str, artifacts: str) -> list[tuple]:
    """Per question: the ranked tables and (chunk id, score) of the top chunks."""
    from schemarag.runtime.search.retriever import Retriever

    r = Retriever.open(db, artifacts=artifacts)
    out = []
    for q in QUESTIONS:
        res = r.search(q, top_k=10)
        out.append((tuple(res.tables), tuple((c.chunk.chunk_id, round(c.score, 6)) for c in res.chunks)))
    return out


def instance_figures(instance, caches: dict[str, Path]) -> dict:
    """Runs by job and status, steps per worker (``caches``: worker hostname -> its cache folder),
    asset checks passed/evaluated, and the ``build_index`` runs whose ``published_index`` wrote the
    version in a folder that is not the publishing worker's own (a path read on another machine)."""
    import dagster as dg

    from schemarag.pipelines.celery_build import step_workers

    per_worker: Counter[str] = Counter()
    checks = [0, 0]
    statuses: Counter[tuple[str, str]] = Counter()
    foreign: list[str] = []
    split = 0  # build_index runs whose steps ran on more than one worker
    dequeued = 0  # runs the daemon took from the instance's queue
    for run in instance.get_runs():
        statuses[(run.job_name, run.status.value)] += 1
        steps = step_workers(instance, run.run_id)
        per_worker.update(steps.values())
        split += run.job_name == "build_index" and len(set(steps.values())) > 1
        enqueued = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_ENQUEUED)
        dequeued += bool(enqueued) and ".dagster/grpc_info" in run.tags  # launched by the daemon's launcher
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
            checks[1] += 1
            checks[0] += bool(entry.dagster_event.event_specific_data.passed)
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            mat = entry.dagster_event.event_specific_data.materialization
            if mat.asset_key.to_user_string() == "published_index":
                own = caches.get(steps.get("published_index", ""))
                path = Path(str(mat.metadata["path"].value))
                if own is None or not path.is_relative_to(own):
                    foreign.append(f"{run.tags.get('dagster/partition')}: {path}")
    return {
        "runs": statuses,
        "steps": {h: per_worker.get(h, 0) for h in sorted(caches)},
        "other_steps": sum(n for h, n in per_worker.items() if h not in caches),
        "checks": checks,
        "foreign": foreign,
        "split": split,
        "dequeued": dequeued,
    }


# -- the check ---------------------------------------------------------------------------------------
def check(broker: str, work: Path, say: Callable[[str], None]) -> str:
    start = time.perf_counter()

    def phase(msg: str) -> None:
        say(f"[{time.perf_counter() - start:5.0f} s] {msg}")

    if not listening(broker):
        raise CheckFailed(
            f"no broker listening for {broker}: start one (`.ci/run` does: redis-server --daemonize yes "
            "--bind 127.0.0.1 --port 6379) or pass --broker"
        )
    phase("preparing inputs: the bundled samples + wh (400 columns in 3 schemas)")
    data = prepare_data(work / "data")
    dbs = sorted(p.stem for p in data.glob("*.json"))
    with Cluster(work, broker, queued=True) as cluster:
        phase(
            f"moto S3 at {cluster.endpoint}, dagster-daemon (queued runs); 2 workers on queue {cluster.queue}"
        )
        for name in ("w1", "w2"):
            cluster.start_worker(name)
        phase("local reference build while the workers start: schemarag build --data DATA --artifacts LOCAL")
        local = work / "local-artifacts"
        ref = subprocess.run(
            [*schemarag_cmd(), "build", "--quiet", "--data", str(data), "--artifacts", str(local)],
            cwd=work,
            env={**cluster.env(**cluster.machine("reference")), "DAGSTER_HOME": str(work / "reference-home")},
            capture_output=True,
            text=True,
        )
        if ref.returncode != 0:
            raise CheckFailed(f"local build failed: {(ref.stderr or ref.stdout).strip().splitlines()[-1:]}")
        cluster.wait_ready("w1", "w2")
        cluster.wait_daemon()
        hosts = {w.hostname for w in cluster.workers.values()}
        phase(f"workers ready ({', '.join(sorted(hosts))}); distributed build of {', '.join(dbs)}")
        t_build = time.perf_counter()
        proc = cluster.build(
            data, "--jobs", "3", "--schema-partitions-from", "1", echo=lambda line: say(f"    | {line}")
        )
        build_seconds = time.perf_counter() - t_build
        if proc.returncode != 0:
            failed = [ln for ln in proc.stdout.splitlines() if "FAILED" in ln]
            failed = failed or proc.stderr.splitlines()[-1:]
            raise CheckFailed(f"distributed build failed: {failed[0] if failed else proc.returncode}")
        phase(f"distributed build done in {build_seconds:.0f} s; comparing with the local build")
        with cluster.s3_env(work / "compare-cache"):
            left = leftover_intermediates(cluster.intermediates)
        if left:
            raise CheckFailed(f"{len(left)} intermediate object(s) left after the runs, e.g. {left[0]}")
        keys_equal = 0
        with cluster.s3_env(work / "compare-cache"):
            for db in dbs:
                rkey, rfiles = remote_version(cluster.artifacts, db)
                lkey, lfiles = local_version(local, db)
                if rkey is None or rkey != lkey:
                    raise CheckFailed(f"{db}: published key {rkey} != local build's {lkey}")
                if _comparable(rfiles) != _comparable(lfiles):
                    a, b = _comparable(rfiles), _comparable(lfiles)
                    diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                    raise CheckFailed(f"{db}: published files differ from the local build's: {diff}")
                keys_equal += 1
        phase("opening the bucket from an empty cache and comparing rankings")
        from schemarag.runtime.search.retriever import Retriever

        ranked_equal = 0
        reader_cache = work / "reader-cache"
        with cluster.s3_env(reader_cache):
            for db in dbs:
                Retriever.clear_cache()
                remote = rankings(db, cluster.artifacts)
                Retriever.clear_cache()
                mine = rankings(db, str(local))
                Retriever.clear_cache()
                for q, a, b in zip(QUESTIONS, remote, mine, strict=True):
                    if a != b:
                        raise CheckFailed(f"{db}: {q!r} ranks {a[0][:5]} from the bucket, {b[0][:5]} locally")
                    ranked_equal += 1
        if not any(reader_cache.rglob("manifest.json")):
            raise CheckFailed("the reader did not fetch from the bucket into its empty cache")
        phase("reading the Dagster instance")
        caches = {
            w.hostname: Path(cluster.machine(w.name)["SCHEMARAG_CACHE_DIR"]) for w in cluster.workers.values()
        }
        figures = instance_figures(cluster.instance(), caches)
        if figures["foreign"]:
            raise CheckFailed(
                f"versions written outside the publishing worker's own copy: {figures['foreign']}"
            )
        bad = {k: n for k, n in figures["runs"].items() if k[1] != "SUCCESS"}
        if bad:
            raise CheckFailed(f"runs not succeeded in the instance: {dict(bad)}")
        builds = figures["runs"].get(("build_index", "SUCCESS"), 0)
        schemas = figures["runs"].get(("embed_schema", "SUCCESS"), 0)
        if builds != len(dbs) or schemas != 3:
            raise CheckFailed(
                f"instance has {builds} build_index and {schemas} embed_schema runs; expected {len(dbs)}, 3"
            )
        steps = figures["steps"]
        if min(steps.values()) == 0 or figures["other_steps"]:
            raise CheckFailed(
                f"steps per worker {steps} (+{figures['other_steps']} elsewhere): not on both workers"
            )
        runs = builds + schemas
        if figures["dequeued"] != runs:
            raise CheckFailed(f"only {figures['dequeued']}/{runs} runs went through the queue and the daemon")
        passed, evaluated = figures["checks"]
        if evaluated != 5 * len(dbs) or passed != evaluated:
            raise CheckFailed(f"asset checks: {passed}/{evaluated} passed, expected {5 * len(dbs)}")
    per_worker = ", ".join(f"{h.split('@')[0].rsplit('-', 1)[0]}={n}" for h, n in sorted(steps.items()))
    return (
        f"check-distributed: ok in {time.perf_counter() - start:.0f} s "
        f"(distributed build {build_seconds:.0f} s): "
        f"{builds} build_index + {schemas} embed_schema runs on the celery executor, "
        f"{figures['dequeued']}/{runs} launched from the queue by the daemon; steps per worker "
        f"{per_worker} ({figures['split']}/{builds} builds spread over both); "
        f"published keys equal {keys_equal}/{len(dbs)}; rankings from an empty cache equal "
        f"{ranked_equal}/{ranked_equal}; asset checks {passed}/{evaluated} passed"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--broker", default=os.environ.get("SCHEMARAG_CELERY_BROKER") or DEFAULT_BROKER)
    ap.add_argument("--keep", action="store_true", help="keep the working folder (logs, caches) and print it")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="schemarag-distributed-"))

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        print(check(args.broker, work, say), flush=True)
        return 0
    except CheckFailed as exc:
        print(f"check-distributed: FAILED: {exc} (logs: {work})", file=sys.stderr)
        args.keep = True
        return 1
    finally:
        if args.keep:
            say(f"working folder kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
