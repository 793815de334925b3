"""``schemarag chunks --db DB [--json]``: show exactly what the chunker makes of a database."""

from __future__ import annotations

import argparse
import json
import sys

from schemarag.assets.lib.chunking import chunk_from_disk
from schemarag.runtime.core.errors import SchemaFileError
from schemarag.runtime.core.paths import data_dir, did_you_mean, docs_dir, list_databases, schema_path
from schemarag.runtime.core.schema import load_schema


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", required=True, help="database name (data/schemas/<db>.json)")
    parser.add_argument("--json", action="store_true", help="print a JSON list of chunk objects")


def run(args: argparse.Namespace) -> int:
    data = data_dir(args.data)
    path = schema_path(data, args.db)
    if not path.is_file():
        hint = (
            did_you_mean(args.db, list_databases(data))
            or f"; databases in {data}: {', '.join(list_databases(data))}"
        )
        raise SchemaFileError(f"{path}: schema file not found{hint}")
    db = load_schema(path)
    result = chunk_from_disk(db, docs_dir(data, args.db))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        json.dump([c.to_dict() for c in result.chunks], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    counts: dict[str, int] = {}
    for c in result.chunks:
        counts[c.chunk_type] = counts.get(c.chunk_type, 0) + 1
    print(
        f"{db.name}: {len(result.chunks)} chunks from {len(result.doc_files)} doc files, "
        + ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
    )
    for c in result.chunks:
        where = f"{c.source_path}:{c.start_line}" if c.source_path else "schema"
        print(f"  {c.chunk_id}  {c.chunk_type:<12} {c.title:<48} {c.tokens:>5} tok  {where}")
    return 0
