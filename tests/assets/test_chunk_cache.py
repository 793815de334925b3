"""schemarag.assets.lib.chunk_cache: an unchanged doc is replayed, never re-parsed, and the chunks
are exactly those of an uncached run; anything a doc's chunks depend on invalidates its entry."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from schemarag.assets.lib.chunk_cache import ChunkCache, chunk_cache_path, context_fingerprint
from schemarag.assets.lib.chunking import ChunkingConfig, ChunkSet, chunk_database
from schemarag.runtime.core.schema import Database, parse_schema

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "schemas"


def _load(db: str) -> tuple[dict, dict[str, str]]:
    schema = json.loads((DATA / f"{db}.json").read_text(encoding="utf-8"))
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted((DATA / db / "docs").glob("*.md"))}
    return schema, docs


def _chunk(
    db: Database, docs: dict[str, str], path: Path | None, config: ChunkingConfig | None = None
) -> ChunkSet:
    if path is None:
        return chunk_database(db, docs, config, docs_label="docs")
    with ChunkCache(path) as cache:
        return chunk_database(db, docs, config, docs_label="docs", cache=cache)


@pytest.fixture
def ecommerce() -> tuple[dict, dict[str, str]]:
    return _load("ecommerce")


def test_edit_one_doc_reparses_only_that_file(tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]) -> None:
    schema, docs = ecommerce
    db = parse_schema(schema)
    cache = tmp_path / "shop.sqlite"
    first = _chunk(db, docs, cache)
    assert first.parsed == sorted(docs)  # an empty cache parses everything
    assert first.chunks == _chunk(db, docs, None).chunks

    again = _chunk(db, docs, cache)
    assert again.parsed == ["_index.md"]  # the database doc is never cached: one small file
    assert again.chunks == first.chunks

    docs["orders.md"] += "\n## Notes\nRefunded orders keep their original total.\n"
    edited = _chunk(db, docs, cache)
    assert edited.parsed == ["_index.md", "orders.md"]
    assert edited.chunks == _chunk(db, docs, None).chunks
    assert any("keep their original total" in c.text for c in edited.chunks)
    assert edited.doc_files == first.doc_files


def test_cache_key_changes_with_the_chunking_config(
    tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]
) -> None:
    schema, docs = ecommerce
    db = parse_schema(schema)
    narrow = ChunkingConfig(max_sample_values=2)
    assert context_fingerprint(db, ChunkingConfig().to_json(), "docs") != context_fingerprint(
        db, narrow.to_json(), "docs"
    )
    cache = tmp_path / "shop.sqlite"
    _chunk(db, docs, cache)
    other = _chunk(db, docs, cache, narrow)
    assert other.parsed == sorted(docs)  # nothing made under the old config is replayed
    assert other.chunks == _chunk(db, docs, None, narrow).chunks


def test_docs_label_is_part_of_the_key(tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]) -> None:
    """A moved docs folder re-parses (messages name the folder), and ``source_path`` names the
    file relative to the docs folder either way: answers never carry the build's local path."""
    schema, docs = ecommerce
    db = parse_schema(schema)
    with ChunkCache(tmp_path / "c.sqlite") as cache:
        before = chunk_database(db, docs, docs_label="/home/dev/old/docs", cache=cache)
        moved = chunk_database(db, docs, docs_label="/home/dev/new/docs", cache=cache)
    assert moved.parsed == sorted(docs)
    assert {c.source_path for c in moved.chunks if c.source_path} <= set(docs)
    assert moved.chunks == before.chunks


def test_a_new_foreign_key_reparses_the_tables_it_touches(
    tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]
) -> None:
    """A doc's chunks list the table's FK neighbours: a new neighbour invalidates its entry."""
    schema, docs = ecommerce
    cache = tmp_path / "shop.sqlite"
    _chunk(parse_schema(schema), docs, cache)
    products = next(t for t in schema["tables"] if t["name"] == "products")
    products["columns"].append(
        {"name": "buyer_id", "type": "INTEGER", "foreign_key": {"table": "users", "column": "id"}}
    )
    db = parse_schema(schema)
    result = _chunk(db, docs, cache)
    assert result.parsed == ["_index.md", "products.md", "users.md"]
    assert result.chunks == _chunk(db, docs, None).chunks
    assert any("products" in c.related_tables for c in result.chunks if c.table == "users")


def test_a_new_table_reparses_every_doc(tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]) -> None:
    """Doc text that mentions a table name relates its chunk to that table, so the set of
    table names is part of every entry's key."""
    schema, docs = ecommerce
    cache = tmp_path / "shop.sqlite"
    _chunk(parse_schema(schema), docs, cache)
    schema["tables"].append({"name": "shipping", "columns": [{"name": "id", "type": "INTEGER"}]})
    db = parse_schema(schema)
    result = _chunk(db, docs, cache)
    assert result.parsed == sorted(docs)
    assert result.chunks == _chunk(db, docs, None).chunks


def test_a_schema_description_change_remakes_only_that_tables_schema_chunks(
    tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]
) -> None:
    schema, docs = ecommerce
    cache = tmp_path / "shop.sqlite"
    _chunk(parse_schema(schema), docs, cache)
    users = next(t for t in schema["tables"] if t["name"] == "users")
    users["description"] = "Everyone who ever signed up, including deleted accounts."
    db = parse_schema(schema)
    result = _chunk(db, docs, cache)
    assert result.parsed == ["_index.md"]  # the docs did not change
    assert result.chunks == _chunk(db, docs, None).chunks
    table_chunk = next(c for c in result.chunks if c.table == "users" and c.chunk_type == "table")
    assert "including deleted accounts" in table_chunk.text


def test_damaged_entries_are_misses_not_errors(
    tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]
) -> None:
    schema, docs = ecommerce
    db = parse_schema(schema)
    cache = tmp_path / "shop.sqlite"
    _chunk(db, docs, cache)
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE docs SET v = ?", (b"not zlib at all",))
    result = _chunk(db, docs, cache)
    assert result.parsed == sorted(docs)
    assert result.chunks == _chunk(db, docs, None).chunks


def test_only_the_entries_of_the_last_build_are_kept(
    tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]
) -> None:
    schema, docs = ecommerce
    db = parse_schema(schema)
    cache = tmp_path / "shop.sqlite"
    _chunk(db, docs, cache)
    with ChunkCache(cache) as c:
        full = len(c.keys())
    del docs["products.md"]
    _chunk(db, docs, cache)
    with ChunkCache(cache) as c:
        assert len(c.keys()) == full - 1  # the removed doc's entry is gone
    docs["orders.md"] += "\nMore notes.\n"
    _chunk(db, docs, cache)
    with ChunkCache(cache) as c:
        assert len(c.keys()) == full - 1  # the edited doc's old entry was replaced, not kept


def test_bad_docs_are_warned_about_on_every_build(
    tmp_path: Path, ecommerce: tuple[dict, dict[str, str]]
) -> None:
    schema, docs = ecommerce
    db = parse_schema(schema)
    docs["broken.md"] = "no heading here\n"
    cache = tmp_path / "shop.sqlite"
    for _ in range(2):
        result = _chunk(db, docs, cache)
        assert "broken.md" in result.parsed
        assert any("broken.md" in w for w in result.warnings)
        assert "broken.md" not in result.doc_files


def test_tenants_and_databases_get_their_own_cache_file(tmp_path: Path) -> None:
    paths = {
        chunk_cache_path(tmp_path, "shop"),
        chunk_cache_path(tmp_path, "shop", "acme"),
        chunk_cache_path(tmp_path, "shop", "globex"),
        chunk_cache_path(tmp_path, "crm"),
    }
    assert len(paths) == 4
    assert all(p.is_relative_to(tmp_path / "_cache" / "chunks") for p in paths)
