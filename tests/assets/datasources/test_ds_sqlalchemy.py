"""``kind: sqlalchemy``: reflection through SQLAlchemy against real SQLite, PostgreSQL and MariaDB.

MariaDB runs on 127.0.0.1:3306 (root, no password); like PostgreSQL, an unreachable server is a
skip locally and a failure in CI (CI=true).
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator

import pytest

from schemarag.assets.lib.datasources.snapshot import take_snapshot
from schemarag.runtime.core.errors import DatasourceError

MARIADB = os.environ.get("SCHEMARAG_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306")


def _check_shop(db, qualified: str = "") -> None:
    q = qualified
    customers, orders = db.table(f"{q}customers"), db.table(f"{q}orders")
    assert customers is not None and orders is not None
    assert customers.primary_key == ["id"]
    assert orders.column("customer_id").foreign_key.table == f"{q}customers"
    assert orders.column("customer_id").foreign_key.column == "id"
    assert not orders.column("status").nullable
    assert orders.row_count == 30 and customers.row_count == 3
    status = orders.column("status")
    assert sorted(status.sample_values) == ["active", "cancelled", "pending"]


def test_sqlite(tmp_path, make_entry):
    path = tmp_path / "shop.db"
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                             status TEXT NOT NULL, total NUMERIC(10,2));
        INSERT INTO customers VALUES (1, 'Ada', 'Alameda'), (2, 'Bob', 'Oakland'), (3, 'Cy', NULL);
        """
    )
    statuses = ["active", "cancelled", "pending"]
    con.executemany(
        "INSERT INTO orders VALUES (?, ?, ?, ?)",
        [(g, 1 + g % 3, statuses[g % 3], g * 1.5) for g in range(1, 31)],
    )
    con.commit()
    con.close()
    snap = take_snapshot(make_entry(name="lite", kind="sqlalchemy", connection=f"sqlite:///{path}"))
    assert snap.database.dialect == "sqlite"
    _check_shop(snap.database)
    assert snap.database.table("orders").column("total").type == "NUMERIC(10, 2)"


def test_postgres(pg_admin, pg_schema, make_entry):
    pg_admin.execute(f'SET search_path TO "{pg_schema}"')
    pg_admin.execute(
        """
        CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, city text);
        COMMENT ON TABLE customers IS 'People who buy things';
        COMMENT ON COLUMN customers.city IS 'City of residence';
        CREATE TABLE orders (id integer PRIMARY KEY, customer_id integer NOT NULL REFERENCES customers(id),
                             status text NOT NULL, total numeric(10,2));
        INSERT INTO customers VALUES (1, 'Ada', 'Alameda'), (2, 'Bob', 'Oakland'), (3, 'Cy', NULL);
        INSERT INTO orders SELECT g, 1 + g % 3, (ARRAY['active','cancelled','pending'])[1 + g % 3], g * 1.5
          FROM generate_series(1, 30) g;
        """
    )
    url = "postgresql+psycopg://127.0.0.1:5432/test"
    snap = take_snapshot(make_entry(name="pga", kind="sqlalchemy", connection=url, schemas=[pg_schema]))
    db = snap.database
    assert db.dialect == "postgres"
    _check_shop(db)
    assert db.table("customers").description == "People who buy things"
    assert db.table("customers").column("city").description == "City of residence"


@pytest.fixture
def mariadb() -> Iterator[str]:
    import sqlalchemy as sa

    engine = sa.create_engine(MARIADB, poolclass=sa.pool.NullPool)
    try:
        conn = engine.connect()
    except sa.exc.OperationalError as exc:
        reason = f"MariaDB not reachable at {MARIADB}: {exc.orig}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} (CI=true, so this is a failure, not a skip)")
        pytest.skip(reason)
    name = f"srag_{uuid.uuid4().hex[:10]}"
    conn.exec_driver_sql(f"CREATE DATABASE {name}")
    try:
        yield name
    finally:
        conn.exec_driver_sql(f"DROP DATABASE {name}")
        conn.close()
        engine.dispose()


def test_mariadb(mariadb, make_entry):
    import sqlalchemy as sa

    engine = sa.create_engine(f"{MARIADB}/{mariadb}", poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        for stmt in [
            "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, city VARCHAR(50) "
            "COMMENT 'City of residence') COMMENT 'People who buy things'",
            "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, status VARCHAR(20) NOT NULL, "
            "total DECIMAL(10,2), FOREIGN KEY (customer_id) REFERENCES customers(id)) ENGINE=InnoDB",
            "INSERT INTO customers VALUES (1, 'Ada', 'Alameda'), (2, 'Bob', 'Oakland'), (3, 'Cy', NULL)",
        ]:
            conn.exec_driver_sql(stmt)
        statuses = ["active", "cancelled", "pending"]
        for g in range(1, 31):
            conn.exec_driver_sql(
                "INSERT INTO orders VALUES (%s, %s, %s, %s)", (g, 1 + g % 3, statuses[g % 3], g * 1.5)
            )
    engine.dispose()
    entry = make_entry(name="maria", kind="sqlalchemy", connection=f"{MARIADB}/{mariadb}")
    db = take_snapshot(entry).database
    assert db.dialect == "mysql"
    _check_shop(db)
    assert db.table("customers").description == "People who buy things"
    assert db.table("customers").column("city").description == "City of residence"
    assert db.table("orders").column("total").type == "DECIMAL(10, 2)"


def test_bad_url_and_password_never_shown(make_entry):
    with pytest.raises(DatasourceError, match="invalid SQLAlchemy URL"):
        take_snapshot(make_entry(name="bad", kind="sqlalchemy", connection="not a url"))
    url = "mysql+pymysql://root:s3cret@127.0.0.1:1/test"
    with pytest.raises(DatasourceError) as info:
        take_snapshot(make_entry(name="bad", kind="sqlalchemy", connection=url))
    assert "s3cret" not in str(info.value) and "cannot connect" in str(info.value)
