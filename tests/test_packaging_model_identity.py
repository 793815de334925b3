"""The model identity pins the tokenizer files as well as the ONNX weights, and every manifest
records the writer's schemarag version (not part of the key)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import schemarag
from schemarag.runtime.artifact.format import compute_key
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec
from schemarag.runtime.core.embedding.model_files import TOKENIZER_DIR, TOKENIZER_FILES
from schemarag.runtime.core.errors import ManifestMismatchError


def test_tokenizer_files_ship_as_package_data_with_their_notice() -> None:
    for name in (*TOKENIZER_FILES, "NOTICE.md"):
        assert (TOKENIZER_DIR / name).is_file(), name
    assert "Apache License 2.0" in (TOKENIZER_DIR / "NOTICE.md").read_text()
    assert json.loads((TOKENIZER_DIR / "tokenizer.json").read_text())["model"]["type"] == "WordPiece"


def test_a_changed_tokenizer_file_changes_identity_and_key(tmp_path: Path) -> None:
    default = Embedder.get()
    copy = tmp_path / "model"
    shutil.copytree(default.model_dir, copy, symlinks=False)
    same = Embedder(ModelSpec(model_dir=str(copy))).identity
    assert same == default.identity  # same bytes, same identity, wherever the folder is
    config = json.loads((copy / "tokenizer_config.json").read_text())
    config["do_lower_case"] = not config.get("do_lower_case", True)
    (copy / "tokenizer_config.json").write_text(json.dumps(config))
    changed = Embedder(ModelSpec(model_dir=str(copy))).identity
    assert changed["onnx_sha256"] == same["onnx_sha256"]
    assert changed["tokenizer_sha256"] != same["tokenizer_sha256"]
    key = compute_key(b"{}", {}, {"p": 1}, same)
    assert compute_key(b"{}", {}, {"p": 1}, changed) != key
    assert compute_key(b"{}", {}, {"p": 1}, dict(same)) == key  # stable for unchanged inputs


def test_manifest_records_identity_and_version(built_artifacts: Path) -> None:
    root = built_artifacts / "ecommerce"
    folder = root / (root / "CURRENT").read_text().strip()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["schemarag_version"] == schemarag.__version__
    assert manifest["model"] == Embedder.get().identity
    assert len(manifest["model"]["tokenizer_sha256"]) == 64
    other = {**Embedder.get().identity, "tokenizer_sha256": "0" * 64}
    with pytest.raises(ManifestMismatchError, match="tokenizer_sha256"):
        IndexArtifact.open(folder, expected_model=other)
