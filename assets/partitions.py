"""One dynamic partition per database, so databases build, fail and rebuild independently."""

import dagster as dg

databases_partitions = dg.DynamicPartitionsDefinition(name="databases")
