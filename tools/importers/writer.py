"""Write imported databases as our inputs: ``<out>/<db>.json`` and ``<out>/<db>/docs/*.md``.

The JSON file is written to a temporary sibling and renamed into place so a reader never
sees half a schema. Doc files are rendered by :mod:`schemarag.assets.lib.docs_writer` (the same renderer
live snapshots use); files left over from an earlier import of the same database are
removed so a renamed table does not leave a stale doc behind.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from schemarag.assets.lib.docs_writer import doc_file_name, fk_index, render_index_doc, render_table_doc
from schemarag.runtime.core.errors import ImportFormatError
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import docs_dir, schema_path
from schemarag.runtime.core.schema import Database, Table
from schemarag.tools.importers.descriptions import find_description_files
from schemarag.tools.importers.metadata import load_metadata
from schemarag.tools.importers.spider_bird import build_database, read_catalogs, schema_json, union_databases

log = logging.getLogger(__name__)


@dataclass
class ImportReport:
    """What an import wrote, and every warning met on the way."""

    databases: list[str] = field(default_factory=list)
    tables: int = 0
    columns: int = 0
    foreign_keys: int = 0
    files: int = 0
    warnings: list[str] = field(default_factory=list)
    raw_tables: int = 0  # relations in the export before shard families were collapsed (catalog)

    def add(self, db: Database) -> None:
        """Count one written database (every importer reports the same way)."""
        self.databases.append(db.name)
        self.tables += len(db.tables)
        self.columns += sum(len(t.columns) for t in db.tables)
        self.foreign_keys += len(db.foreign_keys())


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _documented_only(table: Table) -> Table:
    """The table as its doc shows it: columns with something to say, plus key columns."""
    keep = [
        c
        for c in table.columns
        if c.description or c.value_description or c.sample_values or c.primary_key or c.foreign_key or c.pii
    ]
    return table.model_copy(update={"columns": keep}) if keep else table


def write_database(
    db: Database,
    out: Path,
    extra_sections: dict[str, str] | None = None,
    all_columns_in_docs: bool = True,
) -> int:
    """Write one database's JSON and docs under ``out``; returns the number of files written.

    ``extra_sections`` appends importer-specific markdown (``## Lineage`` from dbt) to a table's doc.
    ``all_columns_in_docs=False`` (warehouse exports) leaves columns with nothing but a name and a
    type out of the docs: the schema JSON still has them and the chunker makes their chunks from
    it, while 100,000 one-line ``### column`` sections would dominate doc parsing in every build.
    """
    check_name(db.name, "database")
    out.mkdir(parents=True, exist_ok=True)
    folder = docs_dir(out, db.name)
    folder.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, str] = {"_index.md": render_index_doc(db)}
    fks = fk_index(db)
    for table in db.tables:
        doc = render_table_doc(db, table if all_columns_in_docs else _documented_only(table), fks)
        extra = (extra_sections or {}).get(table.name)
        wanted[doc_file_name(table.name)] = f"{doc}\n{extra}" if extra else doc
    for stale in folder.glob("*.md"):
        if stale.name not in wanted:
            log.info("removing stale doc %s", stale)
            stale.unlink()
    for name, text in wanted.items():
        (folder / name).write_text(text, encoding="utf-8")
    _atomic_write(schema_path(out, db.name), schema_json(db))
    return len(wanted) + 1


INPUTS_FILE = "inputs.json"


def _inputs_of(db_id: str, descriptions: Path | None, meta: dict) -> list[str]:
    """What documentation a database was imported with, beyond its schema."""
    kinds = []
    if descriptions is not None and find_description_files(descriptions, db_id):
        kinds.append("descriptions")
    if db_id in meta:
        kinds.append("metadata")
    return kinds


def write_inputs(out: Path, name: str, inputs: dict[str, list[str]]) -> Path:
    """``<out>/<name>/inputs.json``: per source database, the documentation kinds it got.

    ``schemarag eval`` reads it to label a union setting symmetric (every database got the
    same kinds) or asymmetric; the build never reads it, so it changes no artifact.
    """
    path = out / name / INPUTS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, json.dumps({"databases": inputs}, indent=1, sort_keys=True) + "\n")
    return path


def input_setting(data: Path, name: str) -> dict[str, object]:
    """``{"symmetric": bool, "inputs": {kinds: n databases}}`` from ``inputs.json``; an empty
    dict when the datasource was not imported by us (nothing to say).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = write_inputs(d, "u", {"a": ["descriptions"], "b": []})
    >>> input_setting(d, "u")
    {'symmetric': False, 'inputs': {'descriptions': 1, 'schema only': 1}}
    """
    path = data / name / INPUTS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))["databases"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    counts: dict[str, int] = {}
    for kinds in raw.values():
        label = "+".join(kinds) or "schema only"
        counts[label] = counts.get(label, 0) + 1
    return {"symmetric": len(counts) == 1, "inputs": dict(sorted(counts.items()))}


def _without_fks(table: Table) -> Table:
    cols = [c.model_copy(update={"foreign_key": None}) for c in table.columns]
    return table.model_copy(update={"columns": cols})


def import_catalog(
    tables: list[Path],
    out: Path,
    *,
    kind: str = "bird",
    descriptions: Path | None = None,
    metadata: list[Path] | None = None,
    union: str | None = None,
    strip_foreign_keys: bool = False,
    infer_joins: bool = False,
) -> ImportReport:
    """Import every database in ``tables`` into ``out`` (one datasource each, or one ``union``)."""
    if kind not in ("bird", "spider"):
        raise ImportFormatError(f"unknown catalog kind {kind!r}; use 'bird' or 'spider'")
    if union is not None:
        check_name(union, "union name")
    if descriptions is not None and not descriptions.is_dir():
        raise ImportFormatError(f"{descriptions}: descriptions folder not found; check --descriptions")
    meta = load_metadata(metadata or [])
    report = ImportReport()
    built: list[Database] = []
    for entry, source in read_catalogs(tables):
        if union is None:
            check_name(str(entry["db_id"]), "database")
        db = build_database(
            entry, report.warnings, descriptions=descriptions, metadata=meta, source=source, kind=kind
        )
        if strip_foreign_keys:  # an evaluation setting: a schema that declares no relationships
            db = db.model_copy(update={"tables": [_without_fks(t) for t in db.tables]})
        if infer_joins:
            from schemarag.assets.lib.join_inference import infer_foreign_keys

            db = infer_foreign_keys(db)
        built.append(db)
    missing_meta = sorted(set(meta) - {db.name for db in built})
    if missing_meta:
        report.warnings.append(f"metadata names databases not in --tables: {', '.join(missing_meta)}")
    outputs = [union_databases(built, union, kind)] if union is not None else built
    inputs = {db.name: _inputs_of(db.name, descriptions, meta) for db in built}
    for db in outputs:
        report.files += write_database(db, out)
        members = [m.name for m in built] if union is not None else [db.name]
        write_inputs(out, db.name, {m: inputs[m] for m in members})
        report.add(db)
    for warning in report.warnings:
        log.debug("%s", warning)  # the CLI prints them summarized (warning_summary)
    return report
