"""Shared fixtures: a real PostgreSQL schema per test module, and datasource entries.

PostgreSQL tests skip with a reason when the server is unreachable, except in CI (CI=true),
where an unreachable server is a failure: CI must exercise the real adapter.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemarag.assets.lib.datasources.config import parse_datasources

PG_ADMIN_DSN = os.environ.get("SCHEMARAG_TEST_PG_DSN", "postgresql://127.0.0.1:5432/test")


@pytest.fixture
def make_entry(tmp_path: Path):
    """Build one validated entry, as if read from ``tmp_path/datasources.yaml``."""

    def make(**fields: object):
        data = {"name": "ds", "tenant": "acme", **fields}
        return parse_datasources({"datasources": [data]}, tmp_path / "datasources.yaml")[0]

    return make


def _admin_connect():
    import psycopg

    try:
        return psycopg.connect(PG_ADMIN_DSN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        reason = f"PostgreSQL not reachable at {PG_ADMIN_DSN}: {str(exc).strip()}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)")
        pytest.skip(reason)


@pytest.fixture
def pg_admin() -> Iterator[object]:
    conn = _admin_connect()
    yield conn
    conn.close()


@pytest.fixture
def pg_schema(pg_admin) -> Iterator[str]:
    """A uniquely named, empty schema in database ``test``; dropped (with its roles) afterwards."""
    name = f"srag_{uuid.uuid4().hex[:10]}"
    pg_admin.execute(f'CREATE SCHEMA "{name}"')
    yield name
    pg_admin.execute(f'DROP SCHEMA "{name}" CASCADE')
