"""Dagster's Celery executor plus a lost-worker watch: a step on a worker that died fails the run.

``dagster_celery``'s executor submits each step as a Celery task and polls its result. A worker
killed in the middle of a step (machine lost, OOM kill of the whole container) never writes a
result, and the run would wait for it forever (dagster-io/dagster#2336, #33493). Here the
submitted tasks are remembered; a thread pings the workers over the broker every few seconds,
and a task whose worker (the ``hostname`` Celery records when a task starts, with
``task_track_started``) has not answered for ``lost_worker_seconds`` is marked failed in the
result backend. The executor's loop then sees the failure and the run fails naming the worker
and the step; nothing was published by that step (``published_index`` moves ``CURRENT`` last),
and a rerun starts over on the workers still alive.

Everything else is ``dagster_celery.celery_executor``: same config keys (``broker``,
``backend``, ``include``, ``config_source``, ``retries``), plus ``lost_worker_seconds``.
Workers must run with ``task_track_started`` (:mod:`schemarag.pipelines.celery_app` sets it).
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from typing import Any

import dagster as dg
from celery.exceptions import DuplicateTaskNameWarning
from dagster import Field
from dagster._core.execution.retries import RetryMode
from dagster_celery.executor import CELERY_CONFIG, CeleryExecutor, _submit_task

log = logging.getLogger(__name__)

# dagster_celery registers its one task again for every step it submits (the same callable):
# Celery 5.7 warns each time, which is noise.
warnings.filterwarnings("ignore", category=DuplicateTaskNameWarning)

PING_SECONDS = 5.0
DEFAULT_LOST_WORKER_SECONDS = 60

CONFIG = {
    **CELERY_CONFIG,
    "lost_worker_seconds": Field(
        int,
        is_required=False,
        default_value=DEFAULT_LOST_WORKER_SECONDS,
        description="Fail a step whose Celery worker has not answered a ping for this many seconds.",
    ),
}


class LostWorkerWatch:
    """Remembers submitted tasks; fails those whose worker stopped answering (see module doc)."""

    def __init__(self, app_args: dict[str, Any], lost_after: float, ping_every: float = PING_SECONDS):
        self.app_args = app_args
        self.lost_after = lost_after
        self.ping_every = ping_every
        self.tasks: dict[str, str] = {}  # task id -> step key, until its result is in
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="lost-worker-watch", daemon=True)

    def submit(self, app, plan_context, step, queue, priority, known_state):
        """``dagster_celery``'s submission, remembering the task."""
        result = _submit_task(app, plan_context, step, queue, priority, known_state)
        with self.lock:
            self.tasks[result.id] = step.key
        return result

    def __enter__(self) -> LostWorkerWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=self.ping_every + 5)

    def _run(self) -> None:
        from dagster_celery.make_app import make_app

        app = make_app(self.app_args)  # its own broker connection: the executor's is not thread-safe
        silent_since: dict[str, float] = {}
        while not self.stop.wait(self.ping_every):
            try:
                self._sweep(app, silent_since)
            except Exception as exc:  # a broker hiccup: nothing can be concluded this round
                log.debug("lost-worker watch: %s", exc)

    def _sweep(self, app, silent_since: dict[str, float]) -> None:
        from celery.exceptions import WorkerLostError

        with self.lock:
            pending = dict(self.tasks)
        if not pending:
            return
        alive = {host for reply in app.control.ping(timeout=2.0) or [] for host in reply}
        now = time.monotonic()
        for host in alive:
            silent_since.pop(host, None)
        for task_id, step_key in pending.items():
            meta = app.backend.get_task_meta(task_id)
            status = meta.get("status")
            if status in ("SUCCESS", "FAILURE", "REVOKED"):
                with self.lock:
                    self.tasks.pop(task_id, None)
                continue
            info = meta.get("result")
            host = info.get("hostname") if status == "STARTED" and isinstance(info, dict) else None
            if not host or host in alive:
                continue
            silent = now - silent_since.setdefault(host, now)
            if silent >= self.lost_after:
                message = (
                    f"celery worker {host} stopped answering while running step {step_key} "
                    f"(silent {silent:.0f} s >= lost_worker_seconds {self.lost_after:g})"
                )
                log.warning("%s: failing its task", message)
                app.backend.mark_as_failure(task_id, WorkerLostError(message))
                with self.lock:
                    self.tasks.pop(task_id, None)


class WatchedCeleryExecutor(CeleryExecutor):
    def __init__(self, retries, lost_worker_seconds: float = DEFAULT_LOST_WORKER_SECONDS, **kwargs):
        super().__init__(retries=retries, **kwargs)
        self.lost_worker_seconds = lost_worker_seconds

    def execute(self, plan_context, execution_plan):
        from dagster_celery.core_execution_loop import core_celery_execution_loop

        with LostWorkerWatch(self.app_args(), self.lost_worker_seconds) as watch:
            yield from core_celery_execution_loop(
                plan_context, execution_plan, step_execution_fn=watch.submit
            )


@dg.executor(name="celery", config_schema=CONFIG, requirements=dg.multiple_process_executor_requirements())
def celery_executor(init_context) -> WatchedCeleryExecutor:
    """``dagster_celery.celery_executor`` with the lost-worker watch (module doc)."""
    cfg = init_context.executor_config
    return WatchedCeleryExecutor(
        retries=RetryMode.from_config(cfg["retries"]),
        broker=cfg.get("broker"),
        backend=cfg.get("backend"),
        config_source=cfg.get("config_source"),
        include=cfg.get("include"),
        lost_worker_seconds=cfg["lost_worker_seconds"],
    )
