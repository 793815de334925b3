"""``schemarag worker``: a Celery worker for ``schemarag build --executor celery`` runs.

    schemarag worker [--name NAME] [--broker URL] [--queue Q] [--concurrency N] [--model M] [--check]

Before it takes any task the machine is checked, and what is missing is one line (exit 2): the
embedding model's files (a worker embeds with the model the run names), S3 credentials (steps
hand values over in S3 and publish there) and the broker. Then the process becomes
``celery -A schemarag.pipelines.celery_app worker`` (dagster-celery's step task), listening on
``--queue`` (default ``$SCHEMARAG_CELERY_QUEUE``, else ``dagster``), one step at a time by
default. Its local working copy and embedding cache live under ``$SCHEMARAG_CACHE_DIR``.
"""

from __future__ import annotations

import argparse
import os
import sys

from schemarag._extras import require_extra
from schemarag.runtime.core.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--name", default=None, help="worker name (default: celery's, from the host name)")
    parser.add_argument(
        "--broker",
        default=None,
        help="Celery broker URL (default: $SCHEMARAG_CELERY_BROKER, else redis://127.0.0.1:6379/0)",
    )
    parser.add_argument(
        "--queue",
        default=None,
        help="queue to take steps from (default: $SCHEMARAG_CELERY_QUEUE, else dagster)",
    )
    parser.add_argument("--concurrency", type=int, default=1, help="steps at once (default 1)")
    parser.add_argument(
        "--model",
        default=None,
        help="embedding model whose files must be here (default: the build's default)",
    )
    parser.add_argument("--loglevel", default="INFO", help="celery log level (default INFO)")
    parser.add_argument("--check", action="store_true", help="only check this machine, then exit")


def check_model(model: str | None) -> str:
    """The model's files are here (checksummed, not loaded); its name."""
    from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec

    return str(Embedder.get(ModelSpec(name=model)).spec.name)


def check_s3_credentials() -> None:
    """Some AWS credential source is configured (variables, profile, container or instance role)."""
    import boto3

    if boto3.Session().get_credentials() is None:
        raise ConfigError(
            "no S3 credentials on this worker: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an "
            "AWS profile or instance role); steps exchange values and publish artifacts through S3"
        )


def check_broker(url: str) -> None:
    from kombu import Connection

    try:
        with Connection(url, connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:
        raise ConfigError(f"cannot reach the Celery broker {url}: {exc}; start it or pass --broker") from None


def run(args: argparse.Namespace) -> int:
    require_extra("celery", "schemarag worker")
    if args.broker:
        os.environ["SCHEMARAG_CELERY_BROKER"] = args.broker
    if args.queue:
        os.environ["SCHEMARAG_CELERY_QUEUE"] = args.queue
    from schemarag.pipelines.celery_app import broker_url, queue_name

    model = check_model(args.model)
    check_s3_credentials()
    check_broker(broker_url())
    if args.concurrency < 1:
        raise ConfigError(f"--concurrency {args.concurrency}: must be at least 1")
    if not args.quiet:
        print(
            f"worker ready: model {model}, broker {broker_url()}, queue {queue_name()}, "
            f"{args.concurrency} step(s) at once",
            file=sys.stderr,
            flush=True,
        )
    if args.check:
        return 0
    argv = [sys.executable, "-m", "celery", "-A", "schemarag.pipelines.celery_app", "worker"]
    argv += ["-Q", queue_name(), "-c", str(args.concurrency), "--prefetch-multiplier", "1"]
    argv += ["--loglevel", args.loglevel]
    if args.name:
        argv += ["-n", f"{args.name}@%h"]
    sys.stdout.flush()
    os.execv(sys.executable, argv)  # the worker is this process from now on (signals reach Celery)
    return 0  # pragma: no cover
