"""Formatting on hand-made DDL pieces: exact CREATE TABLE text, pruning, quoting, and the
column-type check that keeps a schema from injecting into the rendered DDL."""

from __future__ import annotations

import pytest

from schemarag.runtime.core.errors import SchemaFileError
from schemarag.runtime.core.schema import (
    SUPPORTED_DIALECTS,
    Column,
    Database,
    Table,
    check_type_text,
    parse_schema,
)
from schemarag.runtime.formatting import (
    TableDDL,
    assemble,
    column_sql,
    format_full_schema,
    render_schema,
    render_table,
)

ORDERS = TableDDL(
    name="orders",
    name_sql="orders",
    columns=("id", "customer_id", "status", "note"),
    column_sql=("id INT NOT NULL", "customer_id INT", "status TEXT", "note TEXT"),
    comments=("", "", "Order status.", "Free text."),
    key_columns=("id", "customer_id"),
    pk_sql="PRIMARY KEY (id)",
    fk_sql=(("customer_id", "FOREIGN KEY (customer_id) REFERENCES customers (id)"),),
)


def test_assemble_everything() -> None:
    assert assemble(ORDERS) == (
        "CREATE TABLE orders (\n"
        "  id INT NOT NULL,\n"
        "  customer_id INT,\n"
        "  status TEXT, -- Order status.\n"
        "  note TEXT, -- Free text.\n"
        "  PRIMARY KEY (id),\n"
        "  FOREIGN KEY (customer_id) REFERENCES customers (id)\n"
        ");"
    )


def test_assemble_prunes_but_keeps_key_columns_and_limits_descriptions() -> None:
    text = assemble(ORDERS, columns=["STATUS"], described=[], fk_columns=set())
    assert text == (
        "CREATE TABLE orders (\n  id INT NOT NULL,\n  customer_id INT,\n  status TEXT,\n"
        "  PRIMARY KEY (id)\n);"
    )


def _db(columns: list[dict], dialect: str = "postgres") -> Database:
    return Database.model_validate(
        {"name": "s", "dialect": dialect, "tables": [{"name": "t", "columns": columns}]}
    )


def test_render_quotes_reserved_and_odd_names_only() -> None:
    ddl = render_table(
        _db(
            [{"name": "order", "type": "INTEGER"}, {"name": "Free Meal", "type": "TEXT"}, {"name": "plain"}]
        ).tables[0],
        "postgres",
    )
    assert ddl.column_sql == ('"order" INT', '"Free Meal" TEXT', "plain TEXT")


def test_full_schema_from_pre_rendered_pieces_equals_rendering() -> None:
    db = _db([{"name": "id", "type": "INTEGER", "primary_key": True}, {"name": "v", "type": "NUMERIC(12,2)"}])
    assert format_full_schema(db, ddl=render_schema(db)) == format_full_schema(db)


@pytest.mark.parametrize(
    "bad",
    [
        '"from" weird type ); DROP,',
        "TEXT, evil INT",
        "INT -- hidden",
        "INT /* x */",
        "TEXT)",
        "VARCHAR(20",
        "a\nb",
    ],
)
def test_a_column_type_that_could_inject_into_ddl_is_rejected_at_load(bad: str) -> None:
    with pytest.raises(SchemaFileError) as info:
        parse_schema(
            {"name": "s", "tables": [{"name": "t", "columns": [{"name": "c", "type": bad}]}]}, "s.json"
        )
    msg = str(info.value)
    assert "s.json" in msg and "$.tables[0](t).columns[0](c).type" in msg


@pytest.mark.parametrize(
    "good",
    [
        "NUMERIC(12,2)",
        "enum('a','b,c')",
        "STRUCT(a INT, b TEXT)",
        "timestamp with time zone",
        "INTEGER[]",
        "MAP<TEXT, INT>",
    ],
)
def test_real_types_pass(good: str) -> None:
    assert check_type_text(good) == good


def test_render_refuses_an_unchecked_injecting_type() -> None:
    """A Database built without validation still cannot smuggle the type into the DDL."""
    col = Column.model_construct(name="c", type='"from" weird type ); DROP,', nullable=True, foreign_key=None)
    table = Table.model_construct(name="t", columns=[col], description="")
    with pytest.raises(ValueError, match="could end the column"):
        render_table(table, "postgres")


@pytest.mark.parametrize("dialect", SUPPORTED_DIALECTS)
def test_cached_column_lines_equal_sqlglot_rendering_the_whole_definition(dialect: str) -> None:
    """Column lines come from cached pieces (quoted name + type tail); they must be exactly what
    sqlglot prints for the whole column definition, in every dialect."""
    from sqlglot import exp

    from schemarag.runtime.formatting import _data_type, _ident

    names = ["id", "order", "select", "User Name", 'a"b', "Ünïcode", "CamelCase", "x", "_under", "1st"]
    types = ["INTEGER", "NUMERIC(18,2)", "VARCHAR(20)", "TEXT", "TIMESTAMP", "enum('a','b')",
             "STRUCT(a INT, b TEXT)", "ARRAY<INT>", "my_custom_type", "timestamp with time zone"]  # fmt: skip
    for name in names:
        for type_text in types:
            for nullable in (True, False):
                col = Column(name=name, type=type_text, nullable=nullable)
                constraints = [] if nullable else [exp.ColumnConstraint(kind=exp.NotNullColumnConstraint())]
                whole = exp.ColumnDef(
                    this=_ident(name, dialect), kind=_data_type(type_text, dialect), constraints=constraints
                ).sql(dialect=dialect)
                assert column_sql(col, dialect) == whole, (name, type_text, nullable)
