"""``schemarag ui``: the Dagster UI (``dg dev``) on the instance ``schemarag build`` records into.

    schemarag ui [--host 127.0.0.1] [--port 3000] [--tenant T] [--artifacts DIR]

The instance is the one the build used (``$DAGSTER_HOME``, else ``.dagster/`` next to the
artifacts; a tenant's under ``.dagster/tenants/<tenant>/``), so the UI shows the runs of
``build_index``, one partition per database, the materializations with their metadata and the
asset-check results. ``SCHEMARAG_DATA`` / ``SCHEMARAG_ARTIFACTS`` are passed on, so runs
launched from the UI (or its schedule and sensors) build the same folders. Loopback by
default: the UI can launch runs, so exposing it is a deliberate ``--host 0.0.0.0``.

It runs Dagster's current dev command, ``dg dev`` (dagster-dg-cli, in the ``ui`` extra; ``dagster
dev`` is superseded), on our one code location by module name, so it works outside a dg project
folder. ``dg dev`` stops its webserver, daemon and code servers on SIGINT but ignores SIGTERM, so
``kill <ui pid>`` is forwarded to it as SIGINT.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from schemarag.pipelines.instance import dagster_home, ensure_home
from schemarag.runtime.artifact.remote import is_remote, local_artifacts
from schemarag.runtime.core.errors import MissingExtraError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import data_dir

log = logging.getLogger(__name__)

DEFINITIONS_MODULE = "schemarag.pipelines.definitions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    parser.add_argument("--port", type=int, default=3000, help="port of the UI (default 3000)")
    parser.add_argument("--tenant", default=None, help="open this tenant's instance instead")


def dg_executable() -> str:
    """The ``dg`` script of this interpreter's environment (else the first on PATH)."""
    beside = Path(sys.executable).with_name("dg")
    found = str(beside) if beside.is_file() else shutil.which("dg")
    if found is None:  # dagster_dg_cli importable but its script missing: a broken install
        raise MissingExtraError("schemarag ui: the `dg` command is missing; pip install 'schemarag[ui]'")
    return found


def command(host: str, port: int) -> list[str]:
    """``dg dev`` loading our one code location by module name (works outside the repo)."""
    return [dg_executable(), "dev", "-m", DEFINITIONS_MODULE, "-h", host, "-p", str(port)]


def run(args: argparse.Namespace) -> int:
    import dagster_dg_cli  # noqa: F401 - the `ui` extra; a missing one becomes a one-line hint
    import dagster_webserver  # noqa: F401

    tenant = check_name(args.tenant, "tenant") if args.tenant is not None else None
    raw = args.artifacts or os.environ.get("SCHEMARAG_ARTIFACTS")
    home = ensure_home(dagster_home(raw, tenant).absolute())
    artifacts = raw if is_remote(raw) else str(local_artifacts(raw).absolute())
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "SCHEMARAG_DATA": str(data_dir(args.data).absolute()),
        "SCHEMARAG_ARTIFACTS": artifacts,
        "DAGSTER_DISABLE_TELEMETRY": "yes",
    }
    print(f"Dagster UI on http://{args.host}:{args.port} (instance {home})", file=sys.stderr, flush=True)
    proc = subprocess.Popen(command(args.host, args.port), env=env)

    def forward(_signum: int, _frame: object) -> None:  # `kill <ui pid>` stops dg dev cleanly
        proc.send_signal(signal.SIGINT)  # dg dev ignores SIGTERM; SIGINT stops all its services

    signal.signal(signal.SIGTERM, forward)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached dg dev too (same process group); let it finish
        return proc.wait()
