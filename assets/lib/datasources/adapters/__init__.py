"""One module per datasource kind; each subclasses
:class:`~schemarag.assets.lib.datasources.adapters.base.Adapter`."""
