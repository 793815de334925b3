"""The coded-name BIRD set: every identifier a code, the words in the dictionary, the gold the same."""

from __future__ import annotations

import json
import re
from pathlib import Path

from schemarag.runtime.core.schema import load_schema
from schemarag.tools.evaluation.coded_names import Codes, coded_sql, main
from schemarag.tools.evaluation.gold import SchemaView, gold_from_sql
from schemarag.tools.importers.writer import import_catalog

FIXTURE = Path(__file__).parents[2] / "fixtures" / "bird_small"
DB = "debit_card_specializing"


def _coded(tmp_path: Path) -> Path:
    out = tmp_path / "coded"
    argv = ["--tables", str(FIXTURE / "tables.json"), "--descriptions", str(FIXTURE / "descriptions"),
            "--questions", str(FIXTURE / "questions.json"), "--out", str(out),
            "--dev-only", str(out / "dev_tables.json")]  # fmt: skip
    assert main(argv) == 0
    # the per-database file holds the databases the questions ask about, coded as tables.json does
    assert json.loads((out / "dev_tables.json").read_text()) == json.loads((out / "tables.json").read_text())
    return out


def test_every_identifier_becomes_a_code_and_the_words_move_to_the_dictionary(tmp_path: Path) -> None:
    out = _coded(tmp_path)
    data = tmp_path / "data"
    import_catalog([out / "tables.json"], data, descriptions=out / "descriptions", strip_foreign_keys=True)
    db = load_schema(data / f"{DB}.json")
    original = json.loads((FIXTURE / "tables.json").read_text())[0]
    assert len(db.tables) == len(original["table_names_original"])
    for table in db.tables:
        assert re.fullmatch(r"[A-Z]{3}[0-9]", table.name), table.name
        assert all(re.fullmatch(r"[A-Z]{5}", c.name) for c in table.columns), table.name
        assert all(c.foreign_key is None for c in table.columns)
    # the dictionary names each column in words (BIRD's short text, else its natural name)
    codes = json.loads((out / "codes.json").read_text())[DB]
    customers = next(t for t in db.tables if t.name == codes["tables"]["customers"])
    segment = next(c for c in customers.columns if c.name == codes["columns"]["segment"])
    assert "segment" in segment.description.lower()
    assert "customers" in customers.description.lower()  # the table's short text


def test_the_rewritten_gold_reads_the_same_tables_and_columns_under_their_codes(tmp_path: Path) -> None:
    out = _coded(tmp_path)
    plain, coded = tmp_path / "plain", tmp_path / "data"
    import_catalog([FIXTURE / "tables.json"], plain)
    import_catalog([out / "tables.json"], coded, descriptions=out / "descriptions")
    before = SchemaView(load_schema(plain / f"{DB}.json"))
    after = SchemaView(load_schema(coded / f"{DB}.json"))
    codes = json.loads((out / "codes.json").read_text())[DB]
    questions = json.loads((FIXTURE / "questions.json").read_text())
    rewritten = json.loads((out / "questions.json").read_text())
    assert len(rewritten) == len(questions)
    for q, r in zip(questions, rewritten, strict=True):
        g0, g1 = gold_from_sql(q["SQL"], before), gold_from_sql(r["SQL"], after)
        assert g0.tables, q["SQL"]
        assert sorted(codes["tables"][t.lower()] for t in g0.tables) == sorted(g1.tables)
        for t, cols in g0.columns.items():
            assert sorted(codes["columns"][c.lower()] for c in cols) == g1.columns[codes["tables"][t.lower()]]
        assert r["evidence"] == ""  # BIRD's evidence names columns: it would undo the codes


def test_an_alias_that_is_not_a_table_is_left_alone_and_literals_stay() -> None:
    codes = Codes(tables={"orders": "ABC1"}, columns={"id": "QWERT", "name": "ASDFG"})
    sql = coded_sql("SELECT o.name, orders.id FROM orders AS o WHERE o.name = 'orders'", codes)
    assert sql == "SELECT o.ASDFG, ABC1.QWERT FROM ABC1 AS o WHERE o.ASDFG = 'orders'"
    assert coded_sql("SELECT FROM WHERE (", codes) is None


def test_codes_are_deterministic_and_shared_by_same_named_columns() -> None:
    entry = {"db_id": "d", "table_names_original": ["a", "b"],
             "column_names_original": [[-1, "*"], [0, "id"], [1, "ID"], [1, "x"]]}  # fmt: skip
    one, two = Codes.of(entry), Codes.of(entry)
    assert one == two
    assert set(one.columns) == {"id", "x"}  # `id` of a and `ID` of b: one code, as an ERP key
    assert len(set(one.tables.values())) == 2


def test_flat_holds_every_databases_tables_in_one_and_the_gold_still_reads_them(tmp_path: Path) -> None:
    """``--flat NAME``: the shape of a warehouse of hundreds of coded tables in one schema."""
    entry = json.loads((FIXTURE / "tables.json").read_text())[0]
    questions = json.loads((FIXTURE / "questions.json").read_text())
    copy = "debit_card_copy"  # a second database: its codes differ (they hash the database's name)
    (tmp_path / "tables.json").write_text(json.dumps([entry, {**entry, "db_id": copy}]))
    (tmp_path / "questions.json").write_text(
        json.dumps(questions + [{**q, "db_id": copy} for q in questions])
    )
    out = tmp_path / "coded"
    argv = ["--tables", str(tmp_path / "tables.json"), "--descriptions", str(FIXTURE / "descriptions"),
            "--questions", str(tmp_path / "questions.json"), "--out", str(out),
            "--flat", "warehouse"]  # fmt: skip
    assert main(argv) == 0
    per_db, flat = tmp_path / "per_db", tmp_path / "flat"
    import_catalog([out / "tables.json"], per_db, descriptions=out / "descriptions", strip_foreign_keys=True)
    import_catalog([out / "flat" / "tables.json"], flat, descriptions=out / "flat" / "descriptions",
                   strip_foreign_keys=True)  # fmt: skip
    one = load_schema(flat / "warehouse.json")
    sources = [load_schema(per_db / f"{db}.json") for db in (DB, copy)]
    assert sorted(t.name for t in one.tables) == sorted(t.name for s in sources for t in s.tables)
    assert len(one.tables) == 2 * len(entry["table_names_original"])
    by_name = {t.name: t for t in one.tables}
    for source in sources:  # every table keeps its columns, keys and dictionary text
        for t in source.tables:
            moved = by_name[t.name]
            assert [(c.name, c.primary_key, c.description) for c in moved.columns] == [
                (c.name, c.primary_key, c.description) for c in t.columns
            ]
            assert moved.description.split(" (")[0] == t.description.split(" (")[0]
    asked = json.loads((out / "flat" / "questions.json").read_text())
    coded = json.loads((out / "questions.json").read_text())
    assert {q["db_id"] for q in asked} == {"warehouse"} and len(asked) == len(coded)
    views = {s.name: SchemaView(s) for s in sources}
    view = SchemaView(one)
    for q, r in zip(coded, asked, strict=True):  # the gold reads the same coded tables in the flat one
        assert r["SQL"] == q["SQL"]
        assert gold_from_sql(r["SQL"], view).tables == gold_from_sql(q["SQL"], views[q["db_id"]]).tables


def test_flat_refuses_two_databases_with_one_table_code() -> None:
    import pytest

    from schemarag.tools.evaluation.coded_names import flat_entry

    entry = {"db_id": "a", "table_names_original": ["AAA1"], "column_names_original": [[-1, "*"]],
             "column_names": [[-1, "*"]], "column_types": ["text"]}  # fmt: skip
    with pytest.raises(ValueError, match="AAA1 is in both a and b"):
        flat_entry([entry, {**entry, "db_id": "b"}], "flat")
