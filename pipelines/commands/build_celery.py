"""``schemarag build --executor celery``: the options, and the hand-over to the Celery build.

Kept apart from :mod:`.build_cmd` so that module imports nothing of the ``celery`` extra: a
missing extra is one line naming ``schemarag[celery]`` before anything is imported.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from schemarag._extras import require_extra

EXECUTORS = ("multiprocess", "celery")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="multiprocess",
        help="where steps run: multiprocess (this machine; default) or celery (every step a task on a "
        "`schemarag worker`; needs --intermediates and s3:// artifacts: docs/scale-out.md)",
    )
    parser.add_argument(
        "--broker",
        default=None,
        help="with --executor celery: Celery broker URL (default: $SCHEMARAG_CELERY_BROKER, "
        "else redis://127.0.0.1:6379/0; workers must use the same)",
    )
    parser.add_argument(
        "--intermediates",
        default=None,
        metavar="S3_URI",
        help="with --executor celery: s3://bucket/prefix where steps hand values to each other "
        "(default: $SCHEMARAG_INTERMEDIATES); one prefix per run, deleted when it ends",
    )


def builder(args: argparse.Namespace) -> Callable[..., list]:
    """A function with :func:`~schemarag.pipelines.build.build_databases`' signature that builds
    on Celery workers with the options in ``args`` (checked here: the extra, --intermediates)."""
    require_extra("celery", "schemarag build --executor celery")
    from schemarag.pipelines.build import default_instance
    from schemarag.pipelines.celery_build import CelerySettings, build_with_celery

    settings = CelerySettings.from_env(args.intermediates, args.broker)

    def build(
        dbs: list[str],
        data: Path,
        artifacts: str | Path,
        *,
        progress: Callable[[str], None] | None,
        tenant: str | None,
        datasources: str | None,
        jobs: int,
        schema_partitions_from: int,
        embedding_model,
    ) -> list:
        from schemarag.assets.resources import IndexPaths

        paths = IndexPaths(
            data=str(data),
            artifacts=str(artifacts),
            tenant=tenant,
            datasources=str(datasources) if datasources else None,
        )
        instance = default_instance(str(artifacts), tenant)
        reports, _ = build_with_celery(
            dbs, paths, embedding_model, instance, settings, jobs, schema_partitions_from, progress
        )
        return reports

    return build
