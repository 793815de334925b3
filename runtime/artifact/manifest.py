"""``manifest.json`` as a typed model, and the ``CURRENT`` pointer, read as hostile input.

An artifact folder may be half-copied, hand-edited or planted by someone who can write to the
artifacts volume but should not see another tenant's index. So the reader trusts nothing it
has not checked:

* ``CURRENT`` must hold one well-formed key (lower-case hex, :data:`KEY_LENGTH` characters):
  ``../b2b_saas/<key>`` or a path out of a tenant's folder is rejected, never followed;
* the manifest is parsed into :class:`Manifest`; a wrong shape is an
  :class:`~schemarag.runtime.core.errors.ArtifactError` naming the file and the field, never an
  ``AttributeError``/``KeyError`` deep in the reader;
* every path in ``files`` stays inside the version folder (no absolute paths, no ``..``);
* the manifest's ``database`` and ``tenant`` must equal the ones requested, so an index
  copied into another namespace is refused rather than served.

>>> check_key("0123456789abcdef", "CURRENT")
'0123456789abcdef'
>>> check_key("../b2b_saas/0123456789abcdef", "CURRENT")
Traceback (most recent call last):
...
schemarag.runtime.core.errors.ArtifactError: CURRENT: holds '../b2b_saas/0123456789abcdef', not ...
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from schemarag.runtime.artifact.format import (
    COLUMN_VECTOR_TIERS,
    DEFAULT_COLUMN_VECTORS,
    FORMAT_VERSION,
    KEY_LENGTH,
    MANIFEST,
)
from schemarag.runtime.core.errors import ArtifactError, ManifestMismatchError
from schemarag.runtime.core.json_paths import json_path

_KEY = re.compile(rf"^[0-9a-f]{{{KEY_LENGTH}}}$")
MAX_POINTER_BYTES = 256  # a key and a newline; anything longer is not a pointer
MAX_MANIFEST_BYTES = 16 << 20  # a manifest lists files and counts: megabytes mean tampering


def check_key(value: str, source: str | Path) -> str:
    """``value`` if it is a well-formed index key, else :class:`ArtifactError` naming ``source``."""
    if not _KEY.match(value):
        raise ArtifactError(
            f"{source}: holds {value[:80]!r}, not an index key ({KEY_LENGTH} lower-case hex "
            "characters); republish with `schemarag build`"
        )
    return value


def read_pointer(path: Path) -> str | None:
    """The key ``CURRENT`` names, None if there is no ``CURRENT``; anything unreadable or
    malformed (binary, a directory, no permission, a path) is an :class:`ArtifactError`."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_POINTER_BYTES + 1)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ArtifactError(f"{path}: is a directory, not a pointer file; remove it and rebuild") from None
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read the index pointer: {exc.strerror}") from None
    if len(raw) > MAX_POINTER_BYTES:
        raise ArtifactError(
            f"{path}: {len(raw)}+ bytes, not an index pointer; republish with `schemarag build`"
        )
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        raise ArtifactError(f"{path}: not text (binary content); republish with `schemarag build`") from None
    return check_key(text, path)


class ModelIdentity(BaseModel):
    """The embedding model the vectors were computed with (compared with the query model)."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())
    name: str
    dimension: int = Field(gt=0)
    onnx_sha256: str | None = None


class FileEntry(BaseModel):
    model_config = ConfigDict(extra="allow")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=0)


class Counts(BaseModel):
    model_config = ConfigDict(extra="allow")
    chunks: int = Field(ge=0)
    tables: int = Field(ge=0)


class Manifest(BaseModel):
    """What the reader relies on; unknown extra fields (build metadata) are kept, not checked."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())
    format_version: int
    key: str = Field(pattern=_KEY.pattern)
    database: str = Field(min_length=1)
    tenant: str | None = None
    dialect: str = "postgres"
    params: dict[str, Any] = Field(default_factory=dict)
    model: ModelIdentity
    counts: Counts
    files: dict[str, FileEntry]
    # what column chunks were embedded with (format.COLUMN_VECTOR_TIERS); absent = "full"
    column_vectors: str = DEFAULT_COLUMN_VECTORS

    @field_validator("column_vectors")
    @classmethod
    def _known_tier(cls, tier: str) -> str:
        if tier not in COLUMN_VECTOR_TIERS:
            raise ValueError(
                f"column vector tier {tier!r} is not one this runtime reads "
                f"({', '.join(COLUMN_VECTOR_TIERS)}); rebuild with `schemarag build` or install "
                "the schemarag version that wrote it"
            )
        return tier

    @field_validator("files")
    @classmethod
    def _confined(cls, files: dict[str, FileEntry]) -> dict[str, FileEntry]:
        for rel in files:
            p = PurePosixPath(rel)
            if not rel or "\\" in rel or "\x00" in rel or p.is_absolute() or ".." in p.parts:
                raise ValueError(
                    f"file path {rel!r} leaves the version folder; only relative paths inside it"
                )
        return files


def read_manifest(folder: Path) -> tuple[Manifest, dict[str, Any]]:
    """``(typed manifest, raw dict)`` of ``folder``; every problem names the file and field."""
    path = folder / MANIFEST
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        raise ArtifactError(f"{folder}: no {MANIFEST}; the artifact is incomplete, rebuild it") from None
    except OSError as exc:
        raise ArtifactError(
            f"{path}: cannot read the manifest: {exc.strerror}; rebuild the artifact"
        ) from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ArtifactError(f"{path}: over {MAX_MANIFEST_BYTES} bytes, not a manifest; rebuild the artifact")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise ArtifactError(
            f"{path}: unreadable manifest ({type(exc).__name__}); rebuild the artifact"
        ) from None
    if not isinstance(data, dict):
        raise ArtifactError(
            f"{path}: the manifest must be a JSON object, got {type(data).__name__}; rebuild the artifact"
        )
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise ManifestMismatchError(
            f"{path}: format_version is {version!r}, this runtime reads {FORMAT_VERSION}; "
            "rebuild with `schemarag build` or install the matching schemarag version"
        )
    try:
        return Manifest.model_validate(data), data
    except ValidationError as exc:
        problems = "; ".join(
            f"{json_path(e['loc'], data)}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors()[:5]
        )
        raise ArtifactError(f"{path}: invalid manifest ({problems}); rebuild the artifact") from None


def check_identity(manifest: Manifest, folder: Path, database: str | None, tenant: str | None) -> None:
    """The manifest must describe the database and tenant whose folder it was found in."""
    if database is None:
        return
    if manifest.database != database or manifest.tenant != tenant:
        raise ManifestMismatchError(
            f"{folder / MANIFEST}: built for database {manifest.database!r} of tenant {manifest.tenant!r}, "
            f"but was found under database {database!r} of tenant {tenant!r}; an index is never served "
            "outside its own namespace: rebuild it there with `schemarag build`"
        )
