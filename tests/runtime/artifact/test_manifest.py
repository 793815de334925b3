"""manifest.json and CURRENT read as hostile input: typed errors naming the file and field."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemarag.runtime.artifact.format import FORMAT_VERSION, MANIFEST
from schemarag.runtime.artifact.manifest import (
    Manifest,
    check_identity,
    check_key,
    read_manifest,
    read_pointer,
)
from schemarag.runtime.core.errors import ArtifactError, ManifestMismatchError

SHA = "0" * 64


def _manifest(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "key": "0123456789abcdef",
        "database": "shop",
        "tenant": None,
        "params": {"tokenizer": {"version": 1}},
        "model": {"name": "m", "dimension": 4, "onnx_sha256": "x"},
        "counts": {"chunks": 3, "tables": 2},
        "files": {"chunks.parquet": {"sha256": SHA, "bytes": 10}},
        "built_at": "2026-01-01T00:00:00Z",  # extra fields are kept, not checked
    }
    body.update(overrides)
    return body


def _write(folder: Path, body: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    return folder


def test_well_formed_manifest_parses_to_the_typed_model(tmp_path: Path) -> None:
    info, raw = read_manifest(_write(tmp_path / "v", _manifest()))
    assert isinstance(info, Manifest)
    assert (info.key, info.database, info.tenant, info.model.dimension) == (
        "0123456789abcdef",
        "shop",
        None,
        4,
    )
    assert info.files["chunks.parquet"].bytes == 10
    assert raw["built_at"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ([1, 2, 3], "JSON object"),
        ("a string", "JSON object"),
        (_manifest(model="minilm"), "$.model"),
        (_manifest(model={"name": "m"}), "$.model.dimension"),
        (_manifest(counts={"chunks": "many", "tables": 1}), "$.counts.chunks"),
        (_manifest(files=["chunks.parquet"]), "$.files"),
        (_manifest(files={"chunks.parquet": {"sha256": SHA}}), "$.files.chunks.parquet.bytes"),
        (_manifest(files={"chunks.parquet": "abc"}), "$.files.chunks.parquet"),
        (_manifest(key="../other"), "$.key"),
        ({k: v for k, v in _manifest().items() if k != "database"}, "$.database"),
    ],
)
def test_wrong_shape_is_an_artifact_error_naming_file_and_field(
    tmp_path: Path, body: Any, field: str
) -> None:
    folder = _write(tmp_path / "v", body)
    with pytest.raises(ArtifactError) as info:
        read_manifest(folder)
    msg = str(info.value)
    assert str(folder / MANIFEST) in msg and field in msg and "rebuild" in msg


@pytest.mark.parametrize("rel", ["../escape.npy", "/etc/passwd", "lance/../../x", "a\\..\\b", ""])
def test_file_paths_outside_the_version_folder_are_rejected(tmp_path: Path, rel: str) -> None:
    folder = _write(tmp_path / "v", _manifest(files={rel: {"sha256": SHA, "bytes": 1}}))
    with pytest.raises(ArtifactError, match="leaves the version folder"):
        read_manifest(folder)


def test_format_version_mismatch_names_both_versions(tmp_path: Path) -> None:
    with pytest.raises(ManifestMismatchError) as info:
        read_manifest(_write(tmp_path / "v", _manifest(format_version=999)))
    assert "999" in str(info.value) and str(FORMAT_VERSION) in str(info.value)


def test_missing_binary_and_deeply_nested_manifests(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match=r"no manifest\.json"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ArtifactError, match="unreadable manifest"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ArtifactError, match="unreadable manifest"):
        read_manifest(tmp_path)


def test_identity_must_match_the_requested_database_and_tenant(tmp_path: Path) -> None:
    info, _ = read_manifest(_write(tmp_path / "v", _manifest(database="globex_hr", tenant="globex")))
    check_identity(info, tmp_path / "v", "globex_hr", "globex")
    with pytest.raises(ManifestMismatchError, match=r"tenant 'globex'.*tenant 'acme'"):
        check_identity(info, tmp_path / "v", "globex_hr", "acme")
    with pytest.raises(ManifestMismatchError, match="database 'globex_hr'"):
        check_identity(info, tmp_path / "v", "shop", "globex")
    with pytest.raises(ManifestMismatchError):
        check_identity(info, tmp_path / "v", "globex_hr", None)


@pytest.mark.parametrize(
    "text",
    [
        "../b2b_saas/0123456789abcdef",
        "0123456789abcdef/..",
        "/etc",
        "01234567 89abcdef",
        "0123456789ABCDEF",
        "x",
        "",
    ],
)
def test_malformed_keys_are_rejected(text: str) -> None:
    with pytest.raises(ArtifactError, match="not an index key"):
        check_key(text, "CURRENT")


def test_pointer_reads_a_key_and_tolerates_a_trailing_newline(tmp_path: Path) -> None:
    (tmp_path / "CURRENT").write_text("0123456789abcdef\n")
    assert read_pointer(tmp_path / "CURRENT") == "0123456789abcdef"
    assert read_pointer(tmp_path / "missing") is None


def test_pointer_escaping_the_folder_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "CURRENT").write_text("../b2b_saas/0123456789abcdef\n")
    with pytest.raises(ArtifactError) as info:
        read_pointer(tmp_path / "CURRENT")
    assert str(tmp_path / "CURRENT") in str(info.value)


def test_binary_huge_and_directory_pointers_are_artifact_errors(tmp_path: Path) -> None:
    pointer = tmp_path / "CURRENT"
    pointer.write_bytes(bytes(range(256)))
    with pytest.raises(ArtifactError, match="CURRENT"):
        read_pointer(pointer)
    pointer.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ArtifactError, match="binary"):
        read_pointer(pointer)
    pointer.write_text("0" * 10_000)
    with pytest.raises(ArtifactError, match="not an index pointer"):
        read_pointer(pointer)
    pointer.unlink()
    pointer.mkdir()
    with pytest.raises(ArtifactError, match="is a directory"):
        read_pointer(pointer)


_AS_NOBODY = """
import os, sys
from pathlib import Path
from schemarag.runtime.artifact.manifest import read_pointer
from schemarag.runtime.core.errors import ArtifactError
os.setgid(65534); os.setuid(65534)  # after the imports: nobody may not read the interpreter's files
try:
    read_pointer(Path(sys.argv[1]))
except ArtifactError as exc:
    print("ArtifactError:", exc)
"""


def test_unreadable_pointer_is_an_artifact_error_naming_the_path(tmp_path: Path) -> None:
    pointer = tmp_path / "CURRENT"
    pointer.write_text("0123456789abcdef\n")
    pointer.chmod(0o000)
    tmp_path.chmod(0o755)
    if os.geteuid() != 0:  # an ordinary user cannot read a 000 file
        with pytest.raises(ArtifactError, match="cannot read") as info:
            read_pointer(pointer)
        assert str(pointer) in str(info.value)
        return
    # root reads anything: read it from a real process that dropped to the 'nobody' user
    proc = subprocess.run(
        [sys.executable, "-c", _AS_NOBODY, str(pointer)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ArtifactError:") and "cannot read" in proc.stdout
    assert str(pointer) in proc.stdout
