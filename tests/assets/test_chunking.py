"""schemarag.assets.lib.chunking: the SDR-REQ-01/-02 seed scenarios plus bad and hostile input."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from schemarag.assets.lib.chunking import (
    ChunkingConfig,
    chunk_database,
    chunk_from_disk,
    decode_docs,
    read_doc_bytes,
)
from schemarag.runtime.artifact.chunk_model import CHUNK_FIELDS, Chunk, make_chunk_id
from schemarag.runtime.core.schema import load_schema, parse_schema

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "schemas"


def _col(name: str, type_: str = "TEXT", **kw: object) -> dict:
    return {"name": name, "type": type_, **kw}


SHOP = parse_schema(
    {
        "name": "shop",
        "dialect": "postgres",
        "tables": [
            {
                "name": "users",
                "description": "Customers.",
                "columns": [
                    _col("id", "INTEGER", primary_key=True),
                    _col("email"),
                    _col("country"),
                    _col("createdAt", "TIMESTAMP"),
                    _col("full_name"),
                ],
            },
            {
                "name": "orders",
                "columns": [
                    _col("id", "INTEGER", primary_key=True),
                    _col("user_id", "INTEGER", foreign_key={"table": "users", "column": "id"}),
                    _col("status", sample_values=["paid", "shipped"]),
                ],
            },
            {
                "name": "payments",
                "columns": [
                    _col("id", "INTEGER", primary_key=True),
                    _col("order_id", "INTEGER", foreign_key={"table": "orders", "column": "id"}),
                ],
            },
            {"name": "products", "columns": [_col("sku", primary_key=True)]},
            {"name": "audit", "columns": [_col("note")]},
        ],
    }
)

USERS_MD = """# Table: users

## Purpose
One row per registered customer.

## Business Context
Created at sign-up; see the audit trail for changes.

## Columns

### id
- **Type:** INTEGER
- **Description:** Customer number.

### email
- **Type:** TEXT
- **Description:** Login e-mail, unique.

### country
- **Type:** TEXT
- **Domain:** ISO 3166-1 alpha-2

### createdAt
- **Type:** TIMESTAMP
- **Description:** Sign-up time.

### full_name
- **Type:** TEXT
- **Description:** Display name.

## Relationships
- **Related tables:** orders
- **Join patterns:** `orders.user_id = users.id`
"""

ORDERS_MD = """# Table: orders

## Purpose
Order headers.

## Business Context
Written at checkout.

## Columns

### status
- **Domain:** `paid`, `shipped`

## Common Queries

### Query Pattern: Orders per user
How many orders each customer placed.
```sql
SELECT u.email, count(*) FROM orders o JOIN users u ON u.id = o.user_id GROUP BY u.email
```
**Use case:** Loyalty.

### Query Pattern: Revenue by product
```sql
WITH paid AS (SELECT * FROM orders WHERE status = 'paid')
SELECT p.sku FROM paid JOIN products p ON true
```
**Use case:** Merchandising.

### Query Pattern: Open orders
```sql
SELECT id FROM orders WHERE status <> 'shipped'
```
**Use case:** Operations.

## Examples
Q: orders last week -> filter on id ranges.
"""

INDEX_MD = "# Database: shop\n\n## Overview\nA small web shop.\n"


def _by(chunks: list[Chunk], **kw: object) -> list[Chunk]:
    return [c for c in chunks if all(getattr(c, k) == v for k, v in kw.items())]


def _write(folder: Path, files: dict[str, str | bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        target = folder / name
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return folder


# --- SDR-REQ-01 -------------------------------------------------------------------------------


def test_three_ecommerce_docs_load() -> None:
    db = load_schema(DATA / "ecommerce.json")
    result = chunk_from_disk(db, DATA / "ecommerce" / "docs")
    assert result.warnings == []
    assert {"users.md", "products.md", "orders.md"} <= set(result.doc_files)
    sources = {Path(c.source_path).name for c in result.chunks if c.source_path}
    assert {"users.md", "products.md", "orders.md", "_index.md"} <= sources
    for table in ("users", "products", "orders"):
        assert _by(result.chunks, table=table, chunk_type="overview"), table
        assert _by(result.chunks, table=table, chunk_type="table"), table
    (database,) = _by(result.chunks, chunk_type="database")
    assert database.table is None and database.source_path.endswith("_index.md")


def test_missing_docs_dir_is_an_empty_doc_set_and_schema_chunks_remain(tmp_path: Path) -> None:
    files, warnings = read_doc_bytes(tmp_path / "does-not-exist")
    assert (files, warnings) == ({}, [])
    result = chunk_from_disk(SHOP, tmp_path / "does-not-exist")
    assert result.warnings == [] and result.doc_files == []
    assert {c.table for c in _by(result.chunks, chunk_type="table")} == {t.name for t in SHOP.tables}
    columns = {(c.table, c.column) for c in _by(result.chunks, chunk_type="column")}
    assert columns == {(t.name, col.name) for t in SHOP.tables for col in t.columns}
    assert {c.chunk_type for c in result.chunks} == {"table", "column"}


@pytest.mark.parametrize(
    ("bad_name", "content", "reason"),
    [
        ("nohead.md", "## Purpose\nno title\n", "no level-1 heading"),
        ("ghost.md", "# Table: ghosts\n## Purpose\nx\n", "table 'ghosts' is not in the schema of 'shop'"),
        ("latin1.md", "# Table: products\n\n## Purpose\ncaf\u00e9\n".encode("latin-1"), "not UTF-8"),
        ("fence.md", "# Table: products\n## Examples\n```sql\nSELECT 1\n", "unterminated code fence"),
    ],
)
def test_one_malformed_file_is_skipped_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, bad_name: str, content: str | bytes, reason: str
) -> None:
    docs = _write(tmp_path / "docs", {"users.md": USERS_MD, "orders.md": ORDERS_MD, bad_name: content})
    with caplog.at_level(logging.WARNING, logger="schemarag.assets.lib.chunking"):
        result = chunk_from_disk(SHOP, docs)
    assert len(result.warnings) == 1
    (warning,) = result.warnings
    assert bad_name in warning and reason in warning and "skipped" in warning
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [warning]
    assert sorted(result.doc_files) == ["orders.md", "users.md"]
    assert _by(result.chunks, table="users", chunk_type="overview")
    assert _by(result.chunks, table="orders", chunk_type="overview")


def test_oversized_doc_is_skipped_with_a_warning(tmp_path: Path) -> None:
    docs = _write(tmp_path / "docs", {"users.md": USERS_MD, "orders.md": ORDERS_MD * 20})
    config = ChunkingConfig(max_doc_bytes=len(ORDERS_MD.encode()) * 2)
    result = chunk_from_disk(SHOP, docs, config)
    (warning,) = result.warnings
    assert "orders.md" in warning and "exceeds the" in warning and "doc limit" in warning
    assert result.doc_files == ["users.md"]


def test_non_md_files_and_subdirectories_are_ignored(tmp_path: Path) -> None:
    docs = _write(tmp_path / "docs", {"users.md": USERS_MD, "notes.txt": "# Table: nope\n"})
    (docs / "dir.md").mkdir()
    files, warnings = read_doc_bytes(docs)
    assert list(files) == ["users.md"] and warnings == []


def test_decode_docs_reports_the_bad_byte() -> None:
    texts, warnings = decode_docs({"a.md": b"# Table: a\n", "b.md": b"ok \xff"}, "docs")
    assert texts == {"a.md": "# Table: a\n"}
    assert warnings == ["docs/b.md: skipped: not UTF-8 (bad byte at offset 3); save as UTF-8"]


# --- SDR-REQ-02 -------------------------------------------------------------------------------


def test_overview_is_one_chunk_with_purpose_and_business_context() -> None:
    result = chunk_database(SHOP, {"users.md": USERS_MD})
    (overview,) = _by(result.chunks, table="users", chunk_type="overview")
    assert "One row per registered customer." in overview.text
    assert "Created at sign-up" in overview.text
    assert overview.column is None and overview.start_line == 3


def test_five_column_subsections_give_five_column_chunks() -> None:
    result = chunk_database(SHOP, {"users.md": USERS_MD})
    cols = _by(result.chunks, table="users", chunk_type="column")
    assert [c.column for c in cols] == ["id", "email", "country", "createdAt", "full_name"]
    assert all(c.source_path == "users.md" for c in cols)  # relative to the docs folder
    assert "Login e-mail, unique." in _by(cols, column="email")[0].text
    assert _by(cols, column="id")[0].start_line == 11


def test_three_query_patterns_give_three_query_chunks_with_sql() -> None:
    result = chunk_database(SHOP, {"orders.md": ORDERS_MD})
    queries = _by(result.chunks, table="orders", chunk_type="query")
    assert len(queries) == 3
    assert [q.title for q in queries] == [
        "orders: Query Pattern: Orders per user",
        "orders: Query Pattern: Revenue by product",
        "orders: Query Pattern: Open orders",
    ]
    assert all("```sql" in q.text and "**Use case:**" in q.text for q in queries)
    assert all(q.column is None for q in queries)
    # Tables the SQL references (sqlglot; the CTE name 'paid' is not a table) become related tables.
    assert "products" in queries[1].related_tables and "paid" not in queries[1].related_tables
    assert "users" in queries[0].related_tables


def test_related_tables_fk_both_directions_and_mentions() -> None:
    result = chunk_database(SHOP, {"users.md": USERS_MD, "orders.md": ORDERS_MD})
    for chunk in _by(result.chunks, table="orders"):
        assert {"users", "payments"} <= set(chunk.related_tables), chunk.title
    for chunk in _by(result.chunks, table="users"):
        assert "orders" in chunk.related_tables, chunk.title
        assert "users" not in chunk.related_tables
    # 'audit' has no FK to users; the overview names it in prose.
    (overview,) = _by(result.chunks, table="users", chunk_type="overview")
    assert "audit" in overview.related_tables
    (table_chunk,) = _by(result.chunks, table="products", chunk_type="table")
    assert table_chunk.related_tables == ()


def test_relationship_example_and_database_chunks() -> None:
    result = chunk_database(SHOP, {"users.md": USERS_MD, "orders.md": ORDERS_MD, "_index.md": INDEX_MD})
    (rel,) = _by(result.chunks, chunk_type="relationship")
    assert rel.table == "users" and "orders.user_id = users.id" in rel.text
    (example,) = _by(result.chunks, chunk_type="example")
    assert example.table == "orders"
    (database,) = _by(result.chunks, chunk_type="database")
    assert database.table is None and database.column is None and "A small web shop." in database.text
    assert "_index.md" in result.doc_files


def test_keywords_hold_column_names_and_identifier_parts() -> None:
    result = chunk_database(SHOP, {"users.md": USERS_MD})
    (created,) = _by(result.chunks, table="users", column="createdAt")
    assert {"createdat", "created"} <= set(created.keywords)
    (uid,) = _by(result.chunks, table="users", column="id")
    assert "id" in uid.keywords  # a short column name is still a keyword
    (fk,) = _by(result.chunks, table="orders", column="user_id")
    assert {"user_id", "user"} <= set(fk.keywords)
    (table_chunk,) = _by(result.chunks, table="orders", chunk_type="table")
    assert "orders" in table_chunk.keywords


def test_undocumented_columns_get_schema_chunks_and_documented_ones_do_not_repeat() -> None:
    result = chunk_database(SHOP, {"orders.md": ORDERS_MD})
    cols = _by(result.chunks, table="orders", chunk_type="column")
    assert sorted(c.column for c in cols) == ["id", "status", "user_id"]
    (status,) = _by(cols, column="status")
    assert status.source_path == "orders.md"
    (user_id,) = _by(cols, column="user_id")
    assert user_id.source_path == "" and "References users.id" in user_id.text
    off = chunk_database(SHOP, {"orders.md": ORDERS_MD}, ChunkingConfig(schema_column_chunks=False))
    assert [c.column for c in _by(off.chunks, table="orders", chunk_type="column")] == ["status"]


def test_pii_columns_never_show_sample_values() -> None:
    db = parse_schema(
        {
            "name": "p",
            "tables": [
                {
                    "name": "people",
                    "columns": [
                        _col("email", sample_values=["a@x.io"], pii=True),
                        _col("tier", sample_values=["gold"]),
                    ],
                }
            ],
        }
    )
    text = " ".join(c.text for c in chunk_database(db, {}).chunks)
    assert "gold" in text and "a@x.io" not in text


def test_chunk_ids_are_deterministic_and_stable() -> None:
    docs = {"users.md": USERS_MD, "orders.md": ORDERS_MD, "_index.md": INDEX_MD}
    first = chunk_database(SHOP, docs).chunks
    second = chunk_database(SHOP, dict(reversed(list(docs.items())))).chunks
    assert [c.to_dict() for c in first] == [c.to_dict() for c in second]
    assert len({c.chunk_id for c in first}) == len(first)
    one = first[0]
    assert one.chunk_id == make_chunk_id("shop", one.table, one.chunk_type, one.column, one.text)
    # Pinned: the recipe (sha256 over the \x1f-separated identity + text, first 20 hex) must not drift.
    assert make_chunk_id("shop", "orders", "column", "id", "x") == "546d11f7b6a78540df31"


def test_editing_one_doc_changes_only_that_docs_chunk_ids() -> None:
    before = {c.chunk_id for c in chunk_database(SHOP, {"users.md": USERS_MD, "orders.md": ORDERS_MD}).chunks}
    edited = USERS_MD.replace("Login e-mail, unique.", "Login e-mail.")
    after = chunk_database(SHOP, {"users.md": edited, "orders.md": ORDERS_MD}).chunks
    changed = [c for c in after if c.chunk_id not in before]
    assert [(c.table, c.column) for c in changed] == [("users", "email")]


def test_chunk_dict_round_trip_has_exactly_the_fields() -> None:
    for chunk in chunk_database(SHOP, {"orders.md": ORDERS_MD}).chunks:
        d = chunk.to_dict()
        assert tuple(d) == CHUNK_FIELDS
        assert Chunk.from_dict(d) == chunk


def test_column_heading_without_a_name_is_dropped() -> None:
    doc = "# Table: products\n## Columns\n### ``\nnothing\n### sku\n- **Type:** TEXT\n"
    result = chunk_database(SHOP, {"products.md": doc})
    assert [c.column for c in _by(result.chunks, table="products", chunk_type="column")] == ["sku"]


def test_windows_saved_doc_with_bom_loads(tmp_path: Path) -> None:
    docs = _write(
        tmp_path / "docs", {"users.md": ("\ufeff" + USERS_MD.replace("\n", "\r\n")).encode("utf-8")}
    )
    result = chunk_from_disk(SHOP, docs)
    assert result.warnings == [] and result.doc_files == ["users.md"]
    assert len(_by(result.chunks, table="users", chunk_type="column")) == 5


def test_schema_version_namespaces_ids_but_not_the_database_field() -> None:
    v2 = SHOP.model_copy(update={"schema_version": "2"})
    a = chunk_database(SHOP, {}).chunks
    b = chunk_database(v2, {}).chunks
    assert {c.chunk_id for c in a}.isdisjoint({c.chunk_id for c in b})
    assert {c.database for c in b} == {"shop"}
