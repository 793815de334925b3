"""Live datasources: snapshot SQLite, DuckDB and PostgreSQL catalogs into versioned schemas.

Public entry points (plain functions, so the Dagster sensor in ``pipelines/`` can call them):

- :func:`load_datasources` / :func:`get_datasource` read ``data/datasources.yaml``;
- :func:`snapshot_datasource` introspects one entry into a :class:`~schemarag.runtime.core.schema.Database`
  with ``schema_version`` and ``tenant`` set; :func:`fingerprint` hashes its structure;
- :func:`docs_init` writes ``<data>/<name>.json`` and merges ``<data>/<name>/docs/*.md``;
- :func:`latest_snapshot` reads the last written snapshot (authoritative for validation);
- :func:`find_datasource`, :func:`check_build_tenant`, :func:`authoritative_schema` decide which
  datasource and which schema a tenant's build or query means (``tenancy``).
"""

from __future__ import annotations

from schemarag.assets.lib.datasources.config import (
    DatasourceEntry,
    datasources_path,
    get_datasource,
    load_datasources,
)
from schemarag.assets.lib.datasources.docs_init import (
    DocsInitResult,
    docs_init,
    latest_snapshot,
    snapshot_changed,
)
from schemarag.assets.lib.datasources.snapshot import (
    SnapshotResult,
    fingerprint,
    make_version,
    snapshot_datasource,
    take_snapshot,
)
from schemarag.assets.lib.datasources.tenancy import authoritative_schema, check_build_tenant, find_datasource

__all__ = [
    "DatasourceEntry",
    "DocsInitResult",
    "SnapshotResult",
    "authoritative_schema",
    "check_build_tenant",
    "datasources_path",
    "docs_init",
    "find_datasource",
    "fingerprint",
    "get_datasource",
    "latest_snapshot",
    "load_datasources",
    "make_version",
    "snapshot_changed",
    "snapshot_datasource",
    "take_snapshot",
]
