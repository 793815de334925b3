"""A catalog export given as a file, a folder of unload parts or a glob; parts that resolve outside
the folder the user named (symlinks, ``..``) are refused with one warning naming the file."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.schema import load_schema
from schemarag.tools.importers.catalog_export import import_catalog_export
from schemarag.tools.importers.export_parts import export_parts

HEADER = "TABLE_SCHEMA,TABLE_NAME,COLUMN_NAME,ORDINAL_POSITION,DATA_TYPE\n"


def _part(path: Path, rows: list[str], header: bool = True) -> Path:
    """One gzipped unload part, as Snowflake ``COPY INTO @stage ... HEADER = TRUE`` writes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(((HEADER if header else "") + "".join(r + "\n" for r in rows)).encode()))
    return path


@pytest.fixture
def unload(tmp_path: Path) -> Path:
    folder = tmp_path / "exports" / "columns"
    _part(folder / "data_0_0_0.csv.gz", ["sales,orders,id,1,NUMBER", "sales,orders,amount,2,NUMBER"])
    _part(folder / "data_0_1_0.csv.gz", ["sales,customers,id,1,NUMBER"])
    (folder / "_SUCCESS").write_text("")
    return folder


def test_folder_of_parts_reads_as_one_export(tmp_path: Path, unload: Path) -> None:
    report = import_catalog_export(unload, tmp_path / "out", database="wh")
    db = load_schema(tmp_path / "out" / "wh.json")
    assert [t.name for t in db.tables] == ["customers", "orders"]
    assert [c.name for c in db.table("orders").columns] == ["id", "amount"]
    assert report.warnings == []
    assert "columns (2 parts)" in db.description


def test_glob_of_parts_and_a_headerless_later_part(tmp_path: Path, unload: Path) -> None:
    _part(unload / "data_0_2_0.csv.gz", ["sales,refunds,id,1,NUMBER"], header=False)
    report = import_catalog_export(str(unload / "data_*.csv.gz"), tmp_path / "out", database="wh")
    db = load_schema(tmp_path / "out" / "wh.json")
    assert [t.name for t in db.tables] == ["customers", "orders", "refunds"]
    assert report.warnings == []


def test_symlinked_part_outside_the_folder_is_refused_with_one_warning(tmp_path: Path, unload: Path) -> None:
    secret = _part(tmp_path / "elsewhere" / "other_team.csv.gz", ["hr,salaries,amount,1,NUMBER"])
    (unload / "data_0_9_0.csv.gz").symlink_to(secret)
    for spec in (unload, unload / "*.csv.gz"):
        report = import_catalog_export(str(spec), tmp_path / "out", database="wh")
        db = load_schema(tmp_path / "out" / "wh.json")
        assert db.table("salaries") is None and db.table("hr.salaries") is None
        assert len(report.warnings) == 1
        assert "data_0_9_0.csv.gz" in report.warnings[0] and "outside" in report.warnings[0]


def test_symlinked_folder_and_dotdot_glob_outside_are_refused(tmp_path: Path, unload: Path) -> None:
    _part(tmp_path / "elsewhere" / "leak.csv.gz", ["hr,salaries,amount,1,NUMBER"])
    (unload / "more").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    warnings: list[str] = []
    assert [p.name for p in export_parts(str(unload), warnings)] == ["data_0_0_0.csv.gz", "data_0_1_0.csv.gz"]
    assert len(warnings) == 1 and "more" in warnings[0] and "outside" in warnings[0]
    warnings.clear()
    (unload / "sub").mkdir()
    _part(unload / "sub" / "data_1_0_0.csv.gz", ["sales,returns,id,1,NUMBER"])
    # ``..`` after a wildcard climbs out of the folder the glob names: refused, part by part
    with pytest.raises(ImportFormatError, match="no export files found inside"):
        export_parts(str(unload / "*" / ".." / ".." / ".." / "elsewhere" / "*.csv.gz"), warnings)
    assert len(warnings) == 1 and "leak.csv.gz" in warnings[0] and "outside" in warnings[0]


def test_symlink_inside_the_folder_is_read_once(tmp_path: Path, unload: Path) -> None:
    (unload / "again.csv.gz").symlink_to(unload / "data_0_0_0.csv.gz")
    warnings: list[str] = []
    parts = export_parts(str(unload), warnings)
    assert len(parts) == 2 and warnings == []


def test_nothing_to_read_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.json").write_text("{}")
    warnings: list[str] = []
    with pytest.raises(ImportFormatError, match=r"no --columns files found inside"):
        export_parts(str(tmp_path / "empty"), warnings, "--columns")
    assert "notes.json" in warnings[0] and "not an export file" in warnings[0]
    with pytest.raises(ImportFormatError, match="not found"):
        export_parts(str(tmp_path / "missing" / "*.csv"), warnings)


def test_redshift_unload_parts_without_a_data_extension(tmp_path: Path) -> None:
    """``UNLOAD ... GZIP`` writes ``columns_0000_part_00.gz``; without GZIP ``columns_0001_part_00``."""
    folder = tmp_path / "unload"
    _part(folder / "columns_0000_part_00.gz", ["public,sales,salesid,1,INTEGER"])
    plain = folder / "columns_0001_part_00"
    plain.write_text(HEADER + "public,event,eventid,1,INTEGER\n")
    (folder / "manifest.json").write_text("{}")  # UNLOAD ... MANIFEST: not a part
    report = import_catalog_export(folder, tmp_path / "out", database="tickit")
    db = load_schema(tmp_path / "out" / "tickit.json")
    assert [t.name for t in db.tables] == ["event", "sales"]
    assert len(report.warnings) == 1 and "manifest.json" in report.warnings[0]
