"""`schemarag chunks`: in-process through schemarag.cli.main, plus one real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.cli import main
from schemarag.runtime.artifact.chunk_model import CHUNK_FIELDS, CHUNK_TYPES

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data" / "schemas"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A private copy of the ecommerce inputs (tests edit it)."""
    dest = tmp_path / "schemas"
    dest.mkdir()
    shutil.copy(DATA / "ecommerce.json", dest / "ecommerce.json")
    shutil.copytree(DATA / "ecommerce", dest / "ecommerce")
    return dest


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_a_list_of_chunk_objects_with_exactly_the_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "chunks", "--db", "ecommerce", "--json", "--data", str(DATA))
    assert code == 0 and err == ""
    chunks = json.loads(out)
    assert isinstance(chunks, list) and chunks
    for c in chunks:
        assert list(c) == list(CHUNK_FIELDS)
        assert c["database"] == "ecommerce" and c["chunk_type"] in CHUNK_TYPES
        assert isinstance(c["related_tables"], list) and isinstance(c["keywords"], list)
        assert c["tokens"] > 0 and c["text"]
    assert {c["table"] for c in chunks} == {None, "users", "products", "orders"}
    # Deterministic: a second run prints the same bytes.
    assert _run(capsys, "chunks", "--db", "ecommerce", "--json", "--data", str(DATA))[1] == out


def test_text_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "chunks", "--db", "ecommerce", "--data", str(DATA))
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("ecommerce: ") and "from 4 doc files" in first and "overview=3" in first


def test_malformed_doc_is_a_warning_on_stderr_and_the_rest_load(
    data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (data / "ecommerce" / "docs" / "broken.md").write_text("no header here\n")
    code, out, err = _run(capsys, "chunks", "--db", "ecommerce", "--json", "--data", str(data))
    assert code == 0
    warnings = err.strip().splitlines()
    assert len(warnings) == 1
    assert warnings[0].startswith("warning: ") and "broken.md" in warnings[0]
    assert "no level-1 heading" in warnings[0]
    assert {c["table"] for c in json.loads(out)} == {None, "users", "products", "orders"}


def test_missing_docs_dir_still_prints_schema_chunks(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(data / "ecommerce")
    code, out, err = _run(capsys, "chunks", "--db", "ecommerce", "--json", "--data", str(data))
    assert code == 0 and err == ""
    assert {c["chunk_type"] for c in json.loads(out)} == {"table", "column"}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"name": "ecommerce",\n "tables": [}', "invalid JSON at line 2, column 13"),
        (b"\xff\xfe{}", "not UTF-8 at byte 0"),
        (
            '{"name": "ecommerce", "tables": [{"name": "t", "columns": [{"name": "c", "typo": 1}]}]}',
            "$.tables[0](t).columns[0](c).typo: Extra inputs are not permitted",
        ),
    ],
)
def test_bad_schema_is_one_error_line_naming_file_and_field(
    data: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, needle: str
) -> None:
    target = data / "ecommerce.json"
    if isinstance(content, bytes):
        target.write_bytes(content)
    else:
        target.write_text(content)
    code, out, err = _run(capsys, "chunks", "--db", "ecommerce", "--data", str(data))
    assert code == 2 and out == ""
    assert err.startswith("schemarag chunks: error: ") and str(target) in err and needle in err
    assert "Traceback" not in err


def test_unknown_database_is_a_clear_error(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "chunks", "--db", "nosuchdb", "--data", str(data))
    assert code == 2 and "nosuchdb.json: schema file not found" in err


@pytest.mark.parametrize("name", ["../ecommerce", "a/b", "x\x00y", ".."])
def test_unsafe_database_names_exit_2_with_one_line(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "chunks", "--db", name, "--data", str(DATA))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("schemarag chunks: error: invalid database")


def test_real_subprocess_json() -> None:
    env = {**os.environ, "SCHEMARAG_DATA": str(DATA)}
    proc = subprocess.run(
        [sys.executable, "-m", "schemarag.cli", "chunks", "--db", "ecommerce", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    chunks = json.loads(proc.stdout)
    assert all(list(c) == list(CHUNK_FIELDS) for c in chunks)
    assert len({c["chunk_id"] for c in chunks}) == len(chunks)


def test_real_subprocess_bad_name_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "schemarag.cli", "chunks", "--db", "../etc", "--data", str(DATA)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
