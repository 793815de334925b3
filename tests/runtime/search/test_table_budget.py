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
    plain = r.search(QUESTION)
    assert plain.ranking is None
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
    tables = out["retrievalMetadata"]["tablesIncluded"]
    assert 1 <= len(tables) <= 3
    assert _created(out["messages"][1]["content"]) == tables
