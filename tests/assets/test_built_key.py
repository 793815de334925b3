"""``built_key``: the no-op check's key, computed without validating the schema, is exactly the
key a full ``read_sources`` computes, and anything unusual falls back to the full path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.assets.lib.chunking import ChunkingConfig
from schemarag.assets.lib.inputs import built_key, read_sources
from schemarag.runtime.artifact.format import MANIFEST

MODEL = {"name": "m", "onnx_sha256": "0" * 64, "dimension": 4}
SCHEMA = {
    "name": "wh",
    "tables": [
        {"name": "s.users", "columns": [{"name": "id", "primary_key": True}, {"name": "email"}]},
        {"name": "s.orders", "columns": [{"name": "id"}, {"name": "user_id"}, {"name": "amount"}]},
    ],
}


def _write(data: Path, schema: dict) -> None:
    data.mkdir(parents=True, exist_ok=True)
    (data / "wh.json").write_text(json.dumps(schema), encoding="utf-8")
    (data / "wh" / "docs").mkdir(parents=True, exist_ok=True)
    (data / "wh" / "docs" / "s.users.md").write_text("# Table: s.users\n\n## Purpose\nPeople.\n")


def _publish(root: Path, key: str) -> None:
    (root / key).mkdir(parents=True)
    (root / key / MANIFEST).write_text("{}")


@pytest.mark.parametrize("threshold", [20_000, 3])  # 3: a "scaled" database (embed_plan in the key)
def test_same_key_as_read_sources_once_built(tmp_path: Path, threshold: int) -> None:
    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    _write(data, SCHEMA)
    chunking = ChunkingConfig(embed_all_columns_up_to=threshold)
    assert built_key(data, "wh", MODEL, artifacts, chunking) is None  # nothing built yet
    snap = read_sources(data, "wh", MODEL, artifacts, chunking)
    assert ("embed_plan" in snap.params) == (threshold == 3)
    _publish(snap.root, snap.key)
    assert built_key(data, "wh", MODEL, artifacts, chunking) == (snap.key, snap.root)
    (data / "wh" / "docs" / "s.users.md").write_text("# Table: s.users\n\n## Purpose\nCustomers.\n")
    assert built_key(data, "wh", MODEL, artifacts, chunking) is None  # a doc edit is a new key


def test_unusual_inputs_fall_back_to_the_validating_path(tmp_path: Path) -> None:
    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    assert built_key(data, "wh", MODEL, artifacts) is None  # no schema file
    _write(data, {**SCHEMA, "tenant": "acme"})
    snap = read_sources(data, "wh", MODEL, artifacts)
    _publish(snap.root, snap.key)
    assert built_key(data, "wh", MODEL, artifacts) == (snap.key, snap.root)
    assert built_key(data, "wh", MODEL, artifacts, tenant="other") is None  # read_sources says why
    (data / "wh.json").write_text("[1, 2]")
    assert built_key(data, "wh", MODEL, artifacts) is None
    (data / "wh.json").write_text(json.dumps({"name": "other", "tables": []}))
    assert built_key(data, "wh", MODEL, artifacts) is None


def test_a_keyless_schema_is_built_with_inferred_join_keys(tmp_path: Path) -> None:
    """No declared foreign key: the index's schema gets inferred ones (marked, with a confidence)
    and the key says so; a schema that declares one is built exactly as given."""
    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    _write(data, SCHEMA)
    snap = read_sources(data, "wh", MODEL, artifacts)
    assert "join_inference" in snap.params
    fk = snap.database.table("s.orders").column("user_id").foreign_key
    assert (fk.table, fk.inferred, fk.confidence) == ("s.users", True, 0.9)
    stored = json.loads(snap.schema_bytes)  # what the artifact's schema.json will hold
    assert stored["tables"][1]["columns"][1]["foreign_key"]["inferred"] is True
    declared = json.loads(json.dumps(SCHEMA))
    declared["tables"][1]["columns"][1]["foreign_key"] = {"table": "s.users", "column": "id"}
    _write(data, declared)
    snap = read_sources(data, "wh", MODEL, artifacts)
    assert "join_inference" not in snap.params
    assert snap.schema_bytes == (data / "wh.json").read_bytes()
    _publish(snap.root, snap.key)
    assert built_key(data, "wh", MODEL, artifacts) == (snap.key, snap.root)
