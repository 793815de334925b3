"""The datasources file: which live databases to snapshot, for which tenant, and how.

``data/datasources.yaml`` (or ``--datasources`` / ``$SCHEMARAG_DATASOURCES``) holds a top-level
``datasources:`` list. Secrets stay out of the file: ``connection: env:PG_DSN`` reads the DSN
from the environment at use time, and errors name the variable, never its value.

Example:
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ds.yaml"
    >>> _ = p.write_text("datasources:\\n  - {name: shop, kind: sqlite, tenant: acme, "
    ...                  "connection: shop.db}\\n")
    >>> load_datasources(p)[0].connection_path().name
    'shop.db'
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from schemarag.runtime.core.config import runtime_settings
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.json_paths import json_path
from schemarag.runtime.core.names import check_name
from schemarag.runtime.core.paths import did_you_mean

DEFAULT_DATASOURCES = "data/datasources.yaml"
DEFAULT_SCHEMAS = {"postgres": ["public"], "duckdb": ["main"], "sqlite": ["main"], "sqlalchemy": []}


class Sampling(BaseModel):
    """Bounds on what a snapshot reads from the data itself (never the whole table)."""

    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    max_values: int = Field(default=20, ge=0, le=1000, description="distinct values kept per column")
    max_distinct: int = Field(default=200, ge=1, description="sample only below this cardinality")
    scan_rows: int = Field(default=100_000, ge=1, description="rows read per column profile")
    max_value_chars: int = Field(default=100, ge=1, description="longer values are not kept")
    count_rows_below: int = Field(default=1_000_000, ge=0, description="exact COUNT(*) below this estimate")
    timeout_ms: int = Field(default=5_000, ge=1, description="per-statement timeout")


class JoinInference(BaseModel):
    """Bounds on value-containment join inference (``infer_joins: values`` or ``both``).

    Every check is a read-only, time-limited query over at most ``sample_values`` distinct child
    values (themselves taken from at most ``sampling.scan_rows`` rows), so the cost per database
    is at most ``max_pairs`` small queries plus one statistics query per candidate column.
    """

    model_config = ConfigDict(extra="forbid")
    max_pairs: int = Field(default=300, ge=1, description="containment checks per database")
    sample_values: int = Field(default=1000, ge=1, description="distinct child values checked per pair")
    min_distinct: int = Field(
        default=20, ge=1, description="distinct child values needed when the names do not relate"
    )
    # 0.95, not 1.0: databases that declare no keys have orphan rows (deleted parents), and one
    # orphan must not hide a join (or push it onto a wrong parent). Chosen leave-one-database-out
    # with `bench joins --loo` (docs/datasources.md).
    min_containment: float = Field(
        default=0.95, gt=0, le=1, description="share of sampled child values found in the parent key"
    )


class DatasourceEntry(BaseModel):
    """One live database. ``connection`` is a file path (sqlite/duckdb) or a DSN / ``env:VAR``."""

    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["sqlite", "duckdb", "postgres", "sqlalchemy"]  # sqlalchemy: connection is a URL
    tenant: str
    connection: str = Field(min_length=1)
    description: str = ""
    schemas: list[str] | None = None
    include_tables: list[str] = Field(default_factory=list)
    exclude_tables: list[str] = Field(default_factory=list)
    exclude_columns: list[str] = Field(default_factory=list)
    allow_pii_samples: list[str] = Field(default_factory=list)
    on_permission_denied: Literal["error", "skip"] = "error"
    sampling: Sampling = Field(default_factory=Sampling)
    # off: declared keys only (the default: inference reads data and changes the fingerprint);
    # names: join_inference's name rules; values: containment checked on the data; both: values,
    # then names for the columns the data could not decide.
    infer_joins: Literal["off", "names", "values", "both"] = "off"
    join_inference: JoinInference = Field(default_factory=JoinInference)
    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    _source: str = PrivateAttr(default="<datasources>")

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        return check_name(value, "datasource name")

    @field_validator("tenant")
    @classmethod
    def _check_tenant(cls, value: str) -> str:
        return check_name(value, "tenant")

    @property
    def source(self) -> str:
        """``<file>: datasource 'name'`` for error messages."""
        return f"{self._source}: datasource {self.name!r}"

    def effective_schemas(self) -> list[str]:
        return list(self.schemas) if self.schemas else list(DEFAULT_SCHEMAS[self.kind])

    def resolve_connection(self) -> str:
        """The connection string with ``env:VAR`` expanded; the value is never logged."""
        conn = self.connection
        if not conn.startswith("env:"):
            return conn
        var = conn[4:].strip()
        if not var:
            raise ConfigError(f"{self.source}: connection 'env:' names no variable; write env:PG_DSN")
        value = os.environ.get(var)
        if not value:
            raise ConfigError(
                f"{self.source}: connection reads environment variable {var}, which is not set "
                f"or empty; export {var}=<connection string>"
            )
        return value

    def connection_path(self) -> Path:
        """For sqlite/duckdb: the database file, relative paths from the datasources file's folder."""
        path = Path(self.resolve_connection()).expanduser()
        return path if path.is_absolute() else self._base_dir / path

    def table_selected(self, table: str) -> bool:
        name = table.lower()
        if self.include_tables and not _matches(name, self.include_tables):
            return False
        return not _matches(name, self.exclude_tables)

    def column_excluded(self, table: str, column: str) -> bool:
        """``exclude_columns`` entries are ``column`` or ``table.column`` globs (case-insensitive)."""
        return _matches_column(table, column, self.exclude_columns)

    def pii_allowed(self, table: str, column: str) -> bool:
        return _matches_column(table, column, self.allow_pii_samples)


def _matches(value: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(value, p.lower()) for p in patterns)


def _matches_column(table: str, column: str, patterns: list[str]) -> bool:
    return _matches(column.lower(), patterns) or _matches(f"{table}.{column}".lower(), patterns)


class DatasourcesFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    datasources: list[DatasourceEntry] = Field(default_factory=list)


def datasources_path(value: str | Path | None = None) -> Path:
    """``--datasources`` if given, else ``$SCHEMARAG_DATASOURCES``, else ``data/datasources.yaml``."""
    return Path(value or runtime_settings().schemarag_datasources or DEFAULT_DATASOURCES)


def _describe(loc: tuple[Any, ...], data: Any) -> str:
    """``('datasources', 1, 'kind')`` -> ``datasources[1] (name 'pg').kind``."""
    return json_path(loc, data, root="", label=" (name {!r})")


def parse_datasources(data: Any, source: str | Path) -> list[DatasourceEntry]:
    """Validate decoded YAML; errors name the file, the entry and the field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping with a 'datasources:' list")
    try:
        parsed = DatasourcesFile.model_validate(data)
    except ValidationError as exc:
        lines = [f"{source}: invalid datasources file ({exc.error_count()} problem(s))"]
        for err in exc.errors()[:20]:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"  at {_describe(err['loc'], data)}: {msg}")
        lines.append("  fix the fields above; see README 'Live datasources'")
        raise ConfigError("\n".join(lines)) from None
    seen: set[str] = set()
    base = Path(source).resolve().parent
    for entry in parsed.datasources:
        if entry.name.lower() in seen:
            raise ConfigError(f"{source}: datasource name {entry.name!r} appears twice; names must be unique")
        seen.add(entry.name.lower())
        entry._base_dir = base
        entry._source = str(source)
    return parsed.datasources


def load_datasources(path: str | Path | None = None) -> list[DatasourceEntry]:
    """Read and validate the datasources file (see :func:`datasources_path` for the default)."""
    import yaml

    p = datasources_path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{p}: datasources file not found; create it or pass --datasources / set SCHEMARAG_DATASOURCES"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read datasources file: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{p}: invalid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    return parse_datasources(data, p)


def get_datasource(name: str, path: str | Path | None = None) -> DatasourceEntry:
    """The entry called ``name``; the error lists the names that do exist."""
    check_name(name, "datasource name")
    entries = load_datasources(path)
    for entry in entries:
        if entry.name.lower() == name.lower():
            return entry
    known = ", ".join(e.name for e in entries) or "none"
    hint = did_you_mean(name, [e.name for e in entries])
    raise ConfigError(f"{datasources_path(path)}: no datasource named {name!r}{hint} (defined: {known})")
