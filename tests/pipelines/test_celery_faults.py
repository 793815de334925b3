"""A Celery worker killed in the middle of a step: nothing published is lost, and a rerun completes.

Real components throughout (``tools/check_distributed.py``'s :class:`Cluster`): the Redis broker
on loopback, moto's S3 server, two ``schemarag worker`` processes with their own folders and
caches, and ``schemarag build --executor celery`` as a user runs it. ``b2b_saas`` is first
built and published on the workers (the previous complete version); after a docs edit the build
starts again, and the worker that takes ``published_index`` (writing, checking and uploading the
version takes seconds) is SIGKILLed with its whole process group as soon as the step starts, like
a lost machine. The executor's lost-worker watch fails the run; ``CURRENT`` in the bucket still
names the previous version, which a reader on a fresh machine still opens; a rerun completes on
the other worker.

Run by ``make check-distributed`` (``-m distributed``), not ``make test``.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from schemarag.pipelines.celery_build import step_workers
from schemarag.runtime.search.retriever import Retriever
from schemarag.tools.check_distributed import DEFAULT_BROKER, SAMPLES, Cluster, listening, remote_version

pytestmark = pytest.mark.distributed

DB = "b2b_saas"
LOST_AFTER = 10  # seconds a worker may be silent before its step fails (the default is 60)
STEP = "published_index"  # writes the version locally, checks it, uploads it, then moves CURRENT


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    broker = os.environ.get("SCHEMARAG_CELERY_BROKER") or DEFAULT_BROKER
    if not listening(broker):
        why = f"no broker at {broker}: start Redis on 127.0.0.1:6379 (.ci/run does)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why)
        pytest.skip(why)
    with Cluster(tmp_path_factory.mktemp("cluster"), broker, lost_worker_seconds=LOST_AFTER) as c:
        c.start_worker("w1")
        c.start_worker("w2")
        c.wait_ready()
        yield c


def _kill_when_step_starts(cluster: Cluster, step: str, killed: dict, timeout: float = 600) -> None:
    """Poll the instance for ``step`` starting in a running ``build_index`` run; kill its worker."""
    instance = cluster.instance()
    deadline = time.monotonic() + timeout
    started = [dg.DagsterRunStatus.STARTED]
    while time.monotonic() < deadline and not killed:
        for run in instance.get_runs(dg.RunsFilter(job_name="build_index", statuses=started)):
            host = step_workers(instance, run.run_id).get(step)
            if host:
                name = next(n for n, w in cluster.workers.items() if w.hostname == host)
                cluster.kill_worker(name)
                killed.update(name=name, host=host, run_id=run.run_id)
                return
        time.sleep(0.1)


def test_a_worker_killed_mid_step_loses_nothing_published(cluster: Cluster, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(SAMPLES, data)

    # The previous complete version, built and published on the workers.
    first = cluster.build(data, "--db", DB)
    assert first.returncode == 0, first.stdout + first.stderr
    with cluster.s3_env(tmp_path / "peek"):
        previous, _ = remote_version(cluster.artifacts, DB)
    assert previous

    # A docs edit: a new key. The worker that starts publishing it dies (writing and uploading the
    # version takes seconds: the kill lands in the middle of the step).
    notes = data / DB / "docs" / "accounts.md"
    notes.write_text(notes.read_text() + "\n- Accounts are reviewed by finance every quarter.\n")
    killed: dict = {}
    killer = threading.Thread(target=_kill_when_step_starts, args=(cluster, STEP, killed))
    killer.start()
    started = time.monotonic()
    failed = cluster.build(data, "--db", DB)
    killer.join()
    assert killed, f"{STEP} never started: {failed.stdout} {failed.stderr}"
    assert failed.returncode == 1, failed.stdout + failed.stderr
    row = next(ln for ln in failed.stdout.splitlines() if ln.startswith(DB))
    assert "FAILED" in row and killed["host"] in row and STEP in row, row
    assert time.monotonic() - started < 300  # failed by the watch, not by a timeout of this test

    instance = cluster.instance()
    run = instance.get_run_by_id(killed["run_id"])
    assert run is not None and run.status == dg.DagsterRunStatus.FAILURE
    with cluster.s3_env(tmp_path / "reader-after-kill"):
        current, files = remote_version(cluster.artifacts, DB)
        assert current == previous, "CURRENT moved although the run died"
        assert "manifest.json" in files
        Retriever.clear_cache()
        assert Retriever.open(DB, artifacts=cluster.artifacts).snapshot().key == previous
        Retriever.clear_cache()

    # A rerun completes on the worker still alive.
    survivor = next(w.hostname for n, w in cluster.workers.items() if n != killed["name"])
    rerun = cluster.build(data, "--db", DB)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    with cluster.s3_env(tmp_path / "reader-after-rerun"):
        current, _ = remote_version(cluster.artifacts, DB)
        assert current and current != previous
        Retriever.clear_cache()
        r = Retriever.open(DB, artifacts=cluster.artifacts)
        assert r.snapshot().key == current
        assert r.search("accounts reviewed by finance", top_k=5).metadata.tables_included
        Retriever.clear_cache()
    last = instance.get_runs(dg.RunsFilter(job_name="build_index"), limit=1)[0]
    assert last.status == dg.DagsterRunStatus.SUCCESS
    assert set(step_workers(instance, last.run_id).values()) == {survivor}
