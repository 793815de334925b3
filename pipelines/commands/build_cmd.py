"""``schemarag build``: materialize the Dagster asset graph in-process, one run per database.

Databases whose content key is already published are reported ``unchanged`` before Dagster
is even imported: a no-op rebuild costs one hash of the inputs. Live datasources always go
through Dagster, whose first step re-snapshots them; an unchanged fingerprint keeps the key.

    schemarag build [--db X ...] [--tenant T] [--datasources FILE] [--model M] [--force-dagster] [--jobs N]
                    [--schema-partitions-from COLUMNS] [--executor celery --intermediates S3_URI]

``--artifacts s3://bucket/prefix`` builds in a local cache copy and publishes to the bucket
(docs/scale-out.md); runs are recorded in the Dagster instance ``schemarag ui`` opens.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.lib.datasources.tenancy import check_build_tenant, find_datasource
from schemarag.assets.lib.embed_plan import resolve_column_vectors
from schemarag.assets.lib.embed_shards import (
    DEFAULT_SCHEMA_PARTITION_COLUMNS,
    RECOMMENDED_SCHEMA_PARTITION_COLUMNS,
)
from schemarag.assets.lib.inputs import built_key, read_sources
from schemarag.pipelines.commands import build_celery
from schemarag.pipelines.commands.build_feedback import (
    build_progress,
    next_step,
    progress_enabled,
    tenant_selection,
    unknown_database_hint,
)
from schemarag.runtime.artifact.format import COLUMN_VECTOR_TIERS
from schemarag.runtime.artifact.remote import is_remote, local_artifacts
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec
from schemarag.runtime.core.embedding.model_catalog import choices
from schemarag.runtime.core.errors import SchemaFileError, SchemaragError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import data_dir, list_databases, tenants


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db", action="append", default=None, help="database to build (repeatable; default: all)"
    )
    parser.add_argument(
        "--force-dagster",
        action="store_true",
        help="run the Dagster graph even for databases whose key is already published",
    )
    parser.add_argument(
        "--tenant",
        default=None,
        help="tenant to build for: artifacts go to <artifacts>/_tenants/<tenant>/ "
        "(default: each schema file's 'tenant' field)",
    )
    parser.add_argument(
        "--datasources",
        default=None,
        help="datasources file of live databases (default: $SCHEMARAG_DATASOURCES or data/datasources.yaml)",
    )
    parser.add_argument(
        "--model",
        default=None,
        help=f"embedding model: {choices()} (default: $SCHEMARAG_EMBEDDING_MODEL, else minilm-l6); "
        "queries load the model each index was built with",
    )
    parser.add_argument(
        "--column-vectors",
        default=None,
        choices=COLUMN_VECTOR_TIERS,
        help="what column chunks are embedded with: full (default: their chunk text), short (name, "
        "type and description: ~2.4x less embedding per distinct column), bm25 (no vector: found by "
        "name/description words and their table's vector); default $SCHEMARAG_COLUMN_VECTORS, else full",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="databases to build at once, each a Dagster run on the multiprocess executor (default 1); "
        "big multi-schema databases first embed schema by schema in parallel runs",
    )
    parser.add_argument(
        "--schema-partitions-from",
        type=int,
        default=DEFAULT_SCHEMA_PARTITION_COLUMNS,
        metavar="COLUMNS",
        help="with --jobs > 1, fan the embedding of a database with >= 2 schemas and at least this "
        "many columns out to one run per schema (default 0: never, as on one machine it is slower; "
        f"{RECOMMENDED_SCHEMA_PARTITION_COLUMNS:,} on a multi-node executor)",
    )
    build_celery.add_arguments(parser)  # --executor celery, --broker, --intermediates


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    celery = build_celery.builder(args) if args.executor == "celery" else None  # options checked first
    data, artifacts = data_dir(args.data), local_artifacts(args.artifacts)
    raw = args.artifacts or os.environ.get("SCHEMARAG_ARTIFACTS")
    location = raw if is_remote(raw) else artifacts  # a URI: build in the local copy, publish there
    dbs = args.db or list_databases(data)
    if not dbs:
        raise SchemaFileError(f"{data}: no <db>.json schema files found; check --data")
    start = time.perf_counter()
    model = Embedder.get(ModelSpec(name=args.model)).identity
    tier = resolve_column_vectors(args.column_vectors)
    tenant = check_name(args.tenant, "tenant") if args.tenant is not None else None
    if tenant is not None and not args.db:  # only that tenant's databases; say which were left out
        dbs, skipped = tenant_selection(dbs, tenant, data, args.datasources, set(tenants(artifacts)))
        if skipped:
            print(f"skipped {len(skipped)} database(s) not of tenant {tenant!r}: {', '.join(skipped)}")
    todo, rows, failures = [], [], 0
    published: list[tuple[str, str]] = []  # (database, tenant) now served: for the next-step hint
    for db in dbs:
        try:
            if find_datasource(db, args.datasources, tenant) is not None:
                todo.append(db)  # live: only a fresh snapshot (a Dagster step) says whether it changed
                continue
            built = (
                None
                if args.force_dagster
                else built_key(data, db, model, artifacts, tenant=tenant, column_vectors=tier)
            )
            if built is not None and location is artifacts and read_current(built[1]) == built[0]:
                rows.append(f"{db:<24} unchanged key={built[0]}")  # no schema validation needed
                published.append((db, tenant or ""))
                continue
            snap = read_sources(data, db, model, artifacts, tenant=tenant, column_vectors=tier)
            check_build_tenant(snap.database, tenant)
        except SchemaragError as exc:
            rows.append(f"{db:<24} FAILED   {exc}{unknown_database_hint(db, data, args.datasources)}")
            failures += 1
            continue
        remote = location is not artifacts  # the bucket's CURRENT may differ from the local copy's
        if snap.existing and read_current(snap.root) == snap.key and not (args.force_dagster or remote):
            rows.append(f"{db:<24} unchanged key={snap.key}")
            published.append((db, tenant or ""))
        else:
            todo.append(db)
    if todo:
        if not args.quiet:
            _log(f"building {len(todo)} database(s) with Dagster: {', '.join(todo)}")
        from schemarag.assets.resources import EmbeddingModel
        from schemarag.pipelines.build import build_databases

        # --jobs N or Celery: steps run in other processes
        bars = progress_enabled(args.quiet) and args.jobs <= 1 and args.executor != "celery"
        build = celery or build_databases
        with build_progress(todo, bars):
            reports = build(
                todo,
                data,
                location,
                progress=None if (bars or args.quiet) else _log,
                tenant=tenant,
                datasources=args.datasources,
                jobs=max(1, args.jobs),
                schema_partitions_from=args.schema_partitions_from,
                embedding_model=EmbeddingModel(model_name=args.model, column_vectors=tier),
            )
        for r in reports:
            if not r.ok:
                failures += 1
                rows.append(f"{r.database:<24} FAILED   {r.error}")
                continue
            state = "built    " if r.built else "unchanged"
            extra = (f" tenant={r.tenant}" if r.tenant else "") + (
                f" version={r.schema_version}" if r.schema_version else ""
            )
            rows.append(
                f"{r.database:<24} {state} key={r.key} tables={r.tables} chunks={r.chunks} "
                f"embedded={r.embedded} cached={r.cache_hits}{extra}"
            )
            published.append((r.database, r.tenant))
    for row in rows:
        print(row)
    print(f"done in {time.perf_counter() - start:.2f}s; {failures} failed")
    if not args.quiet:
        _log(
            next_step(
                published, data, artifacts=artifacts, data_flag=args.data, artifacts_flag=args.artifacts
            )
        )
    return 1 if failures else 0
