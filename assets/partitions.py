"""One dynamic partition per database, so databases build, fail and rebuild independently.

Big multi-schema databases also get one ``<database>/<schema>`` partition per schema, in which
their embedding fans out (``schema_embeddings``, :mod:`schemarag.assets.lib.embed_shards`).
"""

import dagster as dg

databases_partitions = dg.DynamicPartitionsDefinition(name="databases")
schema_partitions = dg.DynamicPartitionsDefinition(name="database_schemas")
