"""A generated warehouse-shaped catalog export for ``schemarag bench catalog``.

Shape, not content, is what the benchmark needs: several schemas, thousands of tables whose
widths follow a long tail (most 20-80 columns, a few several hundred), foreign keys through
``<entity>_id`` columns, date-sharded families (``events_20240101`` ...), and comments on a
fraction of the columns drawn from a pool, so the same column is documented the same way in many
tables, as in real warehouses. The export is written as INFORMATION_SCHEMA-shaped Parquet in
batches, so generating 500,000 columns never holds them all as Python objects.

Example:
    >>> import tempfile, pathlib
    >>> spec = CatalogSpec(tables=12, columns=400, schemas=2, families=1, shards=3)
    >>> out = write_export(spec, pathlib.Path(tempfile.mkdtemp()))
    >>> out.logical_tables, out.logical_columns >= 400, out.physical_tables
    (12, True, 14)
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMAS = ("sales", "marketing", "finance", "product", "support", "logistics", "hr", "analytics")
ENTITIES = (
    "customer", "order", "invoice", "payment", "shipment", "product", "campaign", "session", "ticket",
    "account", "supplier", "warehouse", "employee", "contract", "subscription", "refund", "lead",
    "opportunity", "store", "region", "device", "promotion", "review", "carrier", "budget",
)  # fmt: skip
QUALIFIERS = (
    "",
    "daily",
    "history",
    "snapshot",
    "detail",
    "summary",
    "staging",
    "audit",
    "monthly",
    "events",
)
ATTRIBUTES = {
    "status": ("VARCHAR", "Lifecycle status of the record (open, closed, cancelled)."),
    "amount": ("NUMERIC(18,2)", "Monetary amount in US dollars."),
    "created_at": ("TIMESTAMP", "When the row was created in the source system."),
    "updated_at": ("TIMESTAMP", "When the row was last changed."),
    "country_code": ("CHAR(2)", "ISO 3166 two-letter country code."),
    "email": ("VARCHAR", "Contact e-mail address."),
    "quantity": ("INTEGER", "Number of units."),
    "unit_price": ("NUMERIC(18,4)", "Price of one unit before discounts."),
    "discount_rate": ("FLOAT", "Discount applied, as a fraction between 0 and 1."),
    "currency": ("CHAR(3)", "ISO 4217 currency code of the amounts."),
    "is_active": ("BOOLEAN", "Whether the record is currently active."),
    "channel": ("VARCHAR", "Sales or marketing channel (web, store, partner)."),
    "score": ("FLOAT", "Model score between 0 and 1."),
    "name": ("VARCHAR", "Display name."),
    "description": ("TEXT", "Free-text description entered by staff."),
    "city": ("VARCHAR", "City name."),
    "postal_code": ("VARCHAR", "Postal or ZIP code."),
    "phone": ("VARCHAR", "Phone number in E.164 format."),
    "tax_amount": ("NUMERIC(18,2)", "Tax charged, in US dollars."),
    "margin": ("NUMERIC(18,2)", "Gross margin in US dollars."),
}
METRICS = ("count", "sum", "avg", "min", "max", "p95", "share", "delta", "rank", "flag")


@dataclass
class CatalogSpec:
    tables: int = 2_000  # logical tables (a sharded family counts once)
    columns: int = 120_000  # logical columns
    schemas: int = 6
    families: int = 8  # date-sharded families
    shards: int = 31  # tables per family (one per day)
    documented: float = 0.25  # fraction of columns with a comment
    seed: int = 0


@dataclass
class ExportFiles:
    columns: Path
    tables: Path
    foreign_keys: Path
    logical_tables: int = 0
    logical_columns: int = 0
    physical_tables: int = 0
    physical_columns: int = 0
    table_names: list[str] = field(default_factory=list)  # logical, schema-qualified


def _widths(spec: CatalogSpec, rng: random.Random) -> list[int]:
    """Column counts with a long tail, summing to ``spec.columns`` (each at least 4)."""
    raw = [rng.paretovariate(1.6) for _ in range(spec.tables)]
    scale = (spec.columns - 4 * spec.tables) / sum(raw)
    widths = [4 + int(r * scale) for r in raw]
    widths = [min(w, 1500) for w in widths]
    i = 0
    while sum(widths) < spec.columns:  # rounding and the cap: top up round-robin
        widths[i % len(widths)] += 1
        i += 1
    return widths


class _Writer:
    """Batched Parquet writer for one export file."""

    def __init__(self, path: Path, names: list[str], batch: int = 50_000) -> None:
        self.path, self.names, self.batch = path, names, batch
        self.rows: list[tuple] = []
        self.writer: pq.ParquetWriter | None = None

    def add(self, *row: object) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.batch:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        cols = list(zip(*self.rows, strict=True))
        table = pa.table({n: pa.array([None if v is None else str(v) for v in c], pa.string())
                          for n, c in zip(self.names, cols, strict=True)})  # fmt: skip
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, table.schema)
        self.writer.write_table(table)
        self.rows = []

    def close(self) -> None:
        self.flush()
        if self.writer is None:
            pq.write_table(pa.table({n: pa.array([], pa.string()) for n in self.names}), self.path)
        else:
            self.writer.close()


def _table_columns(
    rng: random.Random, entity: str, width: int, entities: list[str]
) -> list[tuple[str, str, str]]:
    """``(name, type, attribute key)`` for one table: id, FK ids, attributes, then metrics."""
    cols = [("id", "BIGINT", "")]
    for other in rng.sample(entities, k=min(3, len(entities))):
        if other != entity and len(cols) < width:
            cols.append((f"{other}_id", "BIGINT", ""))
    attrs = list(ATTRIBUTES)
    rng.shuffle(attrs)
    for a in attrs:
        if len(cols) >= width:
            break
        cols.append((a, ATTRIBUTES[a][0], a))
    n = 0
    while len(cols) < width:
        other = entities[n % len(entities)]
        metric = METRICS[(n // len(entities)) % len(METRICS)]
        cols.append((f"{other}_{metric}_{n // (len(entities) * len(METRICS))}", "NUMERIC(18,2)", metric))
        n += 1
    return cols


def write_export(spec: CatalogSpec, folder: Path) -> ExportFiles:
    """Write ``columns.parquet``, ``tables.parquet`` and ``foreign_keys.parquet`` into ``folder``."""
    rng = random.Random(spec.seed)
    folder.mkdir(parents=True, exist_ok=True)
    out = ExportFiles(folder / "columns.parquet", folder / "tables.parquet", folder / "foreign_keys.parquet")
    cw = _Writer(out.columns, ["table_catalog", "table_schema", "table_name", "column_name",
                               "ordinal_position", "data_type", "is_nullable", "column_comment"])  # fmt: skip
    tw = _Writer(out.tables, ["table_schema", "table_name", "table_type", "table_comment"])
    fw = _Writer(out.foreign_keys, ["table_schema", "table_name", "column_name", "referenced_table_schema",
                                    "referenced_table_name", "referenced_column_name"])  # fmt: skip
    schemas = list(SCHEMAS[: max(1, min(spec.schemas, len(SCHEMAS)))])
    hubs = {e: schemas[i % len(schemas)] for i, e in enumerate(ENTITIES)}  # <schema>.<entity> holds the key
    plain = spec.tables - spec.families
    names: list[tuple[str, str, str]] = [(hubs[e], e, e) for e in ENTITIES[:plain]]
    seen = {(s, n) for s, n, _ in names}
    while len(names) < plain:
        entity = rng.choice(ENTITIES)
        qual = rng.choice(QUALIFIERS[1:])
        schema = rng.choice(schemas)
        base = f"{entity}_{qual}"
        name, k = base, 2
        while (schema, name) in seen:
            name, k = f"{base}_v{k}", k + 1
        seen.add((schema, name))
        names.append((schema, name, entity))
    widths = _widths(CatalogSpec(**{**spec.__dict__, "tables": spec.tables}), rng)
    day0 = dt.date(2024, 1, 1)
    for i in range(spec.families):
        names.append(
            ("analytics" if "analytics" in schemas else schemas[-1], f"{ENTITIES[i]}_events_", ENTITIES[i])
        )
    for (schema, name, entity), width in zip(names, widths, strict=True):
        cols = _table_columns(rng, entity, width, list(ENTITIES))
        family = name.endswith("_events_")
        physical = [f"{name}{(day0 + dt.timedelta(days=d)).strftime('%Y%m%d')}" for d in range(spec.shards)] \
            if family else [name]  # fmt: skip
        out.logical_tables += 1
        out.logical_columns += len(cols)
        out.table_names.append(f"{schema}.{name}*" if family else f"{schema}.{name}")
        what = name.removeprefix(entity).strip("_").replace("_", " ") or "record"
        comment = f"One row per {entity} {what} in the {schema} area."
        for pname in physical:
            out.physical_tables += 1
            tw.add(schema, pname, "BASE TABLE", comment)
            for pos, (col, ctype, attr) in enumerate(cols, 1):
                out.physical_columns += 1
                doc = ""
                if rng.random() < spec.documented:
                    doc = (
                        ATTRIBUTES[attr][1]
                        if attr in ATTRIBUTES
                        else (
                            f"{attr.upper()} of {col.split('_')[0]} over the reporting period."
                            if attr
                            else ""
                        )
                    )
                cw.add("warehouse", schema, pname, col, pos, ctype, "NO" if col == "id" else "YES", doc)
                if col.endswith("_id") and col != "id" and not family:
                    target = col.removesuffix("_id")
                    if (hubs[target], target) in seen:
                        fw.add(schema, pname, col, hubs[target], target, "id")
    for w in (cw, tw, fw):
        w.close()
    return out
