"""One frozen config: every knob has a stated source, the served ranking reads SHIPPED, and the
evaluation's grids are replacements of it, never retyped values."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from schemarag.runtime.ranking.config import PROVENANCE, SHIPPED, RankingConfig, provenance_gaps
from schemarag.tools.evaluation.warehouse_knobs import WAREHOUSE_FAMILIES, knob_grid, ranking_config

REPO = Path(__file__).resolve().parents[3]


def test_every_knob_says_where_its_value_came_from() -> None:
    assert provenance_gaps() == []
    assert set(PROVENANCE) == {f.name for f in dataclasses.fields(RankingConfig)}
    for name, p in PROVENANCE.items():
        assert p.data, name
        assert p.data == "unmeasured" or p.command or p.note, name


def test_the_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        SHIPPED.name_boost = 1.0  # type: ignore[misc]


def test_each_warehouse_grid_starts_with_the_shipped_setting() -> None:
    for family in WAREHOUSE_FAMILIES:
        first = knob_grid(family)[0]
        assert ranking_config(first) == SHIPPED, family
        for candidate in knob_grid(family):
            ranking_config(candidate)  # every candidate names real fields


def test_no_runtime_module_keeps_a_ranking_number_of_its_own() -> None:
    """The knobs the ranking stages read live in RankingConfig: no ALL_CAPS numeric constant in
    the ranking package (limits and format constants elsewhere are not ranking knobs)."""
    found = []
    for path in sorted((REPO / "runtime" / "ranking").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                for t in targets:
                    named = isinstance(t, ast.Name) and t.id.isupper() and isinstance(value, ast.Constant)
                    if named and isinstance(value.value, int | float) and not isinstance(value.value, bool):
                        found.append(f"{path.name}: {t.id}")
    assert found == []
