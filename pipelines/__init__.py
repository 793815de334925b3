"""The Dagster code location: the one Definitions, jobs, schedules, sensors."""
