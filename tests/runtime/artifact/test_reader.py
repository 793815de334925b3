"""The artifact reader on a tiny real index: what it maps, derives, checks and refuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tiny_support import current_key

from schemarag.runtime.artifact.format import CURRENT, MANIFEST
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.artifact.reader import current_key as reader_current_key
from schemarag.runtime.core.errors import ArtifactError, ChecksumMismatchError, ManifestMismatchError
from schemarag.runtime.core.text_tokens import tokenize


@pytest.fixture
def shop_copy(tiny: tuple[Path, Path], tmp_path: Path) -> Path:
    """A private copy of the shop database folder (all versions + CURRENT)."""
    _, artifacts = tiny
    dest = tmp_path / "artifacts" / "shop"
    shutil.copytree(artifacts / "shop", dest)
    return dest


def _open(root: Path, **kw: object) -> IndexArtifact:
    return IndexArtifact.open(root / current_key(root), **kw)  # type: ignore[arg-type]


def test_opens_maps_and_decodes_one_version(tiny: tuple[Path, Path]) -> None:
    _, artifacts = tiny
    art = _open(artifacts / "shop", database="shop", tenant=None)
    assert art.key == current_key(artifacts / "shop") == reader_current_key(artifacts / "shop")
    assert art.info.database == "shop" and art.info.tenant is None
    assert art.table_names == ["customers", "orders"]
    assert isinstance(art.embeddings.base, np.memmap) and art.embeddings.shape == (art.n_chunks, 384)
    assert art.chunk_table.shape == (art.n_chunks,)
    # chunk_table points each chunk at its table (or -1 for database-level chunks)
    for i in range(art.n_chunks):
        c = art.chunk(i)
        expected = art.table_names.index(c.table) if c.table else -1
        assert int(art.chunk_table[i]) == expected
    # vocabulary and CSC BM25 arrays agree
    assert len(art.vocab) == len(art.vocab_terms) == art.bm25_indptr.shape[0] - 1 == art.bm25_idf.shape[0]
    assert int(art.bm25_indptr[-1]) == art.bm25_indices.shape[0] == art.bm25_data.shape[0]


def test_ddl_pieces_come_pre_rendered_from_tables_parquet(tiny: tuple[Path, Path]) -> None:
    _, artifacts = tiny
    art = _open(artifacts / "shop")
    orders = art.ddl["orders"]
    assert orders.columns == ("id", "customer_id", "total_amount")
    assert orders.column_sql == ("id INT NOT NULL", "customer_id INT", "total_amount DECIMAL(12, 2)")
    assert orders.pk_sql == "PRIMARY KEY (id)"
    assert orders.fk_sql == (("customer_id", "FOREIGN KEY (customer_id) REFERENCES customers (id)"),)
    assert set(art.ddl["customers"].key_columns) == {"id"}  # its PK, which orders.customer_id targets
    assert art.ddl["customers"].comments[2] == "Bronze, silver or gold tier."


def test_derived_lookups(tiny: tuple[Path, Path]) -> None:
    _, artifacts = tiny
    art = _open(artifacts / "shop")
    art.warm()
    # column chunks by lower-cased column name, and per table with the exact column name
    assert {art.chunk(int(i)).column for i in art.column_chunks["loyalty_tier"]} == {"loyalty_tier"}
    by_table = dict(art.table_column_chunks["orders"])
    assert set(by_table) <= {"id", "customer_id", "total_amount"} and "total_amount" in by_table
    assert art.column_name_tokens["loyalty_tier"] == frozenset(tokenize("loyalty tier"))
    # ``id`` is join-like and in both tables of the same (single) source: an undeclared join key
    assert art.implicit_join_columns == {"customers": {"id"}, "orders": {"id"}}
    ids, names = art.table_sources
    assert names == [""] and ids.tolist() == [0, 0]


def test_snapshot_is_immutable(tiny: tuple[Path, Path]) -> None:
    _, artifacts = tiny
    art = _open(artifacts / "shop")
    with pytest.raises(AttributeError):
        art.schema = None  # type: ignore[misc]


def test_identity_is_checked_against_the_folder_it_was_found_in(
    tiny: tuple[Path, Path], tmp_path: Path
) -> None:
    _, artifacts = tiny
    globex = artifacts / "_tenants" / "globex" / "globex_hr"
    _open(globex, database="globex_hr", tenant="globex")
    with pytest.raises(ManifestMismatchError, match="tenant 'globex'"):
        _open(globex, database="globex_hr", tenant="acme")
    with pytest.raises(ManifestMismatchError, match="database 'globex_hr'"):
        _open(globex, database="shop", tenant="globex")


def test_flipped_byte_is_caught_and_lance_is_size_checked(shop_copy: Path) -> None:
    version = shop_copy / current_key(shop_copy)
    data = bytearray((version / "bm25_idf.npy").read_bytes())
    data[-1] ^= 0xFF
    (version / "bm25_idf.npy").write_bytes(bytes(data))
    with pytest.raises(ChecksumMismatchError, match=r"bm25_idf\.npy.*sha256"):
        IndexArtifact.open(version)
    IndexArtifact.open(version, verify=False)  # sizes still match: only the hash catches it
    lance_file = next(p for p in (version / "lance").rglob("*") if p.is_file())
    lance_file.write_bytes(lance_file.read_bytes() + b"x")
    with pytest.raises(ChecksumMismatchError, match="size"):
        IndexArtifact.open(version, verify=False)


def test_listed_file_that_is_a_symlink_out_of_the_folder_is_rejected(shop_copy: Path, tmp_path: Path) -> None:
    version = shop_copy / current_key(shop_copy)
    outside = tmp_path / "outside.json"
    shutil.copy(version / "vocab.json", outside)
    (version / "vocab.json").unlink()
    (version / "vocab.json").symlink_to(outside)
    with pytest.raises(ArtifactError, match="outside"):
        IndexArtifact.open(version)


def test_manifest_listing_a_path_outside_the_folder_is_rejected(shop_copy: Path) -> None:
    version = shop_copy / current_key(shop_copy)
    manifest = json.loads((version / MANIFEST).read_text())
    manifest["files"]["../../escape.npy"] = manifest["files"]["vocab.json"]
    (version / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ArtifactError, match="leaves the version folder"):
        IndexArtifact.open(version)


def test_current_holding_a_path_is_rejected(shop_copy: Path, tiny: tuple[Path, Path]) -> None:
    key = current_key(shop_copy)
    (shop_copy / CURRENT).write_text(f"../shop_a/{key}\n")
    with pytest.raises(ArtifactError, match="not an index key"):
        reader_current_key(shop_copy)


def test_reader_does_not_import_table_ranking() -> None:
    """The reader <-> table_ranking import loop is gone: what both need lives in artifact/naming."""
    import subprocess
    import sys

    code = (
        "import sys, schemarag.runtime.artifact.reader as r; r.IndexArtifact.implicit_join_columns; "
        "print('schemarag.runtime.search.table_ranking' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "False"


def test_mostly_zero_vectors_are_scored_from_the_real_rows_only(tiny: tuple[Path, Path]) -> None:
    """A sparse-plan warehouse stores zero rows for chunks left to BM25; cosines then come from
    the rows that have vectors, equal to scoring every row."""
    import dataclasses

    from schemarag.runtime.search.chunk_scores import cosines

    _, artifacts = tiny
    art = _open(artifacts / "shop")
    assert art.dense_rows is None  # every chunk of a small database has a vector
    emb = np.array(art.embeddings)
    keep = np.arange(0, art.n_chunks, 3)
    sparse_emb = np.zeros_like(emb)
    sparse_emb[keep] = emb[keep]
    sparse = dataclasses.replace(art, embeddings=sparse_emb)
    rows, vectors = sparse.dense_rows
    assert rows.tolist() == keep.tolist() and np.array_equal(vectors, emb[keep])
    query = emb[1] / np.linalg.norm(emb[1])
    got = cosines(sparse, query)
    assert got.shape == (art.n_chunks,) and not got[np.setdiff1d(np.arange(art.n_chunks), keep)].any()
    assert np.allclose(got, sparse_emb @ query, atol=1e-6)
