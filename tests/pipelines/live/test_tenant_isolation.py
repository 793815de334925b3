"""Tenants: two tenants' ``shop`` live side by side; a query for one never sees the other's chunks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import dagster as dg
import pytest
import yaml

from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.lib.datasources import docs_init, get_datasource
from schemarag.cli import main as cli_main
from schemarag.pipelines.build import build_databases
from schemarag.runtime.api import retrieve
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.errors import ArtifactNotFoundError, InvalidNameError
from schemarag.runtime.core.paths import database_artifacts
from schemarag.runtime.search.retriever import Retriever

REPO = Path(__file__).resolve().parents[3]
TENANT_SQL = {
    "acme": "CREATE TABLE schools (id INTEGER PRIMARY KEY, city TEXT);"
    "INSERT INTO schools VALUES (1, 'Alameda'), (2, 'Oakland');",
    "globex": "CREATE TABLE invoices (id INTEGER PRIMARY KEY, status TEXT, amount REAL);"
    "INSERT INTO invoices VALUES (1, 'overdue', 5.0), (2, 'paid', 7.0);",
}
QUESTIONS = ["schools in alameda", "overdue invoices", "invoice amount", "status paid", "shop", "city"]


def tenant_setup(tmp_path: Path, tenant: str) -> tuple[Path, Path]:
    """A tenant's own live SQLite ``shop``, datasources file and data folder (docs initialised)."""
    folder = tmp_path / tenant
    folder.mkdir()
    conn = sqlite3.connect(folder / "shop.sqlite")
    conn.executescript(TENANT_SQL[tenant])
    conn.close()
    ds = folder / "datasources.yaml"
    entry = {"name": "shop", "kind": "sqlite", "tenant": tenant, "connection": "shop.sqlite"}
    ds.write_text(yaml.safe_dump({"datasources": [entry]}), encoding="utf-8")
    data = folder / "schemas"
    docs_init(get_datasource("shop", ds), data)
    return data, ds


@pytest.fixture(scope="module")
def two_tenants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """acme and globex both publish a ``shop`` into one artifacts folder, in one Dagster instance."""
    tmp = tmp_path_factory.mktemp("tenants")
    artifacts = tmp / "artifacts"
    instance = dg.DagsterInstance.ephemeral()
    for tenant in ("acme", "globex"):
        data, ds = tenant_setup(tmp, tenant)
        [report] = build_databases(
            ["shop"], data, artifacts, instance=instance, tenant=tenant, datasources=ds
        )
        assert report.ok and report.built and report.tenant == tenant, report.error
    runs = instance.get_runs()
    assert sorted(r.tags.get("schemarag/tenant") for r in runs) == ["acme", "globex"]
    assert {r.tags.get("dagster/partition") for r in runs} == {"shop"}
    return artifacts


def chunk_ids(artifacts: Path, tenant: str) -> set[str]:
    root = database_artifacts(artifacts, "shop", tenant)
    return {c.chunk_id for c in IndexArtifact.open(root / read_current(root)).all_chunks()}


def test_same_database_name_builds_into_separate_tenant_folders(two_tenants: Path):
    acme, globex = chunk_ids(two_tenants, "acme"), chunk_ids(two_tenants, "globex")
    assert acme and globex and not acme & globex
    assert not (two_tenants / "shop").exists()
    for tenant, table in (("acme", "schools"), ("globex", "invoices")):
        schema = Retriever.open("shop", two_tenants, tenant=tenant).schema
        assert schema.tenant == tenant and [t.name for t in schema.tables] == [table]


def test_a_query_for_one_tenant_never_returns_another_tenants_chunk(two_tenants: Path):
    for tenant, other in (("acme", "globex"), ("globex", "acme")):
        own, foreign = chunk_ids(two_tenants, tenant), chunk_ids(two_tenants, other)
        for question in QUESTIONS:
            rows = retrieve(question, top_k=50, database="shop", artifacts=two_tenants, tenant=tenant)
            rows += [
                {"chunk_id": sc.chunk.chunk_id}
                for sc in Retriever.open("shop", two_tenants, tenant=tenant)
                .search(question, top_k=50, relevance_threshold=0.0)
                .chunks
            ]
            ids = {r["chunk_id"] for r in rows}
            assert ids <= own and not ids & foreign, (tenant, question)


def test_untenanted_lookup_does_not_reach_tenant_artifacts(two_tenants: Path):
    with pytest.raises(ArtifactNotFoundError):
        Retriever.open("shop", two_tenants)


@pytest.mark.parametrize(
    ("db", "tenant"),
    [
        ("shop", "../globex"),
        ("shop", "acme/../globex"),
        ("shop", "acme\x00"),
        ("shop", ".."),
        ("../_tenants/globex/shop", "acme"),
        ("shop/../../_tenants/globex/shop", None),
        ("_tenants", None),
    ],
)
def test_path_traversal_names_are_rejected(two_tenants: Path, db: str, tenant: str | None):
    with pytest.raises(InvalidNameError):
        Retriever.open(db, two_tenants, tenant=tenant)
    with pytest.raises(InvalidNameError):
        retrieve("schools", database=db, artifacts=two_tenants, tenant=tenant)


def test_building_a_schema_for_another_tenant_is_refused(tmp_path: Path, capsys):
    """acme's snapshot cannot be published under globex, even if asked to."""
    data, ds = tenant_setup(tmp_path, "acme")
    artifacts = tmp_path / "artifacts"
    [report] = build_databases(["shop"], data, artifacts, tenant="globex", datasources=ds)
    assert not report.ok and "belongs to tenant 'acme'" in report.error
    where = ["--data", str(data), "--artifacts", str(artifacts), "--datasources", str(ds)]
    assert cli_main(["build", "--db", "shop", "--tenant", "globex", *where]) == 1
    assert "belongs to tenant 'acme'" in capsys.readouterr().out
    assert not (artifacts / "_tenants" / "globex").exists()


def test_cli_build_tenant_for_a_static_schema(tmp_path: Path, capsys):
    artifacts = tmp_path / "artifacts"
    where = ["--data", str(REPO / "data" / "schemas"), "--artifacts", str(artifacts)]
    assert cli_main(["build", "--db", "ecommerce", "--tenant", "t1", *where]) == 0
    assert "tenant=t1" in capsys.readouterr().out
    root = database_artifacts(artifacts, "ecommerce", "t1")
    assert read_current(root) and not (artifacts / "ecommerce").exists()
    assert retrieve("orders", database="ecommerce", artifacts=artifacts, tenant="t1")
    with pytest.raises(ArtifactNotFoundError):
        retrieve("orders", database="ecommerce", artifacts=artifacts, tenant="t2")
