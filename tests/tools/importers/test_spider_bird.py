"""The Spider/BIRD importer on a damaged slice of BIRD dev and on hand-made catalogs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from schemarag.assets.lib.docs_writer import doc_file_name
from schemarag.assets.lib.markdown_docs import parse_markdown
from schemarag.cli import main
from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.metadata import MAX_SAMPLES, MAX_VALUE_CHARS
from schemarag.tools.importers.writer import import_catalog

FIXTURE = Path(__file__).parents[2] / "fixtures" / "bird_small"
BENCH = Path("/work/shared/benchmarks")


@pytest.fixture
def imported(tmp_path: Path):
    report = import_catalog(
        [FIXTURE / "tables.json"],
        tmp_path,
        descriptions=FIXTURE / "descriptions",
        metadata=[FIXTURE / "metadata.json"],
    )
    return report, load_schema(tmp_path / "debit_card_specializing.json"), tmp_path


def test_import_loads_with_the_schema_loader(imported) -> None:
    report, db, _ = imported
    assert db.dialect == "sqlite"
    assert [t.name for t in db.tables] == [
        "customers",
        "gasstations",
        "products",
        "transactions_1k",
        "yearmonth",
    ]
    assert report.tables == 5 and report.databases == ["debit_card_specializing"]
    ym = db.table("yearmonth")
    assert ym.primary_key == ["CustomerID", "Date"]  # composite key from a nested list
    assert ym.column("CustomerID").foreign_key.table == "customers"


def test_a_natural_name_that_says_more_than_the_name_becomes_the_tables_label(imported) -> None:
    _, db, _ = imported
    labels = {t.name: t.label for t in db.tables}
    # "year and month" says more than the glued name does
    assert labels["yearmonth"] == "year and month"
    # the others only spell the name out ("gas stations", "transactions" for transactions_1k): the
    # name matching reads those already, and the schema stays as it was imported before labels
    assert labels == {"yearmonth": "year and month", "customers": None, "gasstations": None,
                      "products": None, "transactions_1k": None}  # fmt: skip


def test_cp1252_missing_file_and_unknown_column_are_warnings(imported) -> None:
    report, db, _ = imported
    assert db.table("customers").column("CustomerID").description == "the customer’s identification"
    joined = "\n".join(report.warnings)
    assert "customers.csv: not UTF-8, decoded as cp1252" in joined
    assert "no description file products.csv" in joined
    assert "unknown column 'BogusColumn'" in joined
    assert db.table("yearmonth").column("BogusColumn") is None


def test_metadata_fills_samples_and_stats_but_never_ai_descriptions(imported) -> None:
    _, db, out = imported
    segment = db.table("customers").column("Segment")
    assert segment.sample_values == ["SME", "LAM", "KAM"]
    assert segment.stats["unique_count"] == 3 and segment.stats["null_fraction"] == 0.0
    text = (out / "debit_card_specializing.json").read_text(encoding="utf-8")
    docs = "".join(
        p.read_text(encoding="utf-8") for p in (out / "debit_card_specializing" / "docs").glob("*.md")
    )
    # ai_description text of customers.CustomerID in metadata.json
    assert "ranging from 3 to 53314" not in text + docs
    for table in db.tables:
        for col in table.columns:
            assert len(col.sample_values) <= MAX_SAMPLES
            assert all(len(v) <= MAX_VALUE_CHARS for v in col.sample_values)


def test_docs_are_our_markdown_format(imported) -> None:
    _, db, out = imported
    docs = out / "debit_card_specializing" / "docs"
    assert sorted(p.name for p in docs.glob("*.md")) == sorted(
        ["_index.md", *(doc_file_name(t.name) for t in db.tables)]
    )
    parsed = parse_markdown((docs / "yearmonth.md").read_text(encoding="utf-8"), "yearmonth.md")
    assert parsed.name == "yearmonth"
    columns = next(s for s in parsed.sections if s.title == "Columns")
    assert [c.title for c in columns.children] == ["CustomerID", "Date", "Consumption"]
    assert "`yearmonth.CustomerID = customers.CustomerID`" in (docs / "yearmonth.md").read_text()
    assert (docs / "_index.md").read_text().startswith("# Database: debit_card_specializing")


def _catalog(db_id: str, tables: list[str]) -> dict:
    columns = [[-1, "*"]]
    for i, _ in enumerate(tables):
        columns += [[i, "id"], [i, "parent id"]]
    return {
        "db_id": db_id,
        "table_names_original": tables,
        "table_names": [t.lower() for t in tables],
        "column_names_original": columns,
        "column_types": ["text"] + ["integer"] * (len(columns) - 1),
        "primary_keys": [1, 3],
        "foreign_keys": [[4, 1]],
    }


def test_union_names_tables_and_keeps_foreign_keys_within_each_database(tmp_path: Path) -> None:
    path = tmp_path / "tables.json"
    path.write_text(json.dumps([_catalog("a", ["Sales Team", "x/y"]), _catalog("b", ["Sales Team", "z"])]))
    report = import_catalog([path], tmp_path / "out", kind="spider", union="pool")
    db = load_schema(tmp_path / "out" / "pool.json")
    assert [t.name for t in db.tables] == ["a__Sales Team", "a__x/y", "b__Sales Team", "b__z"]
    assert db.foreign_keys() == [
        ("a__x/y", "parent id", "a__Sales Team", "id"),
        ("b__z", "parent id", "b__Sales Team", "id"),
    ]
    docs = tmp_path / "out" / "pool" / "docs"
    names = {p.name for p in docs.glob("*.md")}
    assert doc_file_name("a__x/y") in names and "/" not in doc_file_name("a__x/y")
    assert (docs / doc_file_name("a__Sales Team")).read_text().startswith("# Table: a__Sales Team\n")
    assert report.tables == 4 and report.warnings == []


def test_tables_flag_pools_files_and_rejects_duplicate_databases(tmp_path: Path, capsys) -> None:
    for name in ("one", "two"):
        (tmp_path / f"{name}.json").write_text(json.dumps([_catalog(name, ["t", "u"])]))
    code = main(["import", "spider", "--tables", f"{tmp_path}/one.json,{tmp_path}/two.json",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out").glob("*.json")) == ["one.json", "two.json"]
    with pytest.raises(ImportFormatError, match="appears twice"):
        import_catalog([tmp_path / "one.json", tmp_path / "one.json"], tmp_path / "dup")


def test_bad_tables_file_is_one_error_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    assert main(["import", "bird", "--tables", str(tmp_path / "bad.json"), "--out", str(tmp_path)]) == 2
    assert "not a JSON tables file" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.skipif(not BENCH.is_dir(), reason="BIRD benchmark files not present")
def test_full_bird_union_of_dev_and_train(tmp_path: Path) -> None:
    started = time.perf_counter()
    report = import_catalog(
        [BENCH / "bird_dev" / "dev_tables.json", BENCH / "bird_train" / "train_tables.json"],
        tmp_path,
        descriptions=BENCH / "bird_dev" / "descriptions",
        metadata=[BENCH / "bird_dev" / "dev_metadata.json"],
        union="bird_union",
    )
    db = load_schema(tmp_path / "bird_union.json")
    assert len(db.tables) == 597 == report.tables
    assert len(list((tmp_path / "bird_union" / "docs").glob("*.md"))) == 598
    assert db.table("california_schools__frpm").column("Free Meal Count (K-12)") is not None
    print(f"union import: {time.perf_counter() - started:.2f}s")
