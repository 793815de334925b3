"""Columns a warehouse adds to a relation without listing them in its catalog.

A BigQuery wildcard table (``dataset.events_*``, what a collapsed shard family is named) has the
pseudo-column ``_TABLE_SUFFIX``, and the family's doc tells the SQL writer to filter on it; a
validator that did not know it would reject the very query the focused schema asks for.

Example:
    >>> pseudo_columns("proj.ga4.events_*", "bigquery"), pseudo_columns("events_*", "snowflake")
    (('_TABLE_SUFFIX',), ())
"""

from __future__ import annotations


def pseudo_columns(table_name: str, dialect: str) -> tuple[str, ...]:
    """The pseudo-columns ``table_name`` has in ``dialect`` (empty for most relations)."""
    if dialect == "bigquery" and table_name.endswith("*"):
        return ("_TABLE_SUFFIX",)
    return ()
