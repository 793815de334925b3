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

from schemarag.runtime.core.schema import Column, Database, ForeignKey, Table, control_character
from schemarag.runtime.search.named_tables import label_for, name_words
from schemarag.tools.importers.dbt.specs import ColumnSpec, RelationSpec

log = logging.getLogger(__name__)

# dbt ymls rarely carry types and SQL inference stops at an untyped source column: say "unknown"
# rather than TEXT, so the prompt does not call an amount text and the validator's DuckDB bind
# does not reject SUM(amount) for a type it made up (runtime.querygen.duckdb_bind.UNKNOWN_TYPES)
UNKNOWN_TYPE = "UNKNOWN"
# materializations that leave no relation to query: inlined models, dbt-duckdb file sources
NOT_TABLES = frozenset({"ephemeral", "external_file"})


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


def _drop_control_names(rel: RelationSpec, warnings: list[str]) -> list[ColumnSpec]:
    """The columns of ``rel`` without those whose name holds a control character (one warning each)."""
    kept = []
    for spec in rel.columns:
        code = control_character(spec.name)
        if code:
            warnings.append(
                f"{rel.yml_file or rel.sql_path}: column {spec.name!r} of {rel.name!r} contains the "
                f"control character {code}; skipped"
            )
        else:
            kept.append(spec)
    return kept


def _dedupe_columns(rel: RelationSpec, warnings: list[str]) -> list[ColumnSpec]:
    seen: dict[str, ColumnSpec] = {}
    for col in rel.columns:
        if col.name.lower() in seen:
            warnings.append(f"{rel.yml_file or rel.name}: {rel.name}.{col.name} listed twice; first kept")
            continue
        seen[col.name.lower()] = col
    return list(seen.values())


def _real_upstream(node: str, by_node: dict[str, RelationSpec], seen: set[str] | None = None) -> list[str]:
    """What ``node`` reads, with ephemeral models replaced by what they read (dbt inlines them)."""
    seen = seen if seen is not None else set()
    out: list[str] = []
    for up in by_node[node.lower()].upstream:
        rel = by_node.get(up.lower())
        if rel is None or up.lower() in seen:
            continue
        seen.add(up.lower())
        out.extend(_real_upstream(up, by_node, seen) if rel.materialized == "ephemeral" else [up])
    return list(dict.fromkeys(out))


def lineage_sections(relations: list[RelationSpec]) -> dict[str, str]:
    """``## Lineage`` markdown per relation name (built from / used by / layer / tags).

    Ephemeral models are not tables: a model built on one lists the real relations underneath
    and names the inlined ephemeral model with its description, so its logic stays findable.
    """
    by_node = {r.node.lower(): r for r in relations}
    used_by: dict[str, list[str]] = {}
    for rel in relations:
        if rel.materialized == "ephemeral":
            continue
        for up in _real_upstream(rel.node, by_node):
            used_by.setdefault(up.lower(), []).append(rel.name)
    out: dict[str, str] = {}
    for rel in relations:
        if rel.materialized == "ephemeral":
            continue
        lines = []
        built_from = [by_node[u.lower()].name for u in _real_upstream(rel.node, by_node)]
        if built_from:
            lines.append("- **Built from:** " + ", ".join(f"`{u}`" for u in built_from))
        if used_by.get(rel.node.lower()):
            lines.append(
                "- **Used by:** " + ", ".join(f"`{u}`" for u in sorted(set(used_by[rel.node.lower()])))
            )
        inlined = [by_node[u.lower()] for u in rel.upstream if by_node.get(u.lower()) is not None]
        for eph in (r for r in inlined if r.materialized == "ephemeral"):
            about = f": {' '.join(eph.description.split())}" if eph.description else ""
            lines.append(f"- **Inlined ephemeral model:** `{eph.node}` (not a table){about}")
        what = rel.kind if rel.kind != "model" else f"model ({rel.materialized or 'materialization not set'})"
        lines.append(f"- **dbt resource:** {what}" + (f", layer {rel.layer}" if rel.layer else ""))
        if rel.node != rel.name:
            lines.append(f"- **dbt name:** `{rel.node}`")
        if rel.access or rel.group:
            lines.append(
                "- **Access:** " + ", ".join(x for x in (rel.access, rel.group and f"group {rel.group}") if x)
            )
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
    """Build the Database from the relations the warehouse holds (ephemeral models are not
    tables); ``resolve`` maps a relationships ``to:`` expression to a node."""
    by_node: dict[str, RelationSpec] = {}
    names: set[str] = set()
    for rel in relations:
        if rel.materialized in NOT_TABLES:
            if rel.materialized != "ephemeral":
                warnings.append(
                    f"{rel.yml_file}: source {rel.node!r} is a file (external_location), not a table"
                )
            continue
        if rel.node.lower() in by_node or rel.name.lower() in names:
            warnings.append(f"{rel.yml_file}: {rel.kind} {rel.name!r} defined twice; first kept")
            continue
        where = rel.sql_path or rel.yml_file or rel.name
        code = control_character(rel.name)
        if code:  # SECURITY.md, "Names": refused where it enters, so no renderer ever sees it
            warnings.append(
                f"{where}: {rel.kind} {rel.name!r} contains the control character {code}; skipped"
            )
            continue
        rel.columns = _drop_control_names(rel, warnings)
        rel.columns = _dedupe_columns(rel, warnings)
        if not rel.columns:
            warnings.append(
                f"{where}: {rel.kind} {rel.node!r} has no known columns (none in yml, SQL "
                "not readable); skipped"
            )
            continue
        by_node[rel.node.lower()] = rel
        names.add(rel.name.lower())
    tables: list[Table] = []
    for rel in by_node.values():
        key = _pick_key(rel)
        columns = []
        for spec in rel.columns:
            fk = None
            if spec.references:
                target_node = resolve(spec.references[0])
                target = by_node.get((target_node or "").lower())
                where = f"{rel.yml_file}: {rel.name}.{spec.name} relationships to {spec.references[0]}"
                if target is None:
                    warnings.append(f"{where}: target relation not found; foreign key dropped")
                elif target.column(spec.references[1]) is None:
                    warnings.append(f"{where}: column {spec.references[1]!r} not listed; foreign key dropped")
                else:
                    fk = ForeignKey(table=target.name, column=target.column(spec.references[1]).name)
            columns.append(_column(spec, key, fk))
        tables.append(
            Table(
                name=rel.name,
                description=" ".join(rel.description.split()),
                columns=columns,
                layer=rel.layer or None,
                label=relation_label(rel),
            )
        )
    if not tables:
        raise_empty(name, warnings)
    return Database(name=name, description=description, dialect=dialect, tables=tables)


def relation_label(rel: RelationSpec) -> str | None:
    """dbt's own name for the relation as its label (``Table.label``) when the warehouse name
    says other words: a source table ``products`` read from ``product_catalog_v2``, a model
    ``customers`` built as ``dim_cust_v2``, so a question naming it as the project does names
    the table. None when the names agree (``fct_orders`` built as ``orders``: decoration only).

    >>> relation_label(RelationSpec(name="shop.product_catalog_v2", kind="source", node="shop.products"))
    'products'
    >>> relation_label(RelationSpec(name="marts.orders", kind="model", node="fct_orders")) is None
    True
    """
    own = rel.node.rpartition(".")[2]
    return label_for(rel.name, own.replace("_", " ")) if name_words(own) else None


def raise_empty(name: str, warnings: list[str]) -> None:
    """No table at all: say why (models whose Jinja needs a missing package, yml without columns)."""
    from schemarag.runtime.core.errors import ImportFormatError

    unrendered = [w for w in warnings if "Jinja not rendered" in w]
    why = f"; {len(unrendered)} model(s) could not be rendered, e.g. {unrendered[0]}" if unrendered else ""
    raise ImportFormatError(
        f"dbt project {name!r}: no model or source with known columns; nothing to import{why}. "
        "List the columns in the property ymls, install the packages the models call (`dbt deps`), "
        "or import dbt's compiled artifacts: --manifest target/manifest.json --catalog target/catalog.json"
    )
