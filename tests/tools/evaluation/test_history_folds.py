"""``schemarag eval --query-log-folds K`` on the bundled samples: each fold's history is the other
folds' gold SQL, imported and built the user's way, and never the fold's own (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.cli import main
from schemarag.runtime.core.schema import load_schema
from schemarag.runtime.ranking.config import DEFAULT_COLUMN_POLICY, SHIPPED
from schemarag.tools.evaluation.history_folds import (
    COLUMN_GRID,
    _union_names,
    assign_folds,
    describe,
    history_grid,
    union_sql,
)
from schemarag.tools.evaluation.questions import load_questions

ROOT = Path(__file__).resolve().parents[3]
QUESTIONS = ROOT / "data" / "questions" / "b2b_saas.jsonl"


def test_folds_are_balanced_per_database_and_seeded() -> None:
    questions = load_questions(QUESTIONS, None)
    folds = assign_folds(questions, 5)
    assert folds == assign_folds(questions, 5), "the same folds on every run"
    sizes = [folds.count(f) for f in range(5)]
    assert max(sizes) - min(sizes) <= 1


def test_history_grid_starts_with_the_shipped_setting_and_holds_no_inert_twin() -> None:
    """Pseudo-statements without a co-usage prior would only tie the setting without them: the
    grid leaves them out, and lists no setting twice."""
    grid = history_grid()
    assert grid[0] == SHIPPED
    described = [tuple(sorted(describe(c).items())) for c in grid[1:]]
    assert len(set(described)) == len(described)
    assert not any(c.history_co_prior and not c.history_co_weight for c in grid)
    assert any(c.history_co_prior for c in grid)


def test_union_sql_names_the_union_tables_and_leaves_ctes_alone() -> None:
    names = {"shop": {"orders": "shop__orders", "users": "shop__users"}}
    sql = (
        "WITH orders AS (SELECT * FROM users) SELECT orders.id FROM orders JOIN users ON users.id = orders.id"
    )
    out = union_sql(sql, "shop", names, "sqlite")
    assert "FROM shop__users" in out and "JOIN shop__users" in out and "shop__users.id" in out
    assert "FROM orders" in out and "shop__orders" not in out, "the CTE keeps its name"


def test_union_names_map_each_source_databases_tables(tmp_path: Path) -> None:
    schema = tmp_path / "u.json"
    schema.write_text(
        json.dumps(
            {"name": "u", "tables": [
                {"name": "a__t", "database": "a", "columns": [{"name": "x"}]},
                {"name": "b__T", "database": "b", "columns": [{"name": "x"}]},
            ]}
        )
    )  # fmt: skip
    assert _union_names(load_schema(schema)) == {"a": {"t": "a__t"}, "b": {"t": "b__T"}}


def _folds_argv(artifacts: Path, work: Path, budgets: str, *extra: str) -> list[str]:
    """``eval --query-log-folds 2`` on the bundled b2b_saas questions, printing JSON."""
    return [
        "eval", "--questions", str(QUESTIONS), "--data", str(ROOT / "data" / "schemas"),
        "--artifacts", str(artifacts), "--no-baselines", "--budgets", budgets, "-q", "--json",
        "--query-log-folds", "2", "--folds-work", str(work), *extra,
    ]  # fmt: skip


def test_query_log_folds_import_and_build_the_other_folds_sql(
    built_artifacts: Path, capsys, tmp_path: Path
) -> None:
    work = tmp_path / "folds"
    argv = _folds_argv(built_artifacts, work, "5,15")
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)
    questions = load_questions(QUESTIONS, None)
    assert payload["questions"] == len(questions) == payload["questions_with_history"]
    for key in ("without_history", "with_history_shipped", "cross_validated"):
        assert set(payload[key]["complete_recall"]) == {"5", "15"}
    # what the history adds to the shown columns, the table ranking fixed: the shipped column
    # policy's row is the shipped figure, and without the history's columns it is no better
    columns = {(c["history_keys"], c["history_weak"]): c for c in payload["history_columns"]}
    assert list(columns) == list(COLUMN_GRID)
    shipped = columns[(DEFAULT_COLUMN_POLICY.history_keys, DEFAULT_COLUMN_POLICY.history_weak)]
    assert shipped["column_srr"] == round(payload["with_history_shipped"]["column_srr"], 4)
    assert columns[(False, 0)]["column_srr"] <= shipped["column_srr"] <= columns[(True, 3)]["column_srr"]
    folds = assign_folds(questions, 2)
    for fold in range(2):
        log = work / "k2_f1" / f"fold{fold}" / "logs" / "b2b_saas.jsonl"
        logged = {json.loads(line)["sql"] for line in log.read_text().splitlines()}
        own = {q.sql for q, f in zip(questions, folds, strict=True) if f == fold}
        others = {q.sql for q, f in zip(questions, folds, strict=True) if f != fold}
        assert logged == others and not (own - others) & logged, "a question's own SQL never in its history"
        history = work / "k2_f1" / f"fold{fold}" / "data" / "b2b_saas" / "history" / "manifest.json"
        assert history.is_file(), "imported with `import queries` into the fold's own data folder"
    assert not (ROOT / "data" / "schemas" / "b2b_saas" / "history").exists(), "the user's folder untouched"

    # a rerun (another grid, a changed stage) finds every fold build published and the scored
    # questions cached in the fold folders: nothing is embedded again, the figures are the same
    cached = [work / "k2_f1" / f"fold{f}" / "scored.pkl" for f in range(2)]
    cached.append(work / "k2_f1" / "scored_without.pkl")
    stamps = [p.stat().st_mtime_ns for p in cached]
    assert main([*argv, "--predictions", str(tmp_path / "pred.jsonl")]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["cross_validated"] == payload["cross_validated"]
    assert [p.stat().st_mtime_ns for p in cached] == stamps

    # --predictions: each question's kept tables without, shipped and held out, as the figures
    rows = [json.loads(line) for line in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert [r["question_id"] for r in rows] == [q.question_id for q in questions]
    assert [r["fold"] for r in rows] == folds
    settings = {"without": "without_history", "shipped": "with_history_shipped"}
    settings["held_out"] = "cross_validated"
    for setting, key in settings.items():
        for b in ("5", "15"):
            complete = sum(set(r["gold"]) <= set(r[f"kept_{setting}"][b]) for r in rows) / len(rows)
            assert complete == pytest.approx(payload[key]["complete_recall"][b]), (setting, b)

    assert main(["eval", *argv[1:10], "-q", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert payload["without_history"]["complete_recall"] == plain["metrics"]["complete_recall"]


def test_keep_literals_imports_the_folds_histories_with_their_values(
    built_artifacts: Path, capsys, tmp_path: Path
) -> None:
    work = tmp_path / "folds"
    assert main(_folds_argv(built_artifacts, work, "5", "--log-fraction", "0.5", "--keep-literals")) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["keep_literals"] is True and "literals kept" in payload["protocol"]
    for fold in range(2):
        manifest = work / "k2_f0.5_lit" / f"fold{fold}" / "data" / "b2b_saas" / "history" / "manifest.json"
        assert json.loads(manifest.read_text())["literals"] == "kept"
    warehouse = ["eval", "--warehouse", str(tmp_path), "--query-log-folds", "2", "--keep-literals"]
    assert main([*warehouse, "--gold-sql", str(tmp_path)]) != 0
    assert "--keep-literals is measured on the BIRD sets only" in capsys.readouterr().err
