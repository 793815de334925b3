"""The dbt layer prior on real (in-memory) artifacts: weights per table, the setting, no-op
without layers. The end-to-end effect on a built dbt index is tests/tools/importers/test_dbt_ranking.py."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tiny_support import in_memory_artifact

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.search.layer_prior import (
    CONSUMER_FIRST,
    apply_layer_prior,
    layer_weights,
    parse_setting,
)


def _schema(layers: list[str | None]) -> dict[str, Any]:
    tables = []
    for i, layer in enumerate(layers):
        table: dict[str, Any] = {"name": f"s.t{i}", "columns": [{"name": "id", "type": "INT"}]}
        if layer is not None:
            table["layer"] = layer
        tables.append(table)
    return {"name": "wh", "tables": tables}


def _art(layers: list[str | None]):
    schema = _schema(layers)
    return in_memory_artifact(schema, [(t["name"], "table", None) for t in schema["tables"]])


def test_weights_follow_each_tables_layer():
    art = _art(["marts", "staging", "source", None])
    weights = layer_weights(art)
    assert weights is not None
    by_table = dict(zip(art.table_names, weights.tolist(), strict=True))
    assert by_table["s.t0"] == CONSUMER_FIRST["marts"]
    assert by_table["s.t1"] == pytest.approx(CONSUMER_FIRST["staging"])
    assert by_table["s.t2"] == pytest.approx(CONSUMER_FIRST["source"])
    assert by_table["s.t3"] == 1.0  # no layer: left alone


def test_a_mart_with_weaker_evidence_beats_staging_until_it_no_longer_covers_the_question():
    art = _art(["marts", "staging"])
    close = apply_layer_prior(art, np.array([0.8, 0.9], dtype=np.float32), env={})
    assert close[0] > close[1]
    uncovered = apply_layer_prior(art, np.array([0.3, 0.9], dtype=np.float32), env={})
    assert uncovered[1] > uncovered[0]  # staging stays the fallback


def test_off_and_databases_without_layers_leave_scores_unchanged():
    scores = np.array([0.2, 0.9], dtype=np.float32)
    assert (
        apply_layer_prior(_art(["marts", "staging"]), scores, env={"SCHEMARAG_LAYER_PRIOR": "off"}) is scores
    )
    assert apply_layer_prior(_art([None, None]), scores, env={}) is scores


def test_overrides_and_bad_settings():
    weights = parse_setting("staging=0.9, source=0.7")
    assert weights["staging"] == 0.9 and weights["source"] == 0.7 and weights["marts"] == 1.0
    art = _art(["staging"])
    env = {"SCHEMARAG_LAYER_PRIOR": "staging=0.9"}
    assert apply_layer_prior(art, np.array([1.0], dtype=np.float32), env=env)[0] == pytest.approx(0.9)
    for bad in ("stagin=0.5", "staging=2", "staging", "staging=x"):
        with pytest.raises(ConfigError, match="SCHEMARAG_LAYER_PRIOR"):
            parse_setting(bad)
