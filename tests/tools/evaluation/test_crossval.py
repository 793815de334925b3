"""Leave-one-database-out selection and the symmetric/asymmetric setting label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.ranking.config import SHIPPED as SHIPPED_CONFIG
from schemarag.tools.evaluation.crossval import FAMILIES, Knobs, grid, lodo, objective
from schemarag.tools.evaluation.harness import EvalConfig, input_label
from schemarag.tools.evaluation.metrics import aggregate
from schemarag.tools.importers.writer import import_catalog, input_setting

FIXTURE = Path(__file__).parents[2] / "fixtures" / "bird_small"


def _rec(hit: bool, ratio: float = 0.2) -> dict:
    """One question's record: gold table ``t`` kept (hit) or not."""
    return {
        "gold_tables": ["t"],
        "gold_columns": {"t": ["c"]},
        "kept_by_budget": {5: ["t"] if hit else ["u"]},
        "kept_columns": {"t": ["c"]} if hit else {"u": ["c"]},
        "focused_tokens": int(ratio * 100),
        "full_tokens": 100,
        "latency_ms": 0.0,
    }


def test_lodo_never_scores_a_database_with_a_knob_tuned_on_it() -> None:
    # candidate 0 is right on databases a and b, candidate 1 only on c (and a little on a)
    dbs = ["a", "a", "b", "b", "c", "c"]
    cand0 = [_rec(True), _rec(True), _rec(True), _rec(True), _rec(False), _rec(False)]
    cand1 = [_rec(True), _rec(False), _rec(False), _rec(False), _rec(True), _rec(True)]
    key = objective("tables", 0.3, 8.0)
    held, chosen, overall = lodo([cand0, cand1], dbs, [5], key)
    # b is scored with the winner on a+c (candidate 1, which misses b), a with the tie-break
    # on b+c (0), c with the winner on a+b (0, which misses c): c's own winner is never used
    assert chosen == {"a": 0, "b": 1, "c": 0}
    assert overall == 0
    assert aggregate(held, [5])["complete_recall"]["5"] == pytest.approx(2 / 6)
    in_sample_best_per_db = (2 + 2 + 2) / 6  # what tuning on each database itself would claim
    assert aggregate(held, [5])["complete_recall"]["5"] < in_sample_best_per_db


def test_columns_objective_prefers_feasible_then_recall() -> None:
    key = objective("columns", 0.3, 8.0)
    small_ok = {"column_srr": 0.9, "context_ratio": 0.25}
    better_ok = {"column_srr": 0.95, "context_ratio": 0.29}
    too_big = {"column_srr": 1.0, "context_ratio": 0.5}
    smaller_too_big = {"column_srr": 0.5, "context_ratio": 0.4}
    ranked = sorted([too_big, small_ok, better_ok, smaller_too_big], key=key, reverse=True)
    assert ranked == [better_ok, small_ok, smaller_too_big, too_big]


def test_adaptive_objective_caps_mean_tables() -> None:
    key = objective("adaptive", 0.3, 8.0)
    few = {"mean_tables_kept": 6.0, "metrics_budget": 15, "complete_recall": {"15": 0.9}}
    many = {"mean_tables_kept": 12.0, "metrics_budget": 15, "complete_recall": {"15": 0.99}}
    assert key(few) > key(many)


def test_grids_vary_only_their_family() -> None:
    base = Knobs()
    for family in FAMILIES:
        cands = grid(family, base)
        assert len(cands) == len(set(cands)) > 1
    assert {c.calibration for c in grid("columns")} == {base.calibration}
    assert {c.policy for c in grid("tables")} == {base.policy}
    assert {c.confidence for c in grid("adaptive")} - {None}
    with pytest.raises(ValueError, match="unknown knob family"):
        grid("everything")


def _two_databases(tmp_path: Path) -> Path:
    entry = json.loads((FIXTURE / "tables.json").read_text(encoding="utf-8"))[0]
    other = dict(entry, db_id="other_shop")
    path = tmp_path / "tables.json"
    path.write_text(json.dumps([entry, other]), encoding="utf-8")
    return path


def test_union_records_membership_and_input_symmetry(tmp_path: Path) -> None:
    tables = _two_databases(tmp_path)
    rich = tmp_path / "rich"
    import_catalog(
        [tables],
        rich,
        descriptions=FIXTURE / "descriptions",
        metadata=[FIXTURE / "metadata.json"],
        union="u",
    )
    db = load_schema(rich / "u.json")
    assert {t.database for t in db.tables} == {"debit_card_specializing", "other_shop"}
    assert all(t.name.startswith(f"{t.database}__") for t in db.tables)
    assert input_setting(rich, "u") == {
        "symmetric": False,
        "inputs": {"descriptions+metadata": 1, "schema only": 1},
    }
    label = input_label(EvalConfig(union="u", data=rich))
    assert label["symmetric"] is False and label["label"].startswith("ASYMMETRIC")
    plain = tmp_path / "plain"
    import_catalog([tables], plain, union="u")
    assert input_setting(plain, "u") == {"symmetric": True, "inputs": {"schema only": 2}}
    assert input_label(EvalConfig(union="u", data=plain))["label"].startswith("symmetric")
    assert input_label(EvalConfig(union="u", data=tmp_path / "nowhere"))["symmetric"] is None


def test_hedging_is_cross_validated_end_to_end_and_the_score_cache_follows_the_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`eval --cross-validate hedging` on a real two-database union index; the score cache is
    reused for the same index and questions, and recomputed for other questions."""
    from schemarag.cli import main
    from schemarag.pipelines.build import build_databases
    from schemarag.tools.evaluation.crossval import RouteHedge

    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    import_catalog([_two_databases(tmp_path)], data, descriptions=FIXTURE / "descriptions", union="u")
    assert all(r.ok for r in build_databases(["u"], data, artifacts))
    cache, out = tmp_path / "scored.pkl", tmp_path / "cv.json"
    argv = ["eval", "--questions", str(FIXTURE / "questions.json"), "--data", str(data), "--artifacts",
            str(artifacts), "--union", "u", "--cross-validate", "hedging", "--no-eval", "-q",
            "--scored-cache", str(cache), "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    cv = json.loads(out.read_text())["cross_validation"]
    assert cv["family"] == "hedging" and cv["candidates"] == len(grid("hedging")) == 37
    chosen = cv["chosen_on_all"]["route_hedge"]
    assert chosen is None or RouteHedge(**chosen) in {k.route_hedge for k in grid("hedging")}
    assert cv["cross_validated"]["scored_questions"] == 6
    first = cache.stat().st_mtime_ns
    assert main(argv) == 0 and cache.stat().st_mtime_ns == first  # same index, same questions: reused
    assert main([*argv, "--limit", "2"]) == 0 and cache.stat().st_mtime_ns != first  # other questions
    assert json.loads(out.read_text())["cross_validation"]["cross_validated"]["scored_questions"] == 2
    plain = [*argv[: argv.index("--cross-validate")], "--no-baselines", "-q", "--out", str(out)]
    assert main([*plain, "--no-hedging", "--adaptive"]) == 0  # the ablation and the shipped adaptive rule
    knobs = json.loads(out.read_text())["knobs"]
    assert knobs["hedging"] is False and (knobs["confidence"], knobs["min_tables"]) == (0.5, 5)
    assert main([*plain, "--adaptive", "--confidence", "0.3"]) == 2  # one or the other
    capsys.readouterr()


def test_the_knob_grid_ranks_with_the_value_mentions_serving_ranks_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question's value mentions ("in CZE", "in LAM": words no chunk holds) reach the ranking
    in the cross-validation and the history folds as they do when served: the tables the grid
    scores are the tables ``Retriever.rank_tables`` returns. Mentions lead here (``mention_lead``
    0) so that they decide the first place on this five-table schema."""
    from dataclasses import replace

    from schemarag.pipelines.build import build_databases
    from schemarag.runtime.search.retriever import Retriever
    from schemarag.tools.evaluation.crossval import collect, records_for
    from schemarag.tools.evaluation.history_folds import table_records
    from schemarag.tools.evaluation.questions import load_questions

    data, artifacts = tmp_path / "data", tmp_path / "artifacts"
    import_catalog([FIXTURE / "tables.json"], data, descriptions=FIXTURE / "descriptions")
    assert all(r.ok for r in build_databases(["debit_card_specializing"], data, artifacts))
    lead = replace(SHIPPED_CONFIG, mention_lead=0)
    retriever = Retriever.open("debit_card_specializing", artifacts=artifacts)
    monkeypatch.setattr(retriever, "config", lead)
    sources: dict = {}
    config = EvalConfig(data=data, artifacts=artifacts, budgets=(1, 2))
    scored = collect(load_questions(FIXTURE / "questions.json"), sources, config)
    assert sources["debit_card_specializing"].retriever is retriever
    assert [s.hits for s in scored] == [retriever.mention_hits(s.text, retriever.artifact) for s in scored]
    grid_records = records_for(scored, sources, Knobs(ranking=lead), [1, 2])
    fold_records = table_records(scored, sources, lead, [1, 2])
    served = [{b: list(retriever.rank_tables(s.text, budget=b).tables) for b in (1, 2)} for s in scored]
    kept = [r["kept_by_budget"] for r in grid_records]
    assert kept == served == [r["kept_by_budget"] for r in fold_records]
    unheard = table_records([replace(s, hits=[]) for s in scored], sources, lead, [1, 2])
    assert [r["kept_by_budget"] for r in unheard] != served  # the mentions did move a table
