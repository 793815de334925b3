"""The table ranking: one pipeline of named stages (:mod:`.pipeline`) and one frozen config
(:mod:`.config`, :data:`~.config.SHIPPED`). docs/architecture.md shows where it sits."""
