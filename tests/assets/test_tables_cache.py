"""schemarag.assets.lib.tables_cache: tables.parquet reused only for the exact schema bytes."""

from __future__ import annotations

from pathlib import Path

from schemarag.assets.lib.tables_cache import TablesCache, tables_cache_dir, tables_key


def test_round_trip_and_only_the_latest_entry_is_kept(tmp_path: Path) -> None:
    cache = TablesCache(tmp_path / "shop")
    k1, k2 = tables_key(b'{"name": "shop", "tables": []}'), tables_key(b'{"name": "shop", "tables": [ ]}')
    assert k1 != k2  # any byte of the schema file changes the key
    assert cache.get(k1) is None
    cache.put(k1, b"first")
    assert cache.get(k1) == b"first"
    cache.put(k2, b"second")
    assert cache.get(k2) == b"second"
    assert cache.get(k1) is None
    assert len(list((tmp_path / "shop").iterdir())) == 1


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    cache = TablesCache(tmp_path / "shop")
    key = tables_key(b"{}")
    cache.put(key, b"parquet bytes")
    (entry,) = (tmp_path / "shop").iterdir()
    entry.write_bytes(b"parquet bytez")  # same size, different bytes: the name's hash catches it
    assert cache.get(key) is None


def test_each_database_and_tenant_has_its_own_folder(tmp_path: Path) -> None:
    folders = {
        tables_cache_dir(tmp_path, "shop"),
        tables_cache_dir(tmp_path, "shop", "acme"),
        tables_cache_dir(tmp_path, "shop-eu"),
    }
    assert len(folders) == 3
    assert all(f.is_relative_to(tmp_path / "_cache" / "tables") for f in folders)
