"""Deeply nested JSON is refused with a message naming the file, never a RecursionError."""

from __future__ import annotations

import json

import pytest

from schemarag.runtime.core.errors import SchemaFileError
from schemarag.runtime.core.json_limits import MAX_JSON_DEPTH, json_depth, loads_bounded
from schemarag.runtime.core.schema import load_schema


@pytest.mark.parametrize("depth", [65, 100_000])
def test_deep_schema_json_names_the_file_and_the_depth(tmp_path, depth: int) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"name": "x", "tables": ' + "[" * depth + "]" * depth + "}")
    with pytest.raises(SchemaFileError) as info:
        load_schema(path)
    assert str(info.value) == (
        f"{path}: JSON nested too deeply: {depth + 1} levels, more than the limit of {MAX_JSON_DEPTH}; "
        "a schema needs only a few levels"
    )


def test_brackets_inside_strings_and_escapes_do_not_count() -> None:
    text = json.dumps({"a": "[[[{{{", "b": ['\\"[[[', {"c": "]]]"}]})
    assert json_depth(text) == 3
    assert loads_bounded(text, "x.json") == json.loads(text)


def test_a_normal_schema_still_loads(tmp_path) -> None:
    path = tmp_path / "shop.json"
    column = {"name": "id", "type": "INTEGER", "stats": {"n": {"deep": [[1]]}}}
    path.write_text(json.dumps({"name": "shop", "tables": [{"name": "t", "columns": [column]}]}))
    assert load_schema(path).tables[0].name == "t"


def test_depth_of_the_bundled_schemas_is_small() -> None:
    from pathlib import Path

    for path in Path("data/schemas").glob("*.json"):
        assert json_depth(path.read_bytes()) <= 8, path
