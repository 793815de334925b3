# ruff: noqa: F811  (fixtures are imported from live_shop; see its docstring)
"""Live datasources end to end, against a real SQLite file, DuckDB file and PostgreSQL schema.

snapshot -> docs init -> build (the real Dagster graph) -> retrieve a sampled value -> prompt;
then: no change means no rebuild, a new column or a new FK means a new fingerprint and key.
"""

from __future__ import annotations

import json
from pathlib import Path

from live_shop import ADD_COLUMN_SQL, ADD_FK_SQL, LiveDB, live_db, pg_shop_schema, sqlite_shop  # noqa: F401

from schemarag.app.querygen import StrategyConfig, prepare_prompt
from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.lib.datasources import docs_init, get_datasource, snapshot_changed, take_snapshot
from schemarag.assets.lib.datasources.tenancy import authoritative_schema
from schemarag.cli import main as cli_main
from schemarag.pipelines.build import build_databases
from schemarag.runtime.artifact.chunk_model import make_chunk_id
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.paths import database_artifacts
from schemarag.runtime.search.retriever import Retriever


def top_titles(retriever: Retriever, question: str, k: int = 3) -> list[str]:
    result = retriever.search(question, top_k=k, relevance_threshold=0.0)
    return [sc.chunk.title for sc in result.chunks]


def opened(artifacts: Path) -> Retriever:
    """The tenant's retriever, switched to the published version now (a running service picks a
    new version up in the background; a test must not race that)."""
    retriever = Retriever.open("shop", artifacts, tenant="acme", refresh_seconds=0)
    retriever.refresh()
    return retriever


def build(data: Path, artifacts: Path, ds: Path):
    [report] = build_databases(["shop"], data, artifacts, datasources=ds)
    assert report.ok, report.error
    return report


def test_live_datasource_end_to_end(live_db: LiveDB, tmp_path: Path, capsys):
    ds = live_db.write_datasources()
    data, artifacts = tmp_path / "schemas", tmp_path / "artifacts"
    entry = get_datasource("shop", ds)

    snap = take_snapshot(entry)
    city = snap.database.table("schools").column("city")
    assert "Alameda" in city.sample_values
    assert "cancelled" in snap.database.table("orders").column("status").sample_values

    init = docs_init(entry, data)
    assert init.changed and init.tenant == "acme" and init.version.endswith(snap.fingerprint[:8])
    assert (data / "shop.json").is_file() and (data / "shop" / "docs" / "schools.md").is_file()

    first = build(data, artifacts, ds)
    root = database_artifacts(artifacts, "shop", "acme")
    assert first.built and first.tenant == "acme" and first.schema_version == init.version
    assert read_current(root) == first.key
    assert not (artifacts / "shop").exists()  # a live datasource never publishes outside its tenant

    # Chunk IDs embed the schema version: the same text under another version gets another ID.
    art = IndexArtifact.open(root / first.key)
    for c in art.all_chunks():
        assert c.chunk_id == make_chunk_id(f"shop@{init.version}", c.table, c.chunk_type, c.column, c.text)
        assert c.chunk_id != make_chunk_id("shop", c.table, c.chunk_type, c.column, c.text)

    # Value hints: a sampled literal points retrieval at the column holding it (case, typo tolerant).
    retriever = opened(artifacts)
    assert "schools.city" in top_titles(retriever, "schools in alameda")
    assert "orders.status" in top_titles(retriever, "orders with status canceled")

    # Prompt for the query generator, with retrieval and the authoritative (snapshot) schema.
    schema = authoritative_schema(retriever.schema, data)
    assert schema.schema_version == init.version
    prepared = prepare_prompt(
        "How many schools are in Alameda?",
        schema,
        retrieve=lambda q, k, t: retriever.search(q, top_k=k, relevance_threshold=t),
        use_retrieval=True,
        config=StrategyConfig(),
    )
    assert prepared.metadata["strategy"] == "rag" and "schools" in prepared.metadata["tables_included"]
    assert "schools" in prepared.messages[1]["content"]
    argv = [
        "generate",
        "--db",
        "shop",
        "--tenant",
        "acme",
        "--data",
        str(data),
        "--artifacts",
        str(artifacts),
    ]
    assert cli_main([*argv, "--prompt-only", "--json", "--use-retrieval", "schools in alameda"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["retrieval_metadata"]["artifact_key"] == first.key
    assert "schools" in out["retrieval_metadata"]["tables_included"]

    # No change: same fingerprint, same JSON, same key, nothing rebuilt.
    json_before = (data / "shop.json").read_bytes()
    assert snapshot_changed(entry, data)[0] is False
    again = build(data, artifacts, ds)
    assert not again.built and again.key == first.key and again.schema_version == init.version
    assert (data / "shop.json").read_bytes() == json_before

    # Add a column: new fingerprint, new version, new artifact, published.
    live_db.run(ADD_COLUMN_SQL)
    changed, snap2 = snapshot_changed(entry, data)
    assert changed and snap2.fingerprint != snap.fingerprint
    second = build(data, artifacts, ds)
    assert second.built and second.key != first.key and second.schema_version != init.version
    assert read_current(root) == second.key
    assert opened(artifacts).schema.table("customers").column("loyalty_tier") is not None

    # Add a foreign key (no new column): the fingerprint and the artifact change again.
    live_db.run(ADD_FK_SQL[live_db.kind])
    changed, snap3 = snapshot_changed(entry, data)
    assert changed and snap3.fingerprint != snap2.fingerprint
    third = build(data, artifacts, ds)
    assert third.built and third.key not in (first.key, second.key)
    schema = opened(artifacts).schema
    fk = schema.table("orders").column("school_id").foreign_key
    assert fk is not None and (fk.table, fk.column) == ("schools", "id")
    assert "schools" in schema.neighbours("orders")


def test_generate_validates_against_the_latest_snapshot(sqlite_shop: LiveDB, tmp_path: Path):
    """A column added after the build is known to validation before the next build."""
    from schemarag.app.querygen import validate_sql

    ds = sqlite_shop.write_datasources()
    data, artifacts = tmp_path / "schemas", tmp_path / "artifacts"
    entry = get_datasource("shop", ds)
    docs_init(entry, data)
    build(data, artifacts, ds)
    sqlite_shop.run(ADD_COLUMN_SQL)
    docs_init(entry, data)  # the snapshot moves on; the index does not (yet)
    indexed = opened(artifacts).schema
    sql = "SELECT loyalty_tier FROM customers"
    assert not validate_sql(sql, indexed).valid
    latest = authoritative_schema(indexed, data)
    assert latest.schema_version != indexed.schema_version
    assert validate_sql(sql, latest).valid
