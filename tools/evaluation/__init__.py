"""Retrieval evaluation: gold tables/columns from SQL, metrics, the harness and reports."""
