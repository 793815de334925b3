"""docs init: snapshot JSON + generated docs, human edits preserved across re-runs."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from schemarag.assets.lib.datasources.docs_init import docs_init, latest_snapshot, snapshot_changed
from schemarag.cli import main
from schemarag.runtime.core.schema import load_schema


def make_db(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, city TEXT, email TEXT);"
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),"
            " status TEXT, legacy_code TEXT);"
            "INSERT INTO customers VALUES (1, 'Alameda', 'a@x.org'), (2, 'Oakland', 'b@x.org');"
            "INSERT INTO orders VALUES (1, 1, 'active', 'x'), (2, 2, 'pending', 'y'),"
            " (3, 1, 'cancelled', 'z');"
        )
    conn.close()
    return path


def run_sql(path: Path, sql: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(sql)
    conn.close()


@pytest.fixture
def shop(make_entry, tmp_path):
    make_db(tmp_path / "shop.sqlite")
    return make_entry(name="shop", kind="sqlite", connection="shop.sqlite")


def headings(text: str, level: int) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(text)
    return [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.tag == f"h{level}"
    ]


def test_first_run_writes_json_and_docs(shop, tmp_path):
    data = tmp_path / "schemas"
    res = docs_init(shop, data)
    assert res.changed and res.json_written and res.tables == 2 and res.columns == 7
    assert sorted(res.created) == ["_index.md", "customers.md", "orders.md"]
    db = load_schema(data / "shop.json")
    assert db.schema_version == res.version and db.tenant == "acme"
    assert db.table("orders").column("status").sample_values  # value hints land in the schema JSON
    orders_md = (data / "shop" / "docs" / "orders.md").read_text()
    assert headings(orders_md, 3) == ["id", "customer_id", "status", "legacy_code"]
    assert "`active`, `cancelled`, `pending`" in orders_md or "`active`" in orders_md
    assert "- **Join patterns:** `orders.customer_id = customers.id`" in orders_md
    customers_md = (data / "shop" / "docs" / "customers.md").read_text()
    assert "- **PII:** yes" in customers_md and "a@x.org" not in customers_md
    assert (data / "shop" / "docs" / "_index.md").read_text().startswith("# Database: shop\n")
    assert latest_snapshot(data, "shop").schema_version == res.version


def test_unchanged_database_keeps_version_and_json(shop, tmp_path):
    data = tmp_path / "schemas"
    first = docs_init(shop, data)
    raw = (data / "shop.json").read_bytes()
    run_sql(tmp_path / "shop.sqlite", "INSERT INTO orders VALUES (4, 2, 'refunded', 'w');")  # data only
    again = docs_init(shop, data)
    assert not again.changed and not again.json_written
    assert again.version == first.version and again.fingerprint == first.fingerprint
    assert (data / "shop.json").read_bytes() == raw
    assert again.created == [] and again.merged == []
    changed, _ = snapshot_changed(shop, data)
    assert changed is False


def test_rerun_preserves_edits_merges_new_and_marks_dropped(shop, tmp_path):
    data = tmp_path / "schemas"
    first = docs_init(shop, data)
    doc = data / "shop" / "docs" / "orders.md"
    edited = doc.read_text().replace(
        "## Purpose\nHolds orders records (table `orders`); no description has been written yet.",
        "## Purpose\nEvery order a customer placed. Written by a human.",
    )
    edited = edited.replace("### status\n", "### status\n- **Notes:** refunded orders are rare.\n")
    doc.write_text(edited)
    run_sql(
        tmp_path / "shop.sqlite",
        "ALTER TABLE orders ADD COLUMN channel TEXT; ALTER TABLE orders DROP COLUMN legacy_code;"
        "CREATE TABLE refunds (id INTEGER PRIMARY KEY, order_id INTEGER REFERENCES orders(id));"
        "DROP TABLE customers;",
    )
    res = docs_init(shop, data)
    assert res.changed and res.version != first.version
    assert (
        res.merged == ["orders.md"] and "refunds.md" in res.created and res.dropped_tables == ["customers.md"]
    )
    text = doc.read_text()
    assert "Every order a customer placed. Written by a human." in text
    assert "- **Notes:** refunded orders are rare." in text
    assert headings(text, 3) == ["id", "customer_id", "status", "legacy_code", "channel"]
    assert f"### legacy_code\n> **Dropped:** column no longer exists in snapshot {res.version}\n" in text
    assert text.index("### channel") < text.index("## Relationships")  # merged inside ## Columns
    customers = (data / "shop" / "docs" / "customers.md").read_text()
    assert customers.startswith(
        f"# Table: customers\n\n> **Dropped:** table no longer exists in snapshot {res.version}"
    )
    # idempotent: a third run changes nothing
    third = docs_init(shop, data, force=True)
    assert third.merged == [] and third.dropped_tables == [] and doc.read_text() == text
    # a column that comes back loses its marker
    run_sql(tmp_path / "shop.sqlite", "ALTER TABLE orders ADD COLUMN legacy_code TEXT;")
    docs_init(shop, data)
    assert "**Dropped:**" not in doc.read_text()


def test_cli_docs_init_and_snapshot(shop, tmp_path, capsys):
    cfg = tmp_path / "datasources.yaml"
    cfg.write_text(
        "datasources:\n  - {name: shop, kind: sqlite, tenant: acme, connection: shop.sqlite}\n",
        encoding="utf-8",
    )
    data = tmp_path / "schemas"
    assert main(["docs", "init", "--datasource", "shop", "--datasources", str(cfg), "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "shop (tenant acme): 2 tables, 7 columns" in out and "changed" in out and "introspection" in out
    assert main(["docs", "snapshot", "--datasource", "shop", "--datasources", str(cfg), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "shop"
    assert main(["docs", "init", "--datasource", "nope", "--datasources", str(cfg)]) == 2
    assert "no datasource named 'nope' (defined: shop)" in capsys.readouterr().err
