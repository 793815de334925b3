"""BigQuery nested fields (GA4 ``event_params``) in validation: the idioms BigQuery accepts are not
reported invalid because DuckDB's UNNEST differs, and a misspelt field still is."""

from __future__ import annotations

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database

PARAMS = "ARRAY<STRUCT<key STRING, value STRUCT<string_value STRING, int_value INT64>>>"
DB = Database.model_validate(
    {
        "name": "ga4",
        "dialect": "bigquery",
        "tables": [
            {
                "name": "analytics.events_*",
                "columns": [
                    {"name": "event_name", "type": "STRING"},
                    {"name": "user_pseudo_id", "type": "STRING"},
                    {"name": "event_params", "type": PARAMS},
                    {"name": "event_params.key", "type": "STRING"},
                    {"name": "event_params.value", "type": "STRUCT<string_value STRING, int_value INT64>"},
                    {"name": "event_params.value.int_value", "type": "INT64"},
                ],
            }
        ],
    }
)


def test_correlated_unnest_of_a_struct_array_is_not_invalid() -> None:
    sql = (
        "SELECT (SELECT value.int_value FROM UNNEST(event_params) WHERE key = 'ga_session_id') AS sid "
        "FROM `analytics.events_*` WHERE _TABLE_SUFFIX BETWEEN '20210101' AND '20210131'"
    )
    report = validate_sql(sql, DB)
    assert report.valid is not False, report.errors
    assert report.valid is True or "UNNEST" in (report.unchecked_reason or "")


def test_cross_join_unnest_validates() -> None:
    sql = "SELECT ep.key, COUNT(*) FROM `analytics.events_*`, UNNEST(event_params) AS ep GROUP BY ep.key"
    assert validate_sql(sql, DB).valid is True


def test_misspelt_nested_field_is_still_invalid() -> None:
    sql = (
        "SELECT (SELECT value.int_value FROM UNNEST(event_params) WHERE kye = 'x') FROM `analytics.events_*`"
    )
    report = validate_sql(sql, DB)
    assert report.valid is False and "kye" in report.errors[0]
