"""What the dbt importer knows about one relation (model, source table, seed, snapshot).

The yml reader, the SQL renderer and the manifest reader all fill these plain records; only
:mod:`.assemble` turns them into a :class:`~schemarag.runtime.core.schema.Database`, so the three
input routes cannot disagree about keys, foreign keys or PII.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ColumnSpec:
    """One column with the hints dbt tests and constraints give about it."""

    name: str
    description: str = ""
    data_type: str = ""
    tags: set[str] = field(default_factory=set)
    pii: bool = False
    unique: bool = False
    not_null: bool = False
    primary_key: bool = False
    # (target relation expression or name, target column): resolved against the relations later
    references: tuple[str, str] | None = None
    accepted_values: list[str] = field(default_factory=list)


@dataclass
class RelationSpec:
    """A table-like thing the warehouse will hold.

    ``node`` is dbt's name for it (the model name, or ``source.table`` for a source table): what
    ``ref()``/``source()`` and ``upstream`` use. ``name`` is what SQL uses for it (the relation
    name, ``schema.alias``), decided once configs are known (:mod:`.naming`).
    """

    name: str
    kind: str  # model | source | seed | snapshot
    description: str = ""
    columns: list[ColumnSpec] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    upstream: list[str] = field(default_factory=list)  # nodes this one reads
    yml_file: str = ""
    sql_path: Path | None = None
    primary_key: list[str] = field(default_factory=list)  # model-level constraint
    node: str = ""
    package: str = ""  # the dbt project or installed package the node belongs to
    fqn: list[str] = field(default_factory=list)  # package, folders..., name (dbt_project.yml paths)
    config: dict[str, Any] = field(default_factory=dict)  # yml `config:` (then merged: see .configs)
    materialized: str = ""  # table | view | incremental | ephemeral | ... ("" = unknown)
    database: str = ""
    schema: str = ""
    layer: str = ""  # staging | intermediate | marts | reports | source | seed | snapshot | model
    access: str = ""  # dbt model access: public | protected | private
    group: str = ""

    def __post_init__(self) -> None:
        if not self.node:
            self.node = self.name

    def column(self, name: str) -> ColumnSpec | None:
        lname = name.lower()
        return next((c for c in self.columns if c.name.lower() == lname), None)


def is_pii(tags: set[str], meta: object) -> bool:
    """``tags: [pii]`` or ``meta: {pii: true}`` / ``{contains_pii: true}`` / ``{sensitive: true}``."""
    if any(t.lower() in ("pii", "sensitive", "personal") for t in tags):
        return True
    if isinstance(meta, dict):
        return any(bool(meta.get(k)) for k in ("pii", "contains_pii", "sensitive"))
    return False
