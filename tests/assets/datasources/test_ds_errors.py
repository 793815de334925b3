"""Connection failures: clear errors naming the datasource, no secrets, no files disturbed."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemarag.assets.lib.datasources.adapters.postgres import redact_dsn
from schemarag.assets.lib.datasources.docs_init import docs_init
from schemarag.assets.lib.datasources.snapshot import take_snapshot
from schemarag.runtime.core.errors import ConfigError, DatasourceError


def test_redact_dsn_hides_passwords():
    assert redact_dsn("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"
    assert redact_dsn("host=h password=pw user=u") == "host=h password=*** user=u"


def test_malformed_dsn_names_datasource(make_entry):
    e = make_entry(name="warehouse", kind="postgres", connection="not a dsn === password=hunter2")
    with pytest.raises(DatasourceError) as info:
        take_snapshot(e)
    msg = str(info.value)
    assert "datasource 'warehouse'" in msg and "invalid connection string" in msg
    assert "hunter2" not in msg


def test_refused_connection_names_datasource_and_hides_password(make_entry, closed_port):
    dsn = f"postgresql://app:hunter2@127.0.0.1:{closed_port}/test"
    with pytest.raises(DatasourceError) as info:
        take_snapshot(make_entry(name="warehouse", kind="postgres", connection=dsn))
    msg = str(info.value)
    assert "datasource 'warehouse'" in msg and "Connection refused" in msg
    assert "hunter2" not in msg and "app:***@127.0.0.1" in msg
    assert "\n" not in msg


def test_server_that_drops_the_connection(make_entry, dropping_server):
    dsn = f"postgresql://127.0.0.1:{dropping_server}/test"
    with pytest.raises(DatasourceError, match=r"datasource 'warehouse'.*closed the connection"):
        take_snapshot(make_entry(name="warehouse", kind="postgres", connection=dsn))


def test_missing_env_var_names_variable_not_value(make_entry, monkeypatch):
    monkeypatch.delenv("SRAG_NOPE", raising=False)
    e = make_entry(kind="postgres", connection="env:SRAG_NOPE")
    with pytest.raises(ConfigError, match=r"datasource 'ds'.*SRAG_NOPE.*not set"):
        take_snapshot(e)


def test_missing_sqlite_and_duckdb_files(make_entry, tmp_path):
    for kind in ("sqlite", "duckdb"):
        with pytest.raises(DatasourceError, match=rf"datasource 'ds' \({kind}\).*nope.db does not exist"):
            take_snapshot(make_entry(kind=kind, connection="nope.db"))


def test_not_a_database_file(make_entry, tmp_path):
    (tmp_path / "junk.db").write_bytes(b"this is not a database file at all" * 100)
    with pytest.raises(DatasourceError, match=r"datasource 'ds' \(sqlite\).*junk.db"):
        take_snapshot(make_entry(kind="sqlite", connection="junk.db"))


def _tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_failed_snapshot_leaves_existing_files_untouched(make_entry, tmp_path, closed_port):
    import sqlite3

    db_file = tmp_path / "shop.db"
    with sqlite3.connect(db_file) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, label TEXT)")
    conn.close()
    data = tmp_path / "schemas"
    docs_init(make_entry(name="shop", kind="sqlite", connection="shop.db"), data)
    before = _tree(data)
    assert "shop.json" in before and "shop/docs/t.md" in before
    bad = make_entry(name="shop", kind="postgres", connection=f"postgresql://127.0.0.1:{closed_port}/x")
    with pytest.raises(DatasourceError, match="datasource 'shop'"):
        docs_init(bad, data)
    assert _tree(data) == before
