"""Which Dagster instance a build records its runs in, so ``schemarag ui`` shows what was built.

``$DAGSTER_HOME`` wins when set (the operator chose one instance for everything). Otherwise the
home is ``.dagster/`` next to the artifacts folder (``artifacts/`` -> ``./.dagster/``), created
on first use with a minimal ``dagster.yaml``; a tenant's builds go to their own home under
``.dagster/tenants/<tenant>/``, so one tenant's run logs (paths, table counts, warnings quoting
its docs) never show in another tenant's UI. Remote artifacts (``s3://...``) keep the home next
to their local working copy (see :func:`schemarag.runtime.artifact.remote.local_artifacts`).

>>> dagster_home("/srv/idx/artifacts", env={}).as_posix()
'/srv/idx/.dagster'
>>> dagster_home("/srv/idx/artifacts", tenant="acme", env={}).as_posix()
'/srv/idx/.dagster/tenants/acme'
>>> dagster_home("/srv/idx/artifacts", tenant="acme", env={"DAGSTER_HOME": "/var/dagster"}).as_posix()
'/var/dagster'
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from schemarag.runtime.artifact.remote import local_artifacts
from schemarag.runtime.core.names import check_name

log = logging.getLogger(__name__)

HOME_DIR = ".dagster"
TENANTS_DIR = "tenants"
# The smallest useful instance config: local SQLite storage (Dagster's default) in the home
# folder, no telemetry from a build tool that may run offline, and no raw stdout/stderr capture
# (it starts two `tail` processes per step; our steps log through context.log, which is kept).
DAGSTER_YAML = """\
# Written by `schemarag build`: the local Dagster instance `schemarag ui` shows.
# Storage defaults to SQLite files in this folder. See docs/dagster-ui.md.
telemetry:
  enabled: false
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
"""


def dagster_home(
    artifacts: str | Path | None, tenant: str | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The instance folder for builds into ``artifacts`` (for ``tenant``): see the module doc."""
    env = os.environ if env is None else env
    if env.get("DAGSTER_HOME"):
        return Path(env["DAGSTER_HOME"])
    home = local_artifacts(artifacts, env=env).absolute().parent / HOME_DIR
    return home / TENANTS_DIR / check_name(tenant, "tenant") if tenant is not None else home


def ensure_home(home: Path) -> Path:
    """Create ``home`` with a minimal ``dagster.yaml`` unless it already has one."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML, encoding="utf-8")
        log.info("created Dagster instance at %s", home)
    return home


def open_instance(home: Path):
    """The persistent instance stored in ``home`` (created if needed)."""
    import dagster as dg

    return dg.DagsterInstance.from_config(str(ensure_home(home)))
