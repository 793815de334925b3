"""``schemarag list [--tenant T] [--json]``: the indexes built in the artifacts folder.

One row per published database, default namespace first, then each tenant's: its tables and
chunks, the published key, when it was built and with which embedding model (all from the
version's manifest.json). The local owner's view of the folder, so it names every tenant; a
server lists only the caller's databases (``GET /v1/databases``).

Example:
    $ schemarag list
    database   tenant  tables  chunks  key           built at              model
    ecommerce  -       3       41      3f9c2a1b7d0e  2026-11-27T21:40:02Z  BAAI/bge-small-en-v1.5
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from schemarag.runtime.artifact.manifest import read_manifest
from schemarag.runtime.artifact.reader import current_key
from schemarag.runtime.core.errors import ArtifactError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import artifacts_dir, database_artifacts, published_databases, tenants

COLUMNS = ("database", "tenant", "tables", "chunks", "key", "built_at", "model")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", default=None, help="only this tenant's databases")
    parser.add_argument("--json", action="store_true", help="a JSON list of rows instead of the table")


def index_rows(artifacts: Path, tenant: str | None = None) -> list[dict[str, Any]]:
    """A row per published index: ``database``, ``tenant``, ``tables``, ``chunks``, ``key``,
    ``built_at``, ``model`` (an unreadable version gets ``error`` instead of the counts)."""
    spaces = [tenant] if tenant is not None else [None, *tenants(artifacts)]
    rows = []
    for space in spaces:
        for db in published_databases(artifacts, space):
            root = database_artifacts(artifacts, db, space)
            row: dict[str, Any] = dict.fromkeys(COLUMNS)
            row.update(database=db, tenant=space)
            try:
                key = current_key(root)
                row["key"] = key
                info, raw = read_manifest(root / str(key))
                row.update(
                    tables=info.counts.tables,
                    chunks=info.counts.chunks,
                    built_at=raw.get("built_at"),
                    model=info.model.name,
                )
            except ArtifactError as exc:
                row["error"] = str(exc)
            rows.append(row)
    return rows


def _table(rows: list[dict[str, Any]]) -> list[str]:
    head = ["database", "tenant", "tables", "chunks", "key", "built at", "model"]
    cells = [
        [
            str(r["database"]),
            r["tenant"] or "-",
            *(str(r[c]) if r[c] is not None else "?" for c in ("tables", "chunks")),
            (r["key"] or "?")[:12],
            r["built_at"] or "?",
            r["model"] or f"unreadable: {r.get('error', '')}",
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *cells, strict=False)]
    return [
        "  ".join(x.ljust(w) for x, w in zip(line, widths, strict=True)).rstrip() for line in [head, *cells]
    ]


def run(args: argparse.Namespace) -> int:
    artifacts = artifacts_dir(args.artifacts)
    tenant = check_name(args.tenant, "tenant") if args.tenant is not None else None
    rows = index_rows(artifacts, tenant)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print("\n".join(_table(rows)))
    if not rows and not args.quiet:
        where = f"for tenant {tenant!r} " if tenant else ""
        print(f"no index built {where}in {artifacts.absolute()}; run `schemarag build`", file=sys.stderr)
    return 0
