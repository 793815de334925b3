"""The dbt layer prior end to end: tests/fixtures/dbt_warehouse imported and built with the real
graph, then the analyst questions of tests/fixtures/dbt_rank_questions.json (written for this
fixture) ranked with the default prior and with it off.

What must hold (issue 24): when a mart, report, seed or snapshot answers the question, no staging
model or raw source ranks above it; when only a staging model or source has the data, it is
still offered near the top.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.runtime.search.retriever import Retriever

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
QUESTIONS = json.loads((FIXTURES / "dbt_rank_questions.json").read_text())["questions"]
BUILDING_BLOCKS = ("staging", "source")


@pytest.fixture(scope="module")
def built(dbt_warehouse_index) -> tuple[Path, dict[str, str]]:
    return dbt_warehouse_index.artifacts, dbt_warehouse_index.layers


def _ranks(artifacts: Path, setting: str, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    monkeypatch.setenv("SCHEMARAG_LAYER_PRIOR", setting)
    Retriever.clear_cache()
    retriever = Retriever.open("jaffle_warehouse", artifacts)
    out = [retriever.search(q["question"], table_budget=10).ranking.ranked for q in QUESTIONS]
    Retriever.clear_cache()
    return out


def _position(ranked: list[str], expect: list[str]) -> int:
    return min(ranked.index(e) for e in expect if e in ranked)


def test_every_expected_relation_exists(built):
    _, layers = built
    for q in QUESTIONS:
        assert any(e in layers for e in q["expect"]), q


def test_consumer_layer_first_and_staging_as_fallback(built, monkeypatch):
    artifacts, layers = built
    with_prior = _ranks(artifacts, "consumer_first", monkeypatch)
    without = _ranks(artifacts, "off", monkeypatch)
    top1 = {"consumer_first": 0, "off": 0}
    for q, ranked, plain in zip(QUESTIONS, with_prior, without, strict=True):
        pos = _position(ranked, q["expect"])
        if q["covered_by_consumer"]:
            above = [t for t in ranked[:pos] if layers[t] in BUILDING_BLOCKS]
            assert above == [], (q["question"], above)
            top1["consumer_first"] += pos == 0
            top1["off"] += _position(plain, q["expect"]) == 0
        else:
            assert pos < 3, (q["question"], ranked[:5])
    assert top1["consumer_first"] >= top1["off"]
