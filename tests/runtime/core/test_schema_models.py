"""schemarag.runtime.core.schema: models, the FK graph, and loader errors that name the file and JSON path."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from schemarag.runtime.core.errors import InvalidNameError, SchemaFileError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.schema import Database, Table, load_schema, parse_schema

REPO = Path(__file__).resolve().parents[3]

SHOP = {
    "name": "shop",
    "dialect": "postgres",
    "tables": [
        {"name": "users", "columns": [{"name": "id", "type": "INTEGER", "primary_key": True}]},
        {
            "name": "orders",
            "columns": [
                {"name": "id", "type": "INTEGER", "primary_key": True},
                {"name": "status", "type": "TEXT"},
                {"name": "user_id", "type": "INTEGER", "foreign_key": {"table": "users", "column": "id"}},
            ],
        },
        {"name": "audit", "columns": [{"name": "note"}]},
    ],
}


def _shop() -> dict:
    return copy.deepcopy(SHOP)


def _error(data: object, source: str = "shop.json") -> str:
    with pytest.raises(SchemaFileError) as info:
        parse_schema(data, source)
    return str(info.value)


def test_models_expose_keys_lookup_and_fk_graph_both_directions() -> None:
    db = parse_schema(_shop())
    assert db.table("ORDERS").name == "orders"
    assert db.table("missing") is None
    assert db.table("orders").primary_key == ["id"]
    assert db.table("orders").column("USER_ID").name == "user_id"
    assert db.neighbours("orders") == {"users"}
    assert db.neighbours("users") == {"orders"}
    assert db.neighbours("audit") == set()
    assert db.neighbours("nope") == set()
    assert db.foreign_keys() == [("orders", "user_id", "users", "id")]


def test_defaults_fill_optional_fields() -> None:
    db = parse_schema({"name": "s", "tables": [{"name": "t", "columns": [{"name": "c"}]}]})
    col = db.tables[0].columns[0]
    assert (db.dialect, col.type, col.nullable, col.primary_key, col.foreign_key) == (
        "postgres",
        "TEXT",
        True,
        False,
        None,
    )


def test_sample_schemas_load() -> None:
    for name in ("ecommerce", "b2b_saas"):
        db = load_schema(REPO / "data" / "schemas" / f"{name}.json")
        assert isinstance(db, Database) and db.name == name and db.tables


def test_fk_to_unknown_table_names_the_json_path() -> None:
    data = _shop()
    data["tables"][1]["columns"][2]["foreign_key"]["table"] = "userz"
    msg = _error(data)
    assert msg.startswith("shop.json: invalid schema")
    assert "$.tables[1](orders).columns[2](user_id).foreign_key: " in msg
    assert "unknown table 'userz'" in msg


def test_fk_to_unknown_column_names_the_json_path() -> None:
    data = _shop()
    data["tables"][1]["columns"][2]["foreign_key"]["column"] = "uid"
    msg = _error(data)
    assert "$.tables[1](orders).columns[2](user_id).foreign_key: " in msg
    assert "unknown column users.uid" in msg


def test_extra_and_missing_fields_name_the_json_path() -> None:
    data = _shop()
    data["tables"][1]["columns"][2]["foreign_key"] = {"table": "users", "col": "id"}
    msg = _error(data)
    assert "$.tables[1](orders).columns[2](user_id).foreign_key.column: Field required" in msg
    assert "$.tables[1](orders).columns[2](user_id).foreign_key.col: Extra inputs are not permitted" in msg


def test_duplicate_table_and_duplicate_column_are_errors() -> None:
    data = _shop()
    data["tables"].append({"name": "Users", "columns": [{"name": "id"}]})
    msg = _error(data)
    assert "$.tables[3](Users).name: duplicate table 'Users'" in msg

    data = _shop()
    data["tables"][1]["columns"].append({"name": "STATUS"})
    msg = _error(data)
    assert "$.tables[1](orders): duplicate column 'STATUS' in table 'orders'" in msg


def test_unknown_dialect_is_an_error_listing_the_choices() -> None:
    data = _shop()
    data["dialect"] = "oracle"
    msg = _error(data)
    assert "$.dialect: 'oracle' is not supported" in msg and "sqlite" in msg


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda d: d.pop("tables"), "$.tables: Field required"),
        (lambda d: d.update(tables=[]), "$.tables: List should have at least 1 item"),
        (lambda d: d["tables"][2].update(columns=[]), "$.tables[2](audit).columns: List should have"),
        (lambda d: d["tables"][0]["columns"][0].update(nullable="sometimes"), "$.tables[0](users)"),
    ],
)
def test_structural_errors_name_the_path(mutate, where: str) -> None:
    data = _shop()
    mutate(data)
    assert where in _error(data)


def test_load_schema_file_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(SchemaFileError, match=r"nope\.json: schema file not found"):
        load_schema(missing)

    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"name": "s",\n  "tables": [,]}')
    with pytest.raises(SchemaFileError, match=r"bad\.json: invalid JSON at line 2, column 14"):
        load_schema(bad_json)

    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('{"name": "caf\u00e9"}'.encode("latin-1"))
    with pytest.raises(SchemaFileError, match=r"latin1\.json: not UTF-8 at byte 13"):
        load_schema(latin1)

    top_list = tmp_path / "list.json"
    top_list.write_text("[]")
    with pytest.raises(SchemaFileError, match="top level must be a JSON object"):
        load_schema(top_list)

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SchemaFileError, match="nested too deeply"):
        load_schema(deep)

    invalid = tmp_path / "invalid.json"
    data = _shop()
    data["tables"][1]["columns"][2]["foreign_key"]["table"] = "ghost"
    invalid.write_text(json.dumps(data))
    with pytest.raises(SchemaFileError) as info:
        load_schema(invalid)
    assert str(info.value).startswith(f"{invalid}: invalid schema")
    assert "$.tables[1](orders).columns[2](user_id).foreign_key" in str(info.value)


@pytest.mark.parametrize(
    "bad",
    ["../etc", "a/b", "x\x00y", "..", "", "a\\b", "-lead", ".hidden", "_tenants", "_CACHE", "a\nb", "a\tb"],
)
def test_check_name_rejects_unsafe_names(bad: str) -> None:
    with pytest.raises(InvalidNameError):
        check_name(bad, "database")


def test_check_name_accepts_plain_names() -> None:
    assert check_name("ecommerce", "database") == "ecommerce"
    assert check_name("b2b_saas.v2-x", "database") == "b2b_saas.v2-x"
    # names a warehouse accepts: Snowflake's _1000_GENOMES database, BigQuery's project-ids
    assert check_name("_1000_GENOMES", "database") == "_1000_GENOMES"
    assert check_name("bigquery-public-data", "database") == "bigquery-public-data"


def test_column_lookup_any_case_and_after_the_columns_change() -> None:
    table = Table.model_validate({"name": "t", "columns": [{"name": "Id"}, {"name": "Email"}]})
    assert table.column("id").name == "Id" and table.column("EMAIL").name == "Email"
    assert table.column("missing") is None
    copy = table.model_copy(update={"columns": table.columns[:1]})  # copies the lookup map along
    assert copy.column("email") is None and copy.column("ID").name == "Id"
    assert table == Table.model_validate(table.model_dump())  # the map is not part of the model
    assert "_columns_by_name" not in table.model_dump()


def test_underscore_databases_are_listed_and_reserved_folders_are_not(tmp_path) -> None:
    from schemarag.runtime.core.paths import published_databases

    for name in ("_1000_GENOMES", "shop", "_tenants", "_cache", ".tmp"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "CURRENT").write_text("k")
    assert published_databases(tmp_path) == ["_1000_GENOMES", "shop"]
