"""Fixtures shared by the runtime tests: tiny real indexes (see ``tiny_support``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_support import ACME_CRM, GLOBEX_HR, SHOP, build, write_schema

SHOP_COPIES = ("shop_a", "shop_b", "shop_c")


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(data, artifacts)``: ``shop`` and three renamed copies in the default namespace, and
    ``globex_hr`` / ``acme_crm`` under their tenants (read-only for tests)."""
    base = tmp_path_factory.mktemp("tiny")
    data, artifacts = base / "schemas", base / "artifacts"
    names = [write_schema(data, SHOP), *(write_schema(data, SHOP, n) for n in SHOP_COPIES)]
    write_schema(data, GLOBEX_HR)
    write_schema(data, ACME_CRM)
    build([*names, "globex_hr", "acme_crm"], data, artifacts)
    return data, artifacts
