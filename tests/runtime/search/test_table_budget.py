"""A table budget makes search() carry the budgeted ranking that `schemarag eval` measures, and
the focused-schema formatter and the generator then use exactly that selection."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from schemarag.cli import main
from schemarag.runtime.formatting import format_focused_schema
from schemarag.runtime.search.retriever import Retriever

QUESTION = "Which accounts have unpaid invoices older than 30 days?"
SAMPLES = Path(__file__).resolve().parents[3] / "data" / "schemas"


def _created(text: str) -> list[str]:
    return re.findall(r"^CREATE TABLE (\S+) \($", text, flags=re.MULTILINE)


def test_search_with_budget_carries_the_ranking_and_the_formatter_uses_it(built_artifacts: Path) -> None:
    r = Retriever.open("b2b_saas", artifacts=built_artifacts)
    plain = r.search(QUESTION)  # the default: the ranking, 15 tables, the default focus
    assert plain.ranking is not None and plain.ranking.focus == "default"
    assert plain.ranking.tables == r.rank_tables(QUESTION, 15).tables
    assert r.search(QUESTION, table_budget=0).ranking is None  # chunks only, on request
    budgeted = r.search(QUESTION, table_budget=4)
    assert budgeted.ranking is not None and 1 <= len(budgeted.ranking.tables) <= 4
    assert budgeted.ranking.tables == r.rank_tables(QUESTION, 4).tables  # the eval's selection
    text = format_focused_schema(r.schema, budgeted)
    assert _created(text) == budgeted.ranking.tables
    for table in budgeted.ranking.tables:  # pruned to the ranking's columns (keys always kept)
        shown = set(budgeted.ranking.columns[table])
        create = text.split(f"CREATE TABLE {table} (", 1)[1].split(");", 1)[0]
        listed = {
            line.split()[0]
            for line in create.strip().splitlines()
            if not line.strip().startswith(("PRIMARY", "FOREIGN", "--"))
        }
        assert listed <= shown | set(r.artifact.ddl[table].key_columns)
        also = [line for line in create.splitlines() if line.strip().startswith("-- also: ")]
        names = also[0].split("-- also: ", 1)[1].split(", ") if also else []
        assert names == budgeted.ranking.compact.get(table, [])  # the rest, by name only


def test_generate_cli_table_budget(built_artifacts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "generate",
            "--artifacts",
            str(built_artifacts),
            "--data",
            str(SAMPLES),
            "--db",
            "b2b_saas",
            "--prompt-only",
            "--json",
            "--use-retrieval",
            "--table-budget",
            "3",
            QUESTION,
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    tables = out["retrieval_metadata"]["tables_included"]
    assert 1 <= len(tables) <= 3
    assert _created(out["messages"][1]["content"]) == tables


def _shown_tables(text: str) -> list[str]:
    """Tables a focused schema shows, as DDL or thinned to a ``-- table t: ...`` names line."""
    return re.findall(r"^(?:CREATE TABLE (\S+) \(|-- table (\S+):)", text, flags=re.MULTILINE)


def test_compact_focus_caps_the_whole_text_and_keeps_every_ranked_table(built_artifacts: Path) -> None:
    from schemarag.runtime.formatting import estimate_tokens, format_full_schema
    from schemarag.runtime.ranking.config import COMPACT_COLUMN_POLICY, DEFAULT_TABLE_BUDGET

    r = Retriever.open("b2b_saas", artifacts=built_artifacts)
    default = r.search(QUESTION, focus="default")
    compact = r.search(QUESTION, focus="compact")
    assert default.ranking is not None and compact.ranking is not None
    assert (default.ranking.focus, compact.ranking.focus) == ("default", "compact")
    assert len(compact.ranking.tables) == DEFAULT_TABLE_BUDGET  # a focus alone ranks 15 tables
    assert default.ranking.token_budget is None
    full = estimate_tokens(format_full_schema(r.schema, r.artifact.ddl))
    cap = compact.ranking.token_budget
    assert cap is not None and cap <= COMPACT_COLUMN_POLICY.context_share * full + 1
    text = format_focused_schema(r.schema, compact)  # DDL and retrieved docs together
    assert estimate_tokens(text) <= cap
    # compact exists to be smaller: never a larger prompt than the default focus (issue 26)
    assert estimate_tokens(text) <= estimate_tokens(format_focused_schema(r.schema, default))
    shown = [a or b for a, b in _shown_tables(text)]
    assert sorted(shown) == sorted(compact.ranking.tables)  # thinned, never dropped
    tight = format_focused_schema(r.schema, compact, token_budget=cap // 2)  # a caller's smaller cap
    assert "-- table " in tight and "-- Retrieved documentation" not in tight  # docs go, then detail
    assert sorted(a or b for a, b in _shown_tables(tight)) == sorted(compact.ranking.tables)
    assert compact.to_dict()["ranking"]["focus"] == "compact"
    assert [t["table"] for t in compact.to_dict()["ranking"]["tables"]] == compact.ranking.tables
    assert r.search(QUESTION, table_budget=0).to_dict()["ranking"] is None  # chunks only: no ranking


def test_focus_and_table_budget_errors_name_the_value(built_artifacts: Path) -> None:
    from schemarag.runtime.core.errors import ConfigError

    r = Retriever.open("b2b_saas", artifacts=built_artifacts)
    with pytest.raises(
        ConfigError, match=r"focus 'compakt' is not one of default, compact; did you mean 'compact'"
    ):
        r.search(QUESTION, focus="compakt")
    with pytest.raises(ConfigError, match=r"table_budget -1: use a whole number >= 1"):
        r.search(QUESTION, table_budget=-1)
    with pytest.raises(ConfigError, match=r"0, chunks only, takes no focus"):
        r.search(QUESTION, table_budget=0, focus="compact")
    assert r.rank_tables(QUESTION, 5, policy="compact").focus == "compact"  # names work here too


def test_retrieve_cli_focus_prints_the_selection(
    built_artifacts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["retrieve", "--artifacts", str(built_artifacts), "--db", "b2b_saas", "--focus", "compact"]
    assert main([*base, "--table-budget", "4", "--json", QUESTION]) == 0
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    assert ranking["focus"] == "compact" and 1 <= len(ranking["tables"]) <= 4
    assert {"table", "score", "columns", "described", "named_only"} <= set(ranking["tables"][0])
    assert main([*base, QUESTION]) == 0
    out = capsys.readouterr().out
    assert "focused tables (compact focus, 15 kept, capped at " in out
    assert main([*base, "--table-budget", "0", QUESTION]) == 2
    assert "--table-budget 0 ranks no tables; --focus and --adaptive need a budget" in capsys.readouterr().err
    assert main([*base[:-2], "--table-budget", "-2", QUESTION]) == 2
    assert "--table-budget -2: use a whole number >= 1" in capsys.readouterr().err


def test_adaptive_search_keeps_at_most_the_ceiling_and_says_so(
    built_artifacts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from schemarag.runtime.ranking.config import ADAPTIVE_BUDGET, AdaptiveBudget

    r = Retriever.open("b2b_saas", artifacts=built_artifacts)
    fixed = r.search(QUESTION, table_budget=15)
    adaptive = r.search(QUESTION, adaptive=True)  # a ceiling of 15 unless a table budget is given
    assert adaptive.ranking is not None and adaptive.ranking.adaptive and not fixed.ranking.adaptive
    kept = adaptive.ranking.tables
    assert ADAPTIVE_BUDGET.min_tables <= len(kept) < len(fixed.ranking.tables) == 15
    assert kept == fixed.ranking.tables[: len(kept)]  # the same order, cut where evidence thins out
    strict = r.search(QUESTION, table_budget=15, adaptive=AdaptiveBudget(confidence=0.99, min_tables=2))
    loose = r.search(QUESTION, table_budget=15, adaptive=AdaptiveBudget(confidence=0.0))
    assert (
        len(strict.ranking.tables) <= len(kept) < len(loose.ranking.tables) == 15
    )  # a cut of 0 cuts nothing
    assert strict.ranking.tables[:2] == fixed.ranking.tables[:2]  # the floor (FK partners may follow)
    assert (
        main(["retrieve", "--artifacts", str(built_artifacts), "--db", "b2b_saas", "--adaptive", QUESTION])
        == 0
    )
    assert f"(default focus, adaptive, {len(kept)} kept; rank, score)" in capsys.readouterr().out


def test_compact_is_never_larger_than_default_on_any_bundled_question(built_artifacts: Path) -> None:
    """Issue 26: compact gave a larger prompt than default on b2b_saas (2,223 vs 1,992 tokens).
    Its cap is also bounded by the default focus of the same tables, question by question."""
    from schemarag.runtime.formatting import estimate_tokens
    from schemarag.tools.evaluation.questions import load_questions

    r = Retriever.open("b2b_saas", artifacts=built_artifacts)
    questions = load_questions(SAMPLES.parent / "questions" / "b2b_saas.jsonl", None)
    assert len(questions) >= 10
    for q in questions:
        sizes = {
            focus: estimate_tokens(format_focused_schema(r.schema, r.search(q.question, focus=focus)))
            for focus in ("default", "compact")
        }
        assert sizes["compact"] <= sizes["default"], (q.question, sizes)
