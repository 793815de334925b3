"""The shipped history knobs are pooled over the fold sets with equal weight: a setting one set
loves and another pays for loses to one that holds in both."""

from __future__ import annotations

import json
from pathlib import Path

from schemarag.tools.evaluation.history_pool import main, pooled


def _bird(values: dict[float, float]) -> dict:
    return {
        "in_sample_per_candidate": [
            {"history_popularity": p, "complete_recall": {"5": v, "10": v}, "questions": 10}
            for p, v in values.items()
        ]
    }


def _warehouse(values: dict[float, float]) -> dict:
    rows = [
        {
            "candidate": {"history_popularity": p},
            "complete_recall": {"all": {"5": 1.0}, "nontrivial": {"5": v, "20": v}},
        }
        for p, v in values.items()
    ]
    return {"cross_validation": {"in_sample_per_candidate": rows}}


def test_the_pooled_choice_weighs_each_set_the_same() -> None:
    union = _bird({0.0: 0.90, 0.6: 0.95, 0.3: 0.93})  # the union loves popularity
    spider = _warehouse({0.0: 0.80, 0.6: 0.70, 0.3: 0.79})  # the warehouse pays for it
    rows = pooled([union, spider])
    assert [r[0]["history_popularity"] for r in rows] == [0.3, 0.0, 0.6]
    assert rows[0][2] == [0.93, 0.79] and abs(rows[0][1] - 0.86) < 1e-9


def test_a_tie_keeps_the_grid_order_and_only_common_candidates_count(tmp_path: Path, capsys) -> None:
    a = _bird({0.0: 0.9, 0.6: 0.9, 1.0: 0.99})
    b = _bird({0.0: 0.9, 0.6: 0.9})  # 1.0 not scored here: left out
    assert [r[0]["history_popularity"] for r in pooled([a, b])] == [0.0, 0.6]
    paths = []
    for name, payload in (("union", a), ("perdb", b)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(payload))
    assert main([str(p) for p in paths]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("pooled mean CR over 2 sets (per set: union / perdb); 2 candidates")
    assert out[1].startswith("0.9000  [0.9000 0.9000]  popularity=0.0")


def test_leaving_a_set_out_scores_it_with_the_other_sets_choice(tmp_path: Path, capsys) -> None:
    union = _bird({0.0: 0.90, 0.6: 0.95, 0.3: 0.93})
    perdb = _bird({0.0: 0.97, 0.6: 0.96, 0.3: 0.975})
    spider = _warehouse({0.0: 0.80, 0.6: 0.70, 0.3: 0.78})
    paths = []
    for name, payload in (("union", union), ("perdb", perdb), ("spider", spider)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(payload))
    assert main([*map(str, paths), "--leave-one-set-out"]) == 0
    tail = capsys.readouterr().out.splitlines()[-3:]
    # without the union, 0.0 wins on the other two (1.77 against 1.755): the union gets 0.90
    assert tail[0].startswith("union: 0.9000 / 0.9000  popularity=0.0")
    # without perdb, 0.3 wins (1.71 against 1.70): perdb scores it 0.975, above the shipped 0.97
    assert tail[1].startswith("perdb: 0.9750 / 0.9700  popularity=0.3")
    # without spider, 0.6 wins (1.91): spider pays 0.70 against the shipped 0.80
    assert tail[2].startswith("spider: 0.7000 / 0.8000  popularity=0.6")
