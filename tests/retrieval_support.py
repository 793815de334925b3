"""Helpers for the retriever tests: a tiny A->B->C database and private copies of artifacts.

The session ``built_artifacts`` (tests/conftest.py) are read-only, so any test that corrupts,
edits or republishes an index works on a copy made by :func:`copy_database_artifacts`, or on
a database built here into ``tmp_path`` with the real Dagster graph.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from schemarag.runtime.artifact.format import CURRENT

REPO = Path(__file__).resolve().parents[1]

# A chain a -> b -> c (a.b_id references b.id, b.c_id references c.id) with three unrelated
# topics, so a question about one table retrieves that table alone.
CHAIN_SCHEMA = {
    "name": "chain",
    "description": "Parcel shipments, the warehouses they leave from, and the sales regions.",
    "dialect": "sqlite",
    "tables": [
        {
            "name": "a",
            "description": "Parcel shipments handed to a courier.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
                {"name": "tracking_number", "type": "TEXT", "description": "Courier parcel tracking code."},
                {"name": "b_id", "type": "INTEGER", "foreign_key": {"table": "b", "column": "id"}},
            ],
        },
        {
            "name": "b",
            "description": "Warehouse buildings.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
                {"name": "dock_count", "type": "INTEGER", "description": "Loading docks in the building."},
                {"name": "c_id", "type": "INTEGER", "foreign_key": {"table": "c", "column": "id"}},
            ],
        },
        {
            "name": "c",
            "description": "Sales regions.",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True, "nullable": False},
                {"name": "region_name", "type": "TEXT", "description": "Marketing name of the region."},
            ],
        },
    ],
}

CHAIN_DOCS = {
    "a": (
        "Parcel shipments handed to a courier, with the courier's tracking number.",
        "tracking_number",
        "The courier's parcel tracking number printed on the shipping label.",
    ),
    "b": (
        "Warehouse buildings and how many loading docks each building has.",
        "dock_count",
        "Number of loading docks for trucks at the warehouse building.",
    ),
    "c": (
        "Sales regions used by the marketing team for quarterly targets.",
        "region_name",
        "Marketing name of the sales region, for example EMEA North.",
    ),
}


def _chain_doc(table: str) -> str:
    purpose, column, description = CHAIN_DOCS[table]
    return (
        f"# Table: {table}\n\n## Purpose\n\n{purpose}\n\n## Columns\n\n"
        f"### {column}\n\n- **Type:** TEXT\n- **Description:** {description}\n- **Nullable:** yes\n"
    )


def write_chain_data(data: Path) -> Path:
    """Write chain.json and its docs under ``data`` (a schemas folder); return ``data``."""
    data.mkdir(parents=True, exist_ok=True)
    (data / "chain.json").write_text(json.dumps(CHAIN_SCHEMA, indent=1), encoding="utf-8")
    docs = data / "chain" / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for table in CHAIN_DOCS:
        (docs / f"{table}.md").write_text(_chain_doc(table), encoding="utf-8")
    return data


def build(dbs: list[str], data: Path, artifacts: Path) -> None:
    from schemarag.pipelines.build import build_databases

    reports = build_databases(dbs, data, artifacts)
    failed = [r for r in reports if not r.ok]
    assert not failed, failed


def copy_database_artifacts(built: Path, db: str, dest: Path) -> Path:
    """Copy one database's artifact folder (all versions + CURRENT) and the embedding cache."""
    shutil.copytree(built / db, dest / db)
    if (built / "_cache").is_dir():
        shutil.copytree(built / "_cache", dest / "_cache")
    return dest


def current_folder(artifacts: Path, db: str) -> Path:
    root = artifacts / db
    return root / (root / CURRENT).read_text(encoding="utf-8").strip()
