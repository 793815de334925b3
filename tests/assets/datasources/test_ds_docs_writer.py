"""schemarag.assets.lib.docs_writer rendering and schemarag.assets.lib.datasources.docs_merge edits."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from schemarag.assets.lib.datasources.docs_merge import doc_table_name, mark_table_dropped, merge_table_doc
from schemarag.assets.lib.docs_writer import doc_file_name, render_index_doc, render_table_doc
from schemarag.runtime.core.schema import Database

DB = Database.model_validate(
    {
        "name": "shop",
        "dialect": "sqlite",
        "schema_version": "20260101000000_abcdef12",
        "tables": [
            {
                "name": "users",
                "description": "People with an account.",
                "columns": [
                    {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
                    {"name": "email", "pii": True},
                    {
                        "name": "status",
                        "description": "Account state.",
                        "value_description": "active = can log in",
                        "sample_values": ["active", "it`s", "two\nlines"],
                        "stats": {"distinct_count": 3, "null_fraction": 0.125, "sample_complete": True},
                    },
                ],
            },
            {
                "name": "orders",
                "row_count": 12,
                "columns": [
                    {"name": "id", "type": "INTEGER", "primary_key": True},
                    {"name": "user_id", "type": "INTEGER", "foreign_key": {"table": "users", "column": "id"}},
                ],
            },
        ],
    }
)


def test_table_doc_has_every_part():
    users = render_table_doc(DB, DB.tables[0])
    assert users.startswith("# Table: users\n\n## Purpose\nPeople with an account.\n")
    assert "### status\n- **Type:** TEXT\n- **Description:** Account state.\n" in users
    assert "- **Value description:** active = can log in\n" in users
    assert "- **Sample values (all distinct values):** `active`, `` it`s ``, `two\\nlines`\n" in users
    assert "- **Statistics:** distinct count: 3, null fraction: 0.125\n" in users
    assert "### email\n- **Type:** TEXT\n- **Nullable:** yes\n- **PII:** yes" in users
    assert "- **Join patterns:** `orders.user_id = users.id`" in users  # incoming FK
    orders = render_table_doc(DB, DB.tables[1])
    assert "Holds orders records" in orders  # derived purpose
    assert "- **Foreign key:** references `users.id`" in orders
    assert "- **Row count:** 12 (at snapshot time)" in orders
    tokens = MarkdownIt("commonmark").parse(users)
    h3 = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h3"]
    assert h3 == ["id", "email", "status"]


def test_rendering_is_deterministic():
    assert render_table_doc(DB, DB.tables[0]) == render_table_doc(DB.model_copy(deep=True), DB.tables[0])
    index = render_index_doc(DB)
    assert index.startswith("# Database: shop\n")
    assert "- `users` (3 columns): People with an account." in index
    assert "- **Schema version:** 20260101000000_abcdef12" in index


@pytest.mark.parametrize(
    ("name", "expected"),
    [("orders", "orders.md"), ("Order_Items-2", "Order_Items-2.md")],
)
def test_doc_file_name_keeps_safe_names(name, expected):
    assert doc_file_name(name) == expected


def test_doc_file_name_sanitizes_and_stays_injective():
    names = ["a b", "a/b", "a_b", "a.b", "../x", "_index", "café", "日本", "", "x" * 300]
    files = [doc_file_name(n) for n in names]
    assert len(set(files)) == len(files)
    for f in files:
        assert f.endswith(".md") and "/" not in f and ".." not in f and f[0].isalnum() and len(f) < 120
    assert doc_file_name("_index") != "_index.md"


def test_merge_round_trip_restores_original_bytes():
    original = render_table_doc(DB, DB.tables[0])
    without_status = DB.tables[0].model_copy(update={"columns": DB.tables[0].columns[:2]})
    dropped = merge_table_doc(original, without_status, "v2")
    assert "### status\n> **Dropped:** column no longer exists in snapshot v2\n\n- **Type:** TEXT" in dropped
    assert merge_table_doc(dropped, without_status, "v3") == dropped  # idempotent, keeps first version
    assert merge_table_doc(dropped, DB.tables[0], "v4") == original  # the column came back
    gone = mark_table_dropped(original, "v5")
    assert gone.startswith(
        "# Table: users\n\n> **Dropped:** table no longer exists in snapshot v5\n\n## Purpose"
    )
    assert mark_table_dropped(gone, "v6") == gone
    assert merge_table_doc(gone, DB.tables[0], "v7") == original


def test_merge_ignores_headings_inside_code_and_adds_missing_columns_section():
    text = "# Table: users\n\n## Examples\n```\n### status\n## Columns\n```\n"
    merged = merge_table_doc(text, DB.tables[0], "v1")
    assert merged.startswith(text)
    assert merged[len(text) :].startswith("\n## Columns\n\n### id\n")
    assert doc_table_name("# Table: `users`\n") == "users" and doc_table_name("# Something\n") is None
