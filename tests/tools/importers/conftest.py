"""Shared fixtures of the importer tests: the dbt_warehouse fixture imported and built once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


@dataclass(frozen=True)
class BuiltDbt:
    """tests/fixtures/dbt_warehouse imported (data/) and built with the real graph (artifacts/)."""

    data: Path
    artifacts: Path
    layers: dict[str, str]  # relation name -> layer


@pytest.fixture(scope="session")
def dbt_warehouse_index(tmp_path_factory: pytest.TempPathFactory) -> BuiltDbt:
    from schemarag.pipelines.build import build_databases
    from schemarag.tools.importers.dbt import import_dbt

    base = tmp_path_factory.mktemp("dbt_warehouse_index")
    import_dbt(FIXTURES / "dbt_warehouse", base / "data")
    reports = build_databases(["jaffle_warehouse"], base / "data", base / "artifacts")
    assert all(r.ok for r in reports), reports
    schema = json.loads((base / "data" / "jaffle_warehouse.json").read_text())
    layers = {t["name"]: t.get("layer", "") for t in schema["tables"]}
    return BuiltDbt(base / "data", base / "artifacts", layers)
