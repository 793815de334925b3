"""What each warehouse calls the fields of its catalog views, and how to read their values.

One alias table covers the exports a user gets from the warehouse's own catalog query, with the
headers as each documents them (matched case-insensitively, extra columns ignored):

- Snowflake ``INFORMATION_SCHEMA.COLUMNS``/``TABLES`` (``TABLE_CATALOG``, ``COMMENT``,
  ``ROW_COUNT``; ``ACCOUNT_USAGE`` views add ``DELETED``: dropped objects are skipped);
- BigQuery ``INFORMATION_SCHEMA.COLUMNS`` and ``COLUMN_FIELD_PATHS`` (``field_path`` names nested
  ``STRUCT`` fields, ``description``), ``TABLES`` and ``TABLE_OPTIONS`` (``option_name`` =
  ``description``, its ``option_value`` a quoted string literal), ``TABLE_STORAGE``
  (``total_rows``);
- PostgreSQL / Redshift ``information_schema.columns`` (``udt_name``, lengths and precisions
  complete ``character varying`` and ``numeric``), comments from ``pg_description`` exported as
  ``column_comment``/``description``, Redshift ``SVV_COLUMNS.remarks``, row estimates
  (``n_live_tup``, ``reltuples``, ``tbl_rows``);
- Databricks Unity Catalog ``system.information_schema`` (``full_data_type`` wins over
  ``data_type``, ``comment``, table types ``MANAGED``/``EXTERNAL``/``VIEW``...);
- MySQL / MariaDB ``information_schema`` (``COLUMN_TYPE`` wins over ``DATA_TYPE``,
  ``COLUMN_COMMENT``, ``COLUMN_KEY = 'PRI'``, ``TABLE_ROWS``, ``TABLE_COMMENT``).

Example:
    >>> full_type({"data_type": "numeric", "numeric_precision": "12", "numeric_scale": "2"})
    'numeric(12,2)'
    >>> full_type({"data_type": "ARRAY", "udt_name": "_int4"})
    'int4[]'
    >>> table_kind("MATERIALIZED VIEW"), table_kind("MANAGED"), table_kind("BASE TABLE")
    ('materialized_view', 'table', 'table')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

# canonical name -> accepted headers, most specific first
COLUMN_HEADERS: dict[str, tuple[str, ...]] = {
    "table_catalog": (
        "table_catalog",
        "catalog_name",
        "table_cat",
        "project_id",
        "database_name",
        "database",
    ),
    "table_schema": ("table_schema", "schema_name", "table_schem", "schema", "dataset_id", "dataset"),
    "table_name": ("table_name", "table", "table_id"),
    "column_name": ("field_path", "column_name", "column"),  # field_path first: nested BigQuery fields
    "ordinal_position": ("ordinal_position", "position", "column_id", "ordinal"),
    "data_type": ("full_data_type", "column_type", "data_type", "type_name", "type"),
    "udt_name": ("udt_name",),
    "character_maximum_length": ("character_maximum_length",),
    "numeric_precision": ("numeric_precision",),
    "numeric_scale": ("numeric_scale",),
    "is_nullable": ("is_nullable", "nullable"),
    "column_comment": ("column_comment", "comment", "description", "remarks", "column_description"),
    "column_key": ("column_key",),
    "deleted": ("deleted",),
}
TABLE_HEADERS: dict[str, tuple[str, ...]] = {
    "table_catalog": COLUMN_HEADERS["table_catalog"],
    "table_schema": COLUMN_HEADERS["table_schema"],
    "table_name": COLUMN_HEADERS["table_name"],
    "table_comment": ("table_comment", "comment", "description", "remarks", "table_description"),
    "table_type": ("table_type", "object_type", "kind"),
    "row_count": (
        "row_count",
        "table_rows",
        "total_rows",
        "num_rows",
        "rows",
        "tbl_rows",
        "estimated_visible_rows",
        "n_live_tup",
        "reltuples",
        "estimated_row_count",
    ),
    "option_name": ("option_name",),
    "option_value": ("option_value",),
    "deleted": ("deleted",),
}
KEY_HEADERS: dict[str, tuple[str, ...]] = {
    "table_catalog": COLUMN_HEADERS["table_catalog"],
    "table_schema": COLUMN_HEADERS["table_schema"],
    "table_name": COLUMN_HEADERS["table_name"],
    "column_name": ("column_name", "column"),
    "referenced_table_catalog": ("referenced_table_catalog", "foreign_table_catalog"),
    "referenced_table_schema": ("referenced_table_schema", "foreign_table_schema", "ref_table_schema"),
    "referenced_table_name": ("referenced_table_name", "foreign_table_name", "ref_table_name"),
    "referenced_column_name": ("referenced_column_name", "foreign_column_name", "ref_column_name"),
    "constraint_type": ("constraint_type",),
}

# Schemas that describe the warehouse itself, never the user's data.
SYSTEM_SCHEMAS = frozenset(
    {
        "information_schema",
        "pg_catalog",
        "pg_toast",
        "pg_internal",
        "pg_automv",
        "sys",
        "mysql",
        "performance_schema",
    }
)
# MySQL's TABLE_CATALOG is always 'def' (and SQL Server-style exports may say so too): not a name.
PLACEHOLDER_CATALOGS = frozenset({"def"})

_KINDS = {
    "view": "view",
    "system view": "view",
    "materialized view": "materialized_view",
    "materialized_view": "materialized_view",
    "external": "external",
    "external table": "external",
    "foreign": "external",
    "foreign table": "external",
}
_NUMERIC = re.compile(r"^(numeric|decimal|number|dec)$", re.IGNORECASE)
_CHARACTER = re.compile(
    r"^(character varying|varchar|character|char|nvarchar|nchar|bpchar|text)$", re.IGNORECASE
)
_MAX_SHOWN_LENGTH = 65_535  # Snowflake says TEXT is 16777216 characters long: noise, not a limit


def table_kind(table_type: str) -> str:
    """``table`` | ``view`` | ``materialized_view`` | ``external`` from a warehouse's ``table_type``
    (``BASE TABLE``, ``MANAGED``, ``CLONE``, ``SNAPSHOT``, ``STREAMING_TABLE`` are all tables)."""
    return _KINDS.get(" ".join(table_type.lower().split()), "table")


def _int(value: str) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError, OverflowError):
        return None


def row_count(value: str) -> int | None:
    """A non-negative row count (``reltuples`` is -1 for a never-analysed PostgreSQL table)."""
    n = _int(value)
    return n if n is not None and n >= 0 else None


def full_type(row: Mapping[str, str]) -> str:
    """The column type with what the export says beside it: PostgreSQL's ``USER-DEFINED`` and
    ``ARRAY`` through ``udt_name``, lengths and precisions that ``data_type`` leaves out."""
    base = row.get("data_type", "").strip()
    udt = row.get("udt_name", "").strip()
    if base.upper() == "USER-DEFINED" and udt:
        return udt
    if base.upper() == "ARRAY" and udt.startswith("_"):
        return f"{udt[1:]}[]"
    if "(" in base or "<" in base:
        return base
    if _NUMERIC.match(base):
        precision, scale = _int(row.get("numeric_precision", "")), _int(row.get("numeric_scale", ""))
        if precision and scale:  # scale 0 is the integer case: NUMBER(38,0) says nothing more
            return f"{base}({precision},{scale})"
    elif _CHARACTER.match(base):
        length = _int(row.get("character_maximum_length", ""))
        if length and length <= _MAX_SHOWN_LENGTH:
            return f"{base}({length})"
    return base


def option_text(value: str) -> str:
    """BigQuery ``TABLE_OPTIONS.option_value`` is a literal: ``"Daily sales"`` -> ``Daily sales``."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
            return decoded if isinstance(decoded, str) else value
        except ValueError:
            return value[1:-1]
    return value
