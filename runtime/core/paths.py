"""Where inputs and artifacts live, with defaults from the environment.

Layout (see README "Artifacts"):

- inputs: ``<data>/<db>.json`` and ``<data>/<db>/docs/*.md``; an imported query history in
  ``<data>/<db>/history/`` (a tenant's: ``<data>/_tenants/<tenant>/<db>/history/``)
- artifacts: ``<artifacts>/<db>/<key>/`` and ``<artifacts>/<db>/CURRENT``; a tenant's live
  datasources under ``<artifacts>/_tenants/<tenant>/<db>/``. Names must pass
  :func:`schemarag.runtime.core.names.check_name`, which refuses the reserved ``_tenants`` and
  ``_cache`` (a warehouse name such as ``_1000_GENOMES`` is fine), so they never collide with a database.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from schemarag.runtime.core.config import runtime_settings
from schemarag.runtime.core.names import check_name, is_reserved

DEFAULT_DATA = "data/schemas"
DEFAULT_ARTIFACTS = "artifacts"


def data_dir(value: str | Path | None = None) -> Path:
    """``--data`` if given, else ``$SCHEMARAG_DATA``, else ``data/schemas``."""
    return Path(value or runtime_settings().schemarag_data or DEFAULT_DATA)


def artifacts_dir(value: str | Path | None = None) -> Path:
    """``--artifacts`` if given, else ``$SCHEMARAG_ARTIFACTS``, else ``artifacts``."""
    return Path(value or runtime_settings().schemarag_artifacts or DEFAULT_ARTIFACTS)


def schema_path(data: Path, db: str) -> Path:
    return data / f"{check_name(db, 'database')}.json"


def docs_dir(data: Path, db: str) -> Path:
    return data / check_name(db, "database") / "docs"


def history_dir(data: Path, db: str, tenant: str | None = None) -> Path:
    """The stored query history of ``db`` (for ``tenant``), beside its schema (docs/query-history.md).

    >>> history_dir(Path("data/schemas"), "shop").as_posix()
    'data/schemas/shop/history'
    >>> history_dir(Path("data/schemas"), "shop", "acme").as_posix()
    'data/schemas/_tenants/acme/shop/history'
    """
    check_name(db, "database")
    if tenant is None:
        return data / db / "history"
    return data / "_tenants" / check_name(tenant, "tenant") / db / "history"


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


def did_you_mean(value: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate (difflib), else ``""``.

    Case-insensitive, so ``ECOMERCE`` still finds ``ecommerce``.

    >>> did_you_mean("ecomerce", ["b2b_saas", "ecommerce"])
    "; did you mean 'ecommerce'?"
    >>> did_you_mean("zzz", ["ecommerce"])
    ''
    """
    by_lower = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(str(value).lower(), list(by_lower), n=1, cutoff=0.6)
    return f"; did you mean {by_lower[match[0]]!r}?" if match else ""


def _published(folder: Path) -> list[str]:
    """Database folders under ``folder`` that hold a ``CURRENT`` pointer (reserved names skipped)."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if not is_reserved(p.name) and (p / "CURRENT").is_file())


def published_databases(artifacts: Path, tenant: str | None = None) -> list[str]:
    """Databases with a published index: the default namespace, or one tenant's folder."""
    if tenant is None:
        return _published(artifacts)
    return _published(artifacts / "_tenants" / check_name(tenant, "tenant"))


def tenants(artifacts: Path) -> list[str]:
    """Tenant folders under ``<artifacts>/_tenants`` (valid names only), sorted."""
    root = artifacts / "_tenants"
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.iterdir()):
        try:
            if p.is_dir():
                out.append(check_name(p.name, "tenant"))
        except ValueError:
            continue
    return out


def tenants_publishing(artifacts: Path, db: str) -> list[str]:
    """Tenants under which ``db`` has a published index (for "add --tenant T" hints).

    For the local CLI only: a server must never tell one caller which tenants exist.
    """
    return [t for t in tenants(artifacts) if (artifacts / "_tenants" / t / db / "CURRENT").is_file()]
