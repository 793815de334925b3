"""Render our docs markdown from the schema models.

Importers (BIRD, Spider) and live-datasource snapshots both start from a
:class:`~schemarag.runtime.core.schema.Database`; people then edit the generated files. Rendering is
deterministic (schema order for columns, sorted relationships), so regenerating an
unchanged schema produces byte-identical files and diffs stay reviewable.

Example:
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "shop", "tables": [
    ...     {"name": "users", "columns": [{"name": "id", "type": "INTEGER", "primary_key": True}]}]})
    >>> render_table_doc(db, db.tables[0]).splitlines()[0]
    '# Table: users'
    >>> doc_file_name("orders"), doc_file_name("order items")
    ('orders.md', 'order_items_69a135d7.md')
"""

from __future__ import annotations

import hashlib
import re

from schemarag.runtime.core.schema import Column, Database, Table

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_MAX_STEM = 96
_MAX_VALUE_CHARS = 120
# Bookkeeping flags rendered elsewhere (the Sample values label), not as statistics.
_HIDDEN_STATS = frozenset({"sample_complete"})


def doc_file_name(table_name: str) -> str:
    """A safe ``<stem>.md`` for any table name.

    Names made only of ``[A-Za-z0-9_-]`` that start with a letter or digit map to themselves
    (``orders`` -> ``orders.md``). Anything else is sanitized and gets an 8-hex suffix of the
    original name's SHA-1, so ``a b`` and ``a/b`` cannot collide, and a table called
    ``_index`` cannot overwrite the database overview ``_index.md``.
    """
    stem = _UNSAFE.sub("_", table_name).strip("_")[:_MAX_STEM]
    if not stem or not stem[0].isalnum():
        stem = "t" + stem
    if stem != table_name:
        digest = hashlib.sha1(table_name.encode("utf-8")).hexdigest()[:8]
        stem = f"{stem}_{digest}"
    return f"{stem}.md"


def _words(name: str) -> str:
    """``orderItems`` / ``order_items`` -> ``order items`` (for derived sentences)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return " ".join(w for w in re.split(r"[\s_\-.]+", spaced) if w).lower() or name


def _code(value: str) -> str:
    """Inline code that survives backticks and newlines inside the value."""
    text = value.replace("\r", "\\r").replace("\n", "\\n")
    if len(text) > _MAX_VALUE_CHARS:
        text = text[: _MAX_VALUE_CHARS - 1] + "…"
    if "`" in text:
        return f"`` {text} ``"
    return f"`{text}`"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _format_stat(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _stats_line(stats: dict[str, object]) -> str:
    keys = sorted(k for k in stats if k not in _HIDDEN_STATS)
    parts = [f"{key.replace('_', ' ')}: {_format_stat(stats[key])}" for key in keys]
    return ", ".join(parts)


def render_column(column: Column) -> str:
    """One ``### <column>`` section (used by docs init to merge new columns into edited files)."""
    lines = [f"### {column.name}", f"- **Type:** {column.type}"]
    if column.description:
        lines.append(f"- **Description:** {_one_line(column.description)}")
    if column.value_description:
        lines.append(f"- **Value description:** {_one_line(column.value_description)}")
    lines.append(f"- **Nullable:** {'yes' if column.nullable else 'no'}")
    if column.primary_key:
        lines.append("- **Primary key:** yes")
    if column.foreign_key is not None:
        fk = column.foreign_key
        lines.append(f"- **Foreign key:** references `{fk.table}.{fk.column}`")
    if column.sample_values:
        label = "Sample values"
        if column.stats.get("sample_complete"):
            label = "Sample values (all distinct values)"
        lines.append(f"- **{label}:** " + ", ".join(_code(v) for v in column.sample_values))
    if _stats_line(column.stats):
        lines.append(f"- **Statistics:** {_stats_line(column.stats)}")
    if column.pii:
        lines.append("- **PII:** yes (looks sensitive; sample values are withheld)")
    return "\n".join(lines) + "\n"


FKIndex = dict[str, list[tuple[str, str, str, str]]]


def fk_index(db: Database) -> FKIndex:
    """Foreign keys by lower-cased table (both ends), so rendering every table of a warehouse
    reads each key twice instead of every key once per table (quadratic at 2,000 tables)."""
    out: FKIndex = {}
    for fk in db.foreign_keys():
        out.setdefault(fk[0].lower(), []).append(fk)
        if fk[2].lower() != fk[0].lower():
            out.setdefault(fk[2].lower(), []).append(fk)
    return out


def _join_patterns(db: Database, table: Table, fks: FKIndex | None = None) -> tuple[list[str], list[str]]:
    """Related table names and ``a.x = b.y`` joins touching ``table``, both directions, sorted."""
    related: set[str] = set()
    joins: set[str] = set()
    touching = db.foreign_keys() if fks is None else fks.get(table.name.lower(), [])
    for src, col, ref_table, ref_col in touching:
        if src.lower() == table.name.lower():
            related.add(ref_table)
            joins.add(f"{src}.{col} = {ref_table}.{ref_col}")
        elif ref_table.lower() == table.name.lower():
            related.add(src)
            joins.add(f"{src}.{col} = {ref_table}.{ref_col}")
    related.discard(table.name)
    return sorted(related), sorted(joins)


def relationship_lines(db: Database, table: Table, fks: FKIndex | None = None) -> list[str]:
    """The body of a generated ``## Relationships`` section: the foreign keys touching ``table``
    (none: no section). The scaled embedding plan compares a doc's section with this to tell a
    generated one (the schema restated) from one a person wrote."""
    related, joins = _join_patterns(db, table, fks)
    if not joins:
        return []
    return [
        "- **Related tables:** " + ", ".join(related if related else [table.name]),
        *(f"- **Join patterns:** `{j}`" for j in joins),
    ]


def render_table_doc(db: Database, table: Table, fks: FKIndex | None = None) -> str:
    """The full ``# Table: <name>`` document for one table (``fks``: :func:`fk_index` of ``db``,
    when rendering many tables)."""
    purpose = _one_line(table.description) or (
        f"Holds {_words(table.name)} records (table `{table.name}`); no description has been written yet."
    )
    parts = [f"# Table: {table.name}", "", "## Purpose", purpose, "", "## Columns"]
    parts.extend(render_column(col) for col in table.columns)
    relationships = relationship_lines(db, table, fks)
    if relationships:
        parts.extend(["## Relationships", *relationships, ""])
    notes = []
    if table.primary_key:
        notes.append("- **Primary key:** " + ", ".join(f"`{c}`" for c in table.primary_key))
    if table.row_count is not None:
        notes.append(f"- **Row count:** {table.row_count} (at snapshot time)")
    if table.kind and table.kind != "table":
        notes.append(f"- **Kind:** {table.kind.replace('_', ' ')} (queried like a table, read-only)")
    if notes:
        parts.extend(["## Notes", *notes, ""])
    return "\n".join(parts).rstrip("\n") + "\n"


def render_index_doc(db: Database) -> str:
    """The ``_index.md`` overview: description, tables with their docs, all joins."""
    parts = [f"# Database: {db.name}", ""]
    parts.append("## Overview")
    parts.append(
        _one_line(db.description) or f"The `{db.name}` database ({len(db.tables)} tables, {db.dialect})."
    )
    parts.append("")
    facts = [f"- **Dialect:** {db.dialect}"]
    if db.schema_version:
        facts.append(f"- **Schema version:** {db.schema_version}")
    if db.tenant:
        facts.append(f"- **Tenant:** {db.tenant}")
    parts.extend([*facts, "", "## Tables"])
    for table in db.tables:
        desc = _one_line(table.description)
        line = f"- `{table.name}` ({len(table.columns)} columns)"
        parts.append(f"{line}: {desc}" if desc else line)
    parts.append("")
    joins = sorted({f"{s}.{c} = {rt}.{rc}" for s, c, rt, rc in db.foreign_keys()})
    if joins:
        parts.append("## Relationships")
        parts.extend(f"- **Join patterns:** `{j}`" for j in joins)
    return "\n".join(parts).rstrip("\n") + "\n"
