# ruff: noqa: F811  (fixtures are imported from live_shop; see its docstring)
"""Broken datasources fail the build with errors naming the datasource, and leave what was published alone."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from live_shop import LiveDB, pg_shop_schema, sqlite_shop  # noqa: F401

from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.lib.datasources import docs_init, get_datasource
from schemarag.cli import main as cli_main
from schemarag.pipelines.build import build_databases
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.paths import database_artifacts
from schemarag.runtime.search.retriever import Retriever


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


class Published:
    """A successfully built live datasource, to check that failures leave it exactly as it was."""

    def __init__(self, live: LiveDB, tmp_path: Path) -> None:
        self.live, self.data, self.artifacts = live, tmp_path / "schemas", tmp_path / "artifacts"
        self.ds = live.write_datasources()
        docs_init(get_datasource("shop", self.ds), self.data)
        [report] = build_databases(["shop"], self.data, self.artifacts, datasources=self.ds)
        assert report.ok, report.error
        self.key = report.key
        self.root = database_artifacts(self.artifacts, "shop", "acme")
        self.data_before = tree(self.data)
        self.root_before = sorted(p.name for p in self.root.iterdir())

    def fail_with(self, **overrides: object) -> str:
        """Rebuild with a broken datasources entry; return the build's error."""
        ds = self.live.write_datasources(self.live.folder / "broken.yaml", **overrides)
        [report] = build_databases(["shop"], self.data, self.artifacts, datasources=ds)
        assert not report.ok
        self.assert_undisturbed()
        return report.error

    def assert_undisturbed(self) -> None:
        assert read_current(self.root) == self.key
        assert sorted(p.name for p in self.root.iterdir()) == self.root_before
        assert IndexArtifact.open(self.root / self.key).n_chunks > 0
        assert tree(self.data) == self.data_before
        hits = Retriever.open("shop", self.artifacts, tenant="acme", refresh_seconds=0).search("schools")
        assert hits.metadata.artifact_key == self.key


@pytest.fixture
def published(sqlite_shop: LiveDB, tmp_path: Path) -> Published:
    return Published(sqlite_shop, tmp_path)


def test_bad_connection_string(published: Published):
    err = published.fail_with(kind="postgres", connection="not a dsn === password=hunter2")
    assert "datasource 'shop'" in err and "invalid connection string" in err and "hunter2" not in err


def test_refused_connection(published: Published, closed_port: int):
    err = published.fail_with(kind="postgres", connection=f"postgresql://app:pw@127.0.0.1:{closed_port}/x")
    assert "datasource 'shop'" in err and "refused" in err.lower() and ":pw@" not in err


def test_server_that_drops_the_connection(published: Published, dropping_server: int):
    err = published.fail_with(kind="postgres", connection=f"postgresql://127.0.0.1:{dropping_server}/test")
    assert "datasource 'shop'" in err and "closed the connection" in err


def test_missing_database_file(published: Published):
    err = published.fail_with(connection=str(published.live.folder / "gone.sqlite"))
    assert "datasource 'shop'" in err and "gone.sqlite does not exist" in err


def test_cli_build_reports_the_failure_and_exits_1(published: Published, capsys):
    ds = published.live.write_datasources(published.live.folder / "broken.yaml", connection="gone.sqlite")
    where = ["--data", str(published.data), "--artifacts", str(published.artifacts)]
    assert cli_main(["build", "--db", "shop", "--datasources", str(ds), *where]) == 1
    out = capsys.readouterr().out
    assert "shop" in out and "FAILED" in out and "datasource 'shop'" in out
    published.assert_undisturbed()


@pytest.mark.postgres
def test_permission_denied_table(pg_shop_schema, tmp_path: Path):
    from live_shop import PG_DSN, make_postgres
    from psycopg.conninfo import make_conninfo

    conn, schema = pg_shop_schema
    folder = tmp_path / "live"
    folder.mkdir()
    pub = Published(make_postgres(folder, conn, schema), tmp_path)
    role = f"srag_ro_{uuid.uuid4().hex[:8]}"
    conn.execute(f'CREATE ROLE "{role}" LOGIN')
    try:
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
        conn.execute(f'GRANT SELECT ON "{schema}".schools, "{schema}".customers TO "{role}"')
        err = pub.fail_with(connection=make_conninfo(PG_DSN, user=role))
        assert "datasource 'shop'" in err and "permission denied" in err and "orders" in err
    finally:
        conn.execute(f'DROP OWNED BY "{role}"')
        conn.execute(f'DROP ROLE "{role}"')
