"""What the dbt importer knows about one relation (model, source table, seed, snapshot).

The yml reader, the SQL renderer and the manifest reader all fill these plain records; only
:mod:`.assemble` turns them into a :class:`~schemarag.runtime.schema.Database`, so the three
input routes cannot disagree about keys, foreign keys or PII.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


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
    """A table-like thing the warehouse will hold; ``name`` is what SQL uses for it."""

    name: str
    kind: str  # model | source | seed | snapshot
    description: str = ""
    columns: list[ColumnSpec] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    upstream: list[str] = field(default_factory=list)  # relation names this one reads
    yml_file: str = ""
    sql_path: Path | None = None
    primary_key: list[str] = field(default_factory=list)  # model-level constraint

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
