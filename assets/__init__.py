"""Dagster assets of the index build, one module per stage, named after what they produce."""
# No `from __future__ import annotations` in Dagster modules: Dagster inspects real annotations.
