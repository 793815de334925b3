"""BigQuery wildcards over part of a collapsed shard family (``events_202101*``): the SQL an
analyst writes for one month or year validates against the family's table, and a prefix that no
shard has is still an unknown table."""

from __future__ import annotations

from schemarag.app.querygen.sql_validation import validate_sql
from schemarag.runtime.core.schema import Database

DB = Database.model_validate(
    {
        "name": "ga4",
        "dialect": "bigquery",
        "tables": [
            {
                "name": "analytics.events_*",
                "columns": [{"name": "event_name", "type": "STRING"}, {"name": "user_id", "type": "STRING"}],
                "shards": {"stem": "analytics.events_", "pattern": "YYYYMMDD", "first": "20201101",
                           "last": "20210131", "count": 92},
            }
        ],
    }
)  # fmt: skip


def test_a_month_of_the_family_validates() -> None:
    for name in ("analytics.events_202101*", "analytics.events_2020*", "proj.analytics.events_20201*"):
        report = validate_sql(f"SELECT event_name, COUNT(*) FROM `{name}` GROUP BY 1", DB)
        assert report.valid is True, (name, report.errors)


def test_a_prefix_no_shard_has_is_unknown() -> None:
    report = validate_sql("SELECT event_name FROM `analytics.events_2019*`", DB)
    assert report.valid is False and "events_2019" in " ".join(report.errors)


def test_a_wrong_column_through_a_wildcard_is_still_invalid() -> None:
    report = validate_sql("SELECT event_nam FROM `analytics.events_202101*`", DB)
    assert report.valid is False and "event_nam" in " ".join(report.errors)
