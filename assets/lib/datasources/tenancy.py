"""Which live datasource a build or a query means, and which schema is authoritative for it.

A database name alone is ambiguous once tenants exist: two tenants may both have a ``shop``.
These helpers are the one place that decides, so the Dagster asset, ``schemarag build`` and
``schemarag generate`` agree:

- :func:`find_datasource` maps a database name (and the tenant being built) to its entry in
  the datasources file, or None for a static ``<db>.json``; an entry of another tenant is never
  returned, so building tenant B can never snapshot tenant A's database into B's data folder.
- :func:`check_build_tenant` refuses to build a schema whose ``tenant`` field names another
  tenant than ``--tenant``, so one tenant's snapshot cannot be published under another's folder.
- :func:`authoritative_schema` picks the newest snapshot over the (possibly older) artifact
  schema for SQL validation.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "shop", "tenant": "acme",
    ...     "tables": [{"name": "t", "columns": [{"name": "a"}]}]})
    >>> check_build_tenant(db, "acme").name
    'shop'
    >>> check_build_tenant(db, "globex")
    Traceback (most recent call last):
    ...
    schemarag.runtime.core.errors.ConfigError: database 'shop' belongs to tenant 'acme' ...
"""

from __future__ import annotations

import logging
from pathlib import Path

from schemarag.assets.lib.datasources.config import DatasourceEntry, datasources_path, load_datasources
from schemarag.assets.lib.datasources.docs_init import latest_snapshot
from schemarag.runtime.core.errors import ConfigError, SchemaragError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.schema import Database

log = logging.getLogger(__name__)


def find_datasource(
    db: str, path: str | Path | None = None, tenant: str | None = None
) -> DatasourceEntry | None:
    """The configured datasource called ``db`` (for ``tenant`` when given), else None.

    A missing datasources file means "no live datasources" (None); an invalid one raises
    :class:`ConfigError`, because silently building a live database from a stale JSON would
    hide the broken configuration.
    """
    check_name(db, "database")
    if not datasources_path(path).is_file():
        return None
    for entry in load_datasources(path):
        if entry.name.lower() != db.lower():
            continue
        if tenant is not None and entry.tenant != tenant:
            log.warning(
                "datasource %r belongs to tenant %r, not %r; building the static schema file instead",
                entry.name,
                entry.tenant,
                tenant,
            )
            return None
        return entry
    return None


def check_build_tenant(database: Database, tenant: str | None) -> Database:
    """Raise when ``--tenant`` contradicts the schema's own ``tenant`` field."""
    if tenant is not None and database.tenant is not None and database.tenant != tenant:
        raise ConfigError(
            f"database {database.name!r} belongs to tenant {database.tenant!r} (its schema file's "
            f"'tenant' field), not {tenant!r}; pass --tenant {database.tenant} or use that tenant's --data"
        )
    return database


def authoritative_schema(indexed: Database, data: Path) -> Database:
    """The schema SQL is validated against: the latest snapshot for a live datasource.

    The artifact's schema is what the index was built from; a snapshot taken since (a column
    added, a table dropped) is newer and is what the database really has now. Static schemas
    (no ``schema_version``) and snapshots of another tenant are left alone.
    """
    if indexed.schema_version is None:
        return indexed
    try:
        snap = latest_snapshot(data, indexed.name)
    except SchemaragError as exc:
        log.warning("latest snapshot of %r unreadable, validating against the index: %s", indexed.name, exc)
        return indexed
    if snap is None or snap.schema_version is None or snap.tenant != indexed.tenant:
        return indexed
    if snap.schema_version != indexed.schema_version:
        log.info(
            "validating %s against snapshot %s (index built from %s)",
            indexed.name,
            snap.schema_version,
            indexed.schema_version,
        )
    return snap
