"""``schemarag docs``: snapshot live datasources and write editable docs.

    schemarag docs init --datasource shop [--datasources data/datasources.yaml] [--data DIR] [--force]
    schemarag docs snapshot --datasource shop [--json]     # introspect only, write nothing
    schemarag docs list                                     # the configured datasources

``init`` never overwrites a doc someone edited: it merges new columns in and marks dropped
ones. An unchanged database keeps its schema version and JSON, so no rebuild follows.
"""

from __future__ import annotations

import argparse
import json
import sys

from schemarag.runtime.core.paths import data_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("init", "snapshot", "list"), help="what to do")
    parser.add_argument("--datasource", help="datasource name from the datasources file")
    parser.add_argument(
        "--datasources",
        default=None,
        help="datasources file (default: $SCHEMARAG_DATASOURCES or data/datasources.yaml)",
    )
    parser.add_argument("--force", action="store_true", help="init: rewrite the JSON even if unchanged")
    parser.add_argument("--json", action="store_true", help="snapshot: print the snapshot JSON")


def run(args: argparse.Namespace) -> int:
    from schemarag.assets.lib.datasources import docs_init, get_datasource, load_datasources, take_snapshot
    from schemarag.runtime.core.errors import ConfigError

    if args.action == "list":
        for e in load_datasources(args.datasources):
            print(f"{e.name}\tkind={e.kind}\ttenant={e.tenant}\tschemas={','.join(e.effective_schemas())}")
        return 0
    if not args.datasource:
        raise ConfigError(f"docs {args.action}: --datasource NAME is required (see 'schemarag docs list')")
    entry = get_datasource(args.datasource, args.datasources)
    if args.action == "snapshot":
        snap = take_snapshot(entry)
        if args.json:
            print(json.dumps(snap.database.model_dump(mode="json"), indent=2, ensure_ascii=False))
        else:
            db = snap.database
            print(
                f"{entry.name} (tenant {entry.tenant}): {len(db.tables)} tables, "
                f"{sum(len(t.columns) for t in db.tables)} columns, version {db.schema_version}, "
                f"fingerprint {snap.fingerprint}, introspection {snap.seconds:.2f}s"
            )
            for join in snap.inferred_joins:
                print(f"  inferred join: {join}")
        return 0
    res = docs_init(entry, data_dir(args.data), force=args.force)
    state = "changed" if res.changed else "unchanged"
    print(
        f"{res.name} (tenant {res.tenant}): {res.tables} tables, {res.columns} columns, "
        f"version {res.version}, fingerprint {res.fingerprint[:16]}, {state}"
    )
    print(f"  schema: {res.schema_file} ({'written' if res.json_written else 'kept'})")
    print(
        f"  docs:   {res.docs_folder}: {len(res.created)} created, {len(res.merged)} merged, "
        f"{len(res.dropped_tables)} marked dropped"
    )
    for label, items in (
        ("created", res.created),
        ("merged", res.merged),
        ("marked dropped", res.dropped_tables),
        ("skipped tables", res.skipped_tables),
        ("PII columns (not sampled)", res.pii_columns),
        ("inferred joins", res.inferred_joins),
    ):
        if items:
            shown = ", ".join(items[:20]) + (f", ... ({len(items)} total)" if len(items) > 20 else "")
            print(f"  {label}: {shown}")
    print(f"  timing: introspection {res.snapshot_seconds:.2f}s, total {res.total_seconds:.2f}s")
    if not getattr(args, "quiet", False):  # the one line a new user needs: what to run now
        where = f" --data {args.data}" if args.data else ""
        tenant = f" --tenant {res.tenant}" if res.tenant else ""
        print(
            f"next: edit {res.docs_folder}, then schemarag build{where}{tenant} --db {res.name}",
            file=sys.stderr,
        )
    return 0
