"""The Celery app a build worker runs: ``celery -A schemarag.pipelines.celery_app worker``.

``schemarag worker`` starts it after checking the machine (:mod:`.commands.worker_cmd`). It is
``dagster_celery``'s app (the ``execute_plan`` task that runs one Dagster step) configured from
the environment instead of a YAML file in ``$DAGSTER_HOME``: ``$SCHEMARAG_CELERY_BROKER``,
``$SCHEMARAG_CELERY_BACKEND`` (default: the broker) and ``$SCHEMARAG_CELERY_QUEUE`` (default
``dagster``), with the settings the executor shares (:func:`celery_settings`).
"""

from __future__ import annotations

import os

from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from schemarag.pipelines.celery_definitions import DEFAULT_QUEUE, celery_settings

DEFAULT_BROKER = "redis://127.0.0.1:6379/0"


def broker_url(env: os._Environ[str] | dict[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("SCHEMARAG_CELERY_BROKER") or DEFAULT_BROKER


def backend_url(env: os._Environ[str] | dict[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("SCHEMARAG_CELERY_BACKEND") or broker_url(env)


def queue_name(env: os._Environ[str] | dict[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("SCHEMARAG_CELERY_QUEUE") or DEFAULT_QUEUE


app = make_app(
    CeleryExecutor.for_cli(
        broker=broker_url(), backend=backend_url(), config_source=celery_settings(queue_name())
    ).app_args()
)
execute_plan = create_task(app)
