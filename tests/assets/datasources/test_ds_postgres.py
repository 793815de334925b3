"""The PostgreSQL adapter against the real server on 127.0.0.1:5432 (database ``test``)."""

from __future__ import annotations

import os
import re
import uuid

import pytest

from schemarag.assets.lib.datasources.config import DatasourceEntry
from schemarag.assets.lib.datasources.snapshot import fingerprint, take_snapshot
from schemarag.runtime.core.errors import DatasourceError

pytestmark = pytest.mark.postgres

SETUP = """
CREATE TABLE customers (
  id integer PRIMARY KEY, name text NOT NULL, city text, password_hash text, email varchar(200));
COMMENT ON TABLE customers IS 'People who buy things';
COMMENT ON COLUMN customers.city IS 'City of residence';
CREATE TABLE orders (
  id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id),
  status text NOT NULL CHECK (status IN ('active', 'cancelled', 'pending')), total numeric(10,2));
CREATE TABLE regions (country char(2), code text, label text, PRIMARY KEY (country, code));
CREATE TABLE stores (
  id integer PRIMARY KEY, country char(2), region_code text,
  FOREIGN KEY (country, region_code) REFERENCES regions(country, code));
INSERT INTO customers VALUES
  (1, 'Ada', 'Alameda', 'x1', 'a@x.org'), (2, 'Bob', 'Oakland', 'x2', 'b@x.org'),
  (3, 'Cy', 'Alameda', 'x3', NULL);
INSERT INTO orders SELECT g, 1 + g % 3, (ARRAY['active','cancelled','pending'])[1 + g % 3], g * 1.5
  FROM generate_series(1, 30) g;
INSERT INTO regions VALUES ('US', 'CA', 'California'), ('US', 'NY', 'New York');
INSERT INTO stores VALUES (1, 'US', 'CA');
"""


@pytest.fixture
def shop(pg_admin, pg_schema: str) -> str:
    pg_admin.execute(f'SET search_path TO "{pg_schema}"')
    pg_admin.execute(SETUP)
    return pg_schema


PG = os.environ.get("SCHEMARAG_TEST_PG_DSN", "postgresql://127.0.0.1:5432/test")


@pytest.fixture
def pg_entry(make_entry):
    def make(schema: str, dsn: str = PG, **kw: object) -> DatasourceEntry:
        return make_entry(name="pgshop", kind="postgres", connection=dsn, schemas=[schema], **kw)

    return make


def test_snapshot_reads_structure_comments_counts_and_samples(pg_entry, shop):
    snap = take_snapshot(pg_entry(shop))
    db = snap.database
    assert db.dialect == "postgres" and db.tenant == "acme"
    assert re.fullmatch(r"\d{14}_[0-9a-f]{8}", db.schema_version) and db.schema_version.endswith(
        snap.fingerprint[:8]
    )
    assert [t.name for t in db.tables] == ["customers", "orders", "regions", "stores"]
    customers, orders, regions, stores = db.tables
    assert customers.description == "People who buy things"
    assert customers.column("city").description == "City of residence"
    assert customers.row_count == 3 and orders.row_count == 30
    assert customers.column("email").type == "character varying(200)"
    assert orders.column("total").type == "numeric(10,2)"
    assert not orders.column("status").nullable and customers.column("city").nullable
    assert regions.primary_key == ["country", "code"]
    assert orders.column("customer_id").foreign_key.model_dump() == {"table": "customers", "column": "id"}
    fks = {(c.name, c.foreign_key.table, c.foreign_key.column) for c in stores.columns if c.foreign_key}
    assert fks == {("country", "regions", "country"), ("region_code", "regions", "code")}
    status = orders.column("status")
    assert sorted(status.sample_values) == ["active", "cancelled", "pending"]
    assert status.stats["distinct_count"] == 3 and status.stats["sample_complete"] is True
    assert customers.column("city").sample_values[0] == "Alameda"  # most frequent first
    pw = customers.column("password_hash")
    assert pw.pii and pw.sample_values == [] and pw.stats == {}
    assert customers.column("email").pii and customers.column("email").sample_values == []
    assert "customers.password_hash (secret)" in snap.pii_columns


def test_fingerprint_ignores_data_but_tracks_columns_fks_and_comments(pg_entry, pg_admin, shop):
    e = pg_entry(shop)
    first = take_snapshot(e).fingerprint
    pg_admin.execute("INSERT INTO orders VALUES (100, 2, 'pending', 1)")
    assert take_snapshot(e).fingerprint == first
    pg_admin.execute("ALTER TABLE stores ADD COLUMN manager_id integer")
    added = take_snapshot(e).fingerprint
    assert added != first
    pg_admin.execute("ALTER TABLE stores ADD FOREIGN KEY (manager_id) REFERENCES customers(id)")
    with_fk = take_snapshot(e)
    assert with_fk.fingerprint != added
    assert with_fk.database.table("stores").column("manager_id").foreign_key.table == "customers"
    pg_admin.execute("COMMENT ON COLUMN stores.manager_id IS 'who runs it'")
    assert take_snapshot(e).fingerprint not in {first, added, with_fk.fingerprint}
    assert fingerprint(with_fk.database) == with_fk.fingerprint


def test_several_schemas_qualify_names(make_entry, pg_admin, shop):
    other = f"srag_{uuid.uuid4().hex[:10]}"
    pg_admin.execute(f'CREATE SCHEMA "{other}"; CREATE TABLE "{other}".notes (id int PRIMARY KEY, body text)')
    try:
        db = take_snapshot(make_entry(kind="postgres", connection=PG, schemas=[shop, other])).database
    finally:
        pg_admin.execute(f'DROP SCHEMA "{other}" CASCADE')
    names = {t.name for t in db.tables}
    assert f"{other}.notes" in names and f"{shop}.orders" in names
    assert db.table(f"{shop}.orders").column("customer_id").foreign_key.table == f"{shop}.customers"


@pytest.fixture
def limited_role(pg_admin, shop):
    """A login role that may read every table except ``regions``."""
    role = f"srag_ro_{uuid.uuid4().hex[:8]}"
    pg_admin.execute(f'CREATE ROLE "{role}" LOGIN')
    pg_admin.execute(f'GRANT USAGE ON SCHEMA "{shop}" TO "{role}"')
    for table in ("customers", "orders", "stores"):
        pg_admin.execute(f'GRANT SELECT ON "{shop}".{table} TO "{role}"')
    yield role
    pg_admin.execute(f'DROP OWNED BY "{role}"')
    pg_admin.execute(f'DROP ROLE "{role}"')


def test_permission_denied_is_an_error_naming_datasource_and_table(pg_entry, shop, limited_role):
    e = pg_entry(shop, dsn=f"postgresql://{limited_role}@127.0.0.1:5432/test")
    with pytest.raises(DatasourceError, match=r"datasource 'pgshop'.*permission denied.*regions"):
        take_snapshot(e)


def test_permission_denied_skip_drops_table_and_its_foreign_keys(pg_entry, shop, limited_role):
    e = pg_entry(shop, dsn=f"postgresql://{limited_role}@127.0.0.1:5432/test", on_permission_denied="skip")
    snap = take_snapshot(e)
    assert [t.name for t in snap.database.tables] == ["customers", "orders", "stores"]
    assert snap.skipped_tables == ["regions"]
    assert all(c.foreign_key is None for c in snap.database.table("stores").columns)
    assert snap.dropped_foreign_keys == ["stores(country, region_code) -> regions"]


def test_dsn_from_environment(pg_entry, shop, monkeypatch):
    monkeypatch.setenv("SRAG_TEST_DSN", PG)
    db = take_snapshot(pg_entry(shop, dsn="env:SRAG_TEST_DSN")).database
    assert db.table("orders") is not None


def test_connection_dropped_mid_introspection(pg_entry, pg_admin, shop):
    from schemarag.assets.lib.datasources.snapshot import adapter_for

    adapter = adapter_for(pg_entry(shop))
    with adapter:
        pid = adapter.query("SELECT pg_backend_pid()")[0][0]
        pg_admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(DatasourceError, match=r"datasource 'pgshop' \(postgres\): connection lost"):
            adapter.tables()
