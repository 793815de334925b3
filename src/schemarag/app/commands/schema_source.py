"""The schema a tenant-scoped command may use: one pinned index version, or nothing.

``generate`` and ``validate`` both need "the schema of database D for tenant T". Resolving it
in one place keeps tenancy a boundary rather than a convention:

* the schema, the pre-rendered DDL and (for generation) retrieval all come from one pinned
  index version inside the caller's namespace (``<artifacts>/_tenants/<T>/<D>`` for a tenant);
* a tenant-scoped call never falls back to the shared ``<data>/<D>.json``: a database of
  another tenant fails with the same "no published index" as one that does not exist;
* a call without a tenant falls back to ``<data>/<D>.json`` only when no index can be opened
  and that file belongs to no tenant.

Example:
    >>> src = resolve_schema("ecommerce", tenant=None)   # doctest: +SKIP
    >>> src.database.name, src.pinned.key                 # doctest: +SKIP
    ('ecommerce', '3f0c...')
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from schemarag.runtime.core.errors import InvalidNameError, SchemaFileError, SchemaragError
from schemarag.runtime.core.paths import artifacts_dir, data_dir, schema_path
from schemarag.runtime.core.schema import Database, load_schema
from schemarag.runtime.formatting import TableDDL
from schemarag.runtime.search.retriever import PinnedIndex, Retriever

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SchemaSource:
    """A database's schema and, when it came from an index, the pinned version it came from."""

    database: Database
    pinned: PinnedIndex | None = None
    open_error: SchemaragError | None = None  # why no index was used (file fallback only)

    @property
    def ddl(self) -> dict[str, TableDDL] | None:
        return self.pinned.ddl if self.pinned is not None else None


def resolve_schema(
    db: str,
    tenant: str | None = None,
    artifacts: str | Path | None = None,
    data: str | Path | None = None,
) -> SchemaSource:
    """The schema of ``db`` for ``tenant`` (see the module docstring for the rules)."""
    try:
        pinned = Retriever.open(db, artifacts_dir(artifacts), tenant=tenant).pin()
    except InvalidNameError:
        raise
    except SchemaragError as exc:
        if tenant is not None:
            raise  # a tenant is served from its own namespace only: never from a shared file
        return SchemaSource(_shared_schema(db, data, exc), open_error=exc)
    return SchemaSource(pinned.schema, pinned)


def _shared_schema(db: str, data: str | Path | None, open_error: SchemaragError) -> Database:
    path = schema_path(data_dir(data), db)
    try:
        database = load_schema(path)
    except SchemaFileError as schema_exc:
        raise SchemaFileError(f"{schema_exc}; and no usable index: {open_error}") from None
    if database.tenant is not None:
        raise open_error  # a tenant's snapshot is never served to a call without that tenant
    log.info("no usable index for %s (%s); using %s", db, open_error, path)
    return database
