"""One module per datasource kind; each subclasses :class:`~runtime.datasources.adapters.base.Adapter`."""
