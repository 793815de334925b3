"""``bench joins``: BIRD dev databases regenerated from their statistics, FKs left out, found again.

Skips when the BIRD dev statistics are not on this machine. Asserts what the rules must do on
two small databases, not a score: both of thrombosis_prediction's declared keys are found from
values and nothing else is inferred, and toxicology's text keys are found.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schemarag.tools.benchmarks.joins_bench import BIRD, measure

pytestmark = pytest.mark.skipif(
    not (BIRD / "dev_metadata.json").is_file(), reason=f"BIRD dev statistics not found under {BIRD}"
)


def test_regenerated_bird_databases_get_their_declared_keys_back() -> None:
    results = measure(Path(BIRD), 500, ["thrombosis_prediction", "toxicology"], seed=0)
    rows = {r["db"]: r for r in results["databases"]}
    thrombosis = rows["thrombosis_prediction"]["values"]
    assert (thrombosis["tp"], thrombosis["predicted"]) == (2, 2)
    toxicology = rows["toxicology"]["values"]
    assert toxicology["tp"] == rows["toxicology"]["gold"] == toxicology["predicted"]
