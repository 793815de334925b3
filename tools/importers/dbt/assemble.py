"""Relations (from ymls + SQL, or from manifest/catalog) -> one schemarag Database plus doc extras.

Key hints follow dbt's tests: a column with ``unique`` and ``not_null`` (or a ``primary_key``
constraint) is the table's key; ``relationships`` tests and ``foreign_key`` constraints become
foreign keys when both ends are known; ``accepted_values`` become the complete list of values.
Lineage (the relations a model reads, and which read it) has no place in the schema JSON, so it
goes into an extra ``## Lineage`` section of the table doc, which the chunker keeps with the
overview.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from schemarag.runtime.schema import Column, Database, ForeignKey, Table
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec

log = logging.getLogger(__name__)

UNKNOWN_TYPE = "TEXT"  # dbt ymls rarely carry types; the schema's default type stands for "unknown"


def _pick_key(rel: RelationSpec) -> set[str]:
    explicit = {c.lower() for c in rel.primary_key} | {c.name.lower() for c in rel.columns if c.primary_key}
    if explicit:
        return explicit
    hinted = [c.name.lower() for c in rel.columns if c.unique and c.not_null]
    return set(hinted[:1])  # two unique+not_null columns are two candidate keys, not one composite


def _column(spec: ColumnSpec, key: set[str], fk: ForeignKey | None) -> Column:
    notes = []
    if spec.unique and spec.name.lower() not in key:
        notes.append("unique (dbt test)")
    if spec.accepted_values:
        notes.append("accepted values (dbt test): " + ", ".join(spec.accepted_values))
    tags = sorted(spec.tags - {"pii"})
    if tags:
        notes.append("tags: " + ", ".join(tags))
    return Column(
        name=spec.name,
        type=spec.data_type or UNKNOWN_TYPE,
        nullable=not (spec.not_null or spec.name.lower() in key),
        primary_key=spec.name.lower() in key,
        description=" ".join(spec.description.split()),
        value_description="; ".join(notes),
        foreign_key=fk,
        sample_values=[] if spec.pii else spec.accepted_values[:50],
        stats={"sample_complete": True} if spec.accepted_values and not spec.pii else {},
        pii=spec.pii,
    )


def _dedupe_columns(rel: RelationSpec, warnings: list[str]) -> list[ColumnSpec]:
    seen: dict[str, ColumnSpec] = {}
    for col in rel.columns:
        if col.name.lower() in seen:
            warnings.append(f"{rel.yml_file or rel.name}: {rel.name}.{col.name} listed twice; first kept")
            continue
        seen[col.name.lower()] = col
    return list(seen.values())


def lineage_sections(relations: list[RelationSpec]) -> dict[str, str]:
    """``## Lineage`` markdown per relation name (built from / used by / tags)."""
    used_by: dict[str, list[str]] = {}
    for rel in relations:
        for up in rel.upstream:
            used_by.setdefault(up.lower(), []).append(rel.name)
    out: dict[str, str] = {}
    for rel in relations:
        lines = []
        if rel.upstream:
            lines.append("- **Built from:** " + ", ".join(f"`{u}`" for u in rel.upstream))
        if used_by.get(rel.name.lower()):
            lines.append("- **Used by:** " + ", ".join(f"`{u}`" for u in sorted(used_by[rel.name.lower()])))
        lines.append(f"- **dbt resource:** {rel.kind}")
        if rel.tags:
            lines.append("- **Tags:** " + ", ".join(sorted(rel.tags)))
        out[rel.name] = "## Lineage\n" + "\n".join(lines) + "\n"
    return out


def to_database(
    name: str,
    relations: list[RelationSpec],
    resolve: Callable[[str], str | None],
    warnings: list[str],
    *,
    dialect: str = "postgres",
    description: str = "",
) -> Database:
    """Build the Database; ``resolve`` maps a relationships ``to:`` expression to a relation name."""
    by_name: dict[str, RelationSpec] = {}
    for rel in relations:
        if rel.name.lower() in by_name:
            warnings.append(f"{rel.yml_file}: {rel.kind} {rel.name!r} defined twice; first kept")
            continue
        rel.columns = _dedupe_columns(rel, warnings)
        if not rel.columns:
            where = rel.sql_path or rel.yml_file or rel.name
            warnings.append(
                f"{where}: {rel.kind} {rel.name!r} has no known columns (none in yml, SQL "
                "not readable); skipped"
            )
            continue
        by_name[rel.name.lower()] = rel
    tables: list[Table] = []
    for rel in by_name.values():
        key = _pick_key(rel)
        columns = []
        for spec in rel.columns:
            fk = None
            if spec.references:
                target_name = resolve(spec.references[0])
                target = by_name.get((target_name or "").lower())
                where = f"{rel.yml_file}: {rel.name}.{spec.name} relationships to {spec.references[0]}"
                if target is None:
                    warnings.append(f"{where}: target relation not found; foreign key dropped")
                elif target.column(spec.references[1]) is None:
                    warnings.append(f"{where}: column {spec.references[1]!r} not listed; foreign key dropped")
                else:
                    fk = ForeignKey(table=target.name, column=target.column(spec.references[1]).name)
            columns.append(_column(spec, key, fk))
        tables.append(Table(name=rel.name, description=" ".join(rel.description.split()), columns=columns))
    if not tables:
        raise_empty(name)
    return Database(name=name, description=description, dialect=dialect, tables=tables)


def raise_empty(name: str) -> None:
    from schemarag.runtime.errors import ImportFormatError

    raise ImportFormatError(f"dbt project {name!r}: no model or source with known columns; nothing to import")
