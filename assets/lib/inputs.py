"""The inputs of one build and their content key, computed without Dagster or the model.

Used by the ``source_snapshot`` asset, the change sensor and ``schemarag build``'s fast
"unchanged" check, so all three agree on what a key is.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from schemarag.assets.lib.chunking import ChunkingConfig, read_doc_bytes
from schemarag.assets.lib.embed_plan import plan_params, plan_params_for
from schemarag.assets.lib.gc_pause import without_gc
from schemarag.assets.lib.history_arrays import history_params
from schemarag.assets.lib.join_inference import (
    declares_keys,
    declares_keys_raw,
    infer_join_keys,
    join_params,
)
from schemarag.runtime.artifact.format import MANIFEST, compute_key
from schemarag.runtime.core.errors import SchemaFileError, SchemaragError
from schemarag.runtime.core.paths import database_artifacts, docs_dir, history_dir, schema_path
from schemarag.runtime.core.schema import Database, parse_schema
from schemarag.runtime.core.text_tokens import TOKENIZER_CONFIG


@dataclass
class SourceSnapshot:
    """Inputs of one build, as read once; every later stage works from these bytes."""

    database: Database
    schema_bytes: bytes
    doc_bytes: dict[str, bytes]
    key: str
    params: dict
    model: dict
    inputs: dict
    docs_label: str
    existing: bool
    tenant: str | None = None
    root: Path = Path()
    warnings: list[str] = field(default_factory=list)
    # the imported query history's folder when there is one (its hash is in ``params``)
    history: Path | None = None


def build_params(
    chunking: ChunkingConfig, database: Database | None = None, column_vectors: str | None = None
) -> dict:
    """What the key hashes besides the inputs and the model; with ``database``, also the
    embedding plan's version when the database is large enough to be embedded sparingly, and
    the join-inference version when it declares no foreign key, and the column tier when it
    is not the default (:func:`~.embed_plan.plan_params`)."""
    params = {"chunking": json.loads(chunking.to_json()), "tokenizer": TOKENIZER_CONFIG}
    if database is not None:
        params |= plan_params(database, chunking.embed_all_columns_up_to, column_vectors)
        params |= join_params(declares_keys(database))
    return params


def built_key(
    data: Path,
    db: str,
    model: dict,
    artifacts: Path,
    chunking: ChunkingConfig | None = None,
    tenant: str | None = None,
    column_vectors: str | None = None,
) -> tuple[str, Path] | None:
    """``(key, database root)`` when a complete artifact of ``db``'s current inputs exists, else
    None; for ``schemarag build``'s "unchanged" check.

    Unlike :func:`read_sources` it does not validate the schema (1.4 CPU-s of a 120,000-column
    warehouse's no-op rebuild): the key covers the exact schema bytes, and an artifact exists
    only for bytes that validated when it was built. Anything unusual (unreadable file, not a
    JSON object, another name, a tenant other than ``tenant``) returns None, and the caller's
    :func:`read_sources` reports it properly.
    """
    chunking = chunking or ChunkingConfig()
    try:
        raw = schema_path(data, db).read_bytes()
        decoded = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(decoded, dict) or decoded.get("name") != db:
        return None
    if not isinstance(decoded.get("tables"), list):
        return None
    own_tenant = decoded.get("tenant")
    if tenant is not None and own_tenant is not None and own_tenant != tenant:
        return None
    try:
        columns = sum(len(t["columns"]) for t in decoded["tables"])
    except (TypeError, KeyError):
        return None
    docs, _ = read_doc_bytes(docs_dir(data, db), chunking.max_doc_bytes)
    params = build_params(chunking) | plan_params_for(
        columns, chunking.embed_all_columns_up_to, column_vectors
    )
    params |= join_params(declares_keys_raw(decoded))
    try:
        params |= history_params(data, db, tenant or own_tenant)
    except SchemaragError:
        return None
    key = compute_key(raw, docs, params, model)
    root = database_artifacts(artifacts, db, tenant or own_tenant)
    return (key, root) if (root / key / MANIFEST).is_file() else None


@without_gc
def read_sources(
    data: Path,
    db: str,
    model: dict,
    artifacts: Path,
    chunking: ChunkingConfig | None = None,
    tenant: str | None = None,
    column_vectors: str | None = None,
) -> SourceSnapshot:
    """Read and validate inputs; compute the artifact key; note whether it is already built.
    ``column_vectors``: the column tier (None: the default, ``full``)."""
    chunking = chunking or ChunkingConfig()
    spath = schema_path(data, db)
    try:
        raw = spath.read_bytes()
    except FileNotFoundError:
        raise SchemaFileError(f"{spath}: schema file not found; create it or check --data") from None
    try:
        decoded = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SchemaFileError(f"{spath}: not valid UTF-8 JSON ({exc}); fix the file") from None
    database = parse_schema(decoded, spath)
    if database.name != db:
        raise SchemaFileError(
            f"{spath}: 'name' is {database.name!r} but the file is named {db!r}; make them equal"
        )
    ddir = docs_dir(data, db)
    docs, warnings = read_doc_bytes(ddir, chunking.max_doc_bytes)
    params = build_params(chunking, database, column_vectors)
    tenant = tenant or database.tenant
    # only a database with an imported query history gets its hash in the key
    params |= history_params(data, db, tenant)
    key = compute_key(raw, docs, params, model)
    schema_bytes = raw
    if "join_inference" in params:  # no declared keys: the index gets inferred ones (docs/ranking.md)
        database = infer_join_keys(database)
        dumped = database.model_dump(mode="json", exclude_defaults=True) | {"dialect": database.dialect}
        schema_bytes = (json.dumps(dumped, ensure_ascii=False) + "\n").encode()
    inputs = {
        "schema": {"path": str(spath), "sha256": hashlib.sha256(raw).hexdigest()},
        "docs": {n: hashlib.sha256(b).hexdigest() for n, b in sorted(docs.items())},
    }
    history = history_dir(data, db, tenant) if "query_history" in params else None
    if history is not None:
        inputs["query_history"] = {"path": str(history), **params["query_history"]}
    root = database_artifacts(artifacts, db, tenant)
    return SourceSnapshot(
        database=database,
        schema_bytes=schema_bytes,
        doc_bytes=docs,
        key=key,
        params=params,
        model=model,
        inputs=inputs,
        docs_label=str(ddir),
        existing=(root / key / MANIFEST).is_file(),
        tenant=tenant,
        root=root,
        warnings=warnings,
        history=history,
    )
