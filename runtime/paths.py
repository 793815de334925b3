"""Where inputs and artifacts live, with defaults from the environment.

Layout (see README "Artifacts"):

- inputs: ``<data>/<db>.json`` and ``<data>/<db>/docs/*.md``
- artifacts: ``<artifacts>/<db>/<key>/`` and ``<artifacts>/<db>/CURRENT``; a tenant's live
  datasources under ``<artifacts>/_tenants/<tenant>/<db>/``. Names must pass
  :func:`schemarag.runtime.names.check_name`, and no valid name starts with ``_``, so the reserved
  ``_tenants`` and ``_cache`` folders never collide with a database.
"""

from __future__ import annotations

import os
from pathlib import Path

from schemarag.runtime.names import check_name

DEFAULT_DATA = "data/schemas"
DEFAULT_ARTIFACTS = "artifacts"


def data_dir(value: str | Path | None = None) -> Path:
    """``--data`` if given, else ``$SCHEMARAG_DATA``, else ``data/schemas``."""
    return Path(value or os.environ.get("SCHEMARAG_DATA") or DEFAULT_DATA)


def artifacts_dir(value: str | Path | None = None) -> Path:
    """``--artifacts`` if given, else ``$SCHEMARAG_ARTIFACTS``, else ``artifacts``."""
    return Path(value or os.environ.get("SCHEMARAG_ARTIFACTS") or DEFAULT_ARTIFACTS)


def schema_path(data: Path, db: str) -> Path:
    return data / f"{check_name(db, 'database')}.json"


def docs_dir(data: Path, db: str) -> Path:
    return data / check_name(db, "database") / "docs"


def database_artifacts(artifacts: Path, db: str, tenant: str | None = None) -> Path:
    """The folder holding every version of one database's index (and its CURRENT)."""
    check_name(db, "database")
    if tenant is None:
        return artifacts / db
    return artifacts / "_tenants" / check_name(tenant, "tenant") / db


def embedding_cache_dir(artifacts: Path) -> Path:
    return artifacts / "_cache" / "embeddings"


def list_databases(data: Path) -> list[str]:
    """Every ``<db>.json`` in ``data`` whose stem is a valid name, sorted."""
    if not data.is_dir():
        return []
    out = []
    for p in sorted(data.glob("*.json")):
        try:
            out.append(check_name(p.stem, "database"))
        except ValueError:
            continue
    return out
