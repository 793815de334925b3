"""The authoritative schema of one database: models, loader and foreign-key graph.

``data/schemas/<db>.json`` is the source of truth for tables and columns; docs only add
meaning. The loader validates with pydantic and turns every problem into one
:class:`~schemarag.runtime.core.errors.SchemaFileError` naming the file, the JSON path and the fix.

Example:
    >>> db = Database.model_validate({"name": "shop", "tables": [
    ...     {"name": "users", "columns": [{"name": "id", "type": "INTEGER", "primary_key": True}]},
    ...     {"name": "orders", "columns": [
    ...         {"name": "id", "type": "INTEGER", "primary_key": True},
    ...         {"name": "user_id", "type": "INTEGER",
    ...          "foreign_key": {"table": "users", "column": "id"}}]}]})
    >>> sorted(db.neighbours("orders"))
    ['users']
"""

from __future__ import annotations

import json
import re
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from schemarag.runtime.core.errors import SchemaFileError
from schemarag.runtime.core.json_limits import loads_bounded
from schemarag.runtime.core.json_paths import json_path

SUPPORTED_DIALECTS = ("postgres", "sqlite", "duckdb", "mysql", "bigquery", "snowflake", "tsql")


MAX_TYPE_CHARS = 65_536
_TYPE_FORBIDDEN = re.compile(r";|--|/\*|\*/|[\x00-\x1f\x7f\\]")
_TYPE_PAIRS = {"(": ")", "[": "]", "<": ">"}


def check_type_text(value: str) -> str:
    """A column type that cannot break out of its line in rendered DDL (the type is printed
    verbatim when sqlglot does not know it): no ``;``, comments or control characters,
    brackets and quotes balanced, no ``,`` outside brackets. Real types all pass:
    ``NUMERIC(12,2)``, ``enum('a','b')``, ``STRUCT(a INT, b TEXT)``, ``timestamp with time zone``.

    >>> check_type_text("NUMERIC(12, 2)")
    'NUMERIC(12, 2)'
    >>> check_type_text('"from" weird type ); DROP,')
    Traceback (most recent call last):
    ...
    ValueError: type '"from" weird type ); DROP,' contains ';', which could end the column in DDL; ...
    """
    fix = "use a plain SQL type such as TEXT or VARCHAR(20)"
    if len(value) > MAX_TYPE_CHARS:
        raise ValueError(f"type is {len(value)} characters, at most {MAX_TYPE_CHARS} are allowed; {fix}")
    bad = _TYPE_FORBIDDEN.search(value)
    if bad:
        raise ValueError(f"type {value!r} contains {bad.group()!r}, which could end the column in DDL; {fix}")
    stack: list[str] = []
    quote = ""
    for ch in value:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch in _TYPE_PAIRS:
            stack.append(_TYPE_PAIRS[ch])
        elif ch in ")]>" and (not stack or stack.pop() != ch):
            raise ValueError(f"type {value!r} has an unbalanced {ch!r}; {fix}")
        elif ch == "," and not stack:
            raise ValueError(f"type {value!r} has a ',' outside brackets (another column?); {fix}")
    if quote or stack:
        raise ValueError(f"type {value!r} has an unclosed {quote or stack[-1]!r}; {fix}")
    return value


# C0 and C1 controls, DEL, NUL and the Unicode line/paragraph separators: each can end a line
# comment (``-- shard note``), split a doc heading (``# Table: ...``) or a prompt line, so a
# name holding one could turn data into prompt or DDL text (issue 39). Names are refused, never
# escaped: one rule at the door instead of one escape per renderer.
_NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def control_character(name: str) -> str | None:
    """``U+XXXX`` of the first control character in ``name``, else None.

    >>> control_character("ev\\r); DROP TABLE users; --"), control_character("orders")
    ('U+000D', None)
    """
    found = _NAME_CONTROL.search(name)
    return f"U+{ord(found.group()):04X}" if found else None


def check_name_text(value: str) -> str:
    """``value`` if it holds no control character (see :func:`control_character`), else raise."""
    code = control_character(value)
    if code:
        raise ValueError(
            f"name {value!r} contains the control character {code}, which could end a comment or a "
            "line where the name is rendered; rename it (control characters are not allowed in names)"
        )
    return value


# A warehouse repeats a few dozen type strings across 100,000 columns: check each once (a failed
# check raises, and exceptions are not cached, so a bad type is reported every time).
_checked_type = lru_cache(maxsize=4096)(check_type_text)


class ForeignKey(BaseModel):
    """A column-level reference ``table.column``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    table: str
    column: str
    # True for a join inferred at build time from names/types (no declared constraint): the
    # DDL renders it as a comment, so the generator knows it is a guess. Left out of dumps when
    # False, so schemas and snapshots without inference serialise exactly as before.
    inferred: bool = Field(default=False, exclude_if=lambda v: not v)
    # What an inferred join rests on: "values" (the child's values were found in the parent key
    # on the live database) or "names" / unset (column and table names only). Left out when unset.
    evidence: Literal["names", "values"] | None = Field(default=None, exclude_if=lambda v: v is None)
    # How sure an inferred join is (0-1; which rule found it: docs/ranking.md). Ranking spends
    # budget on an inferred edge only below a declared one. Left out when unset.
    confidence: float | None = Field(default=None, ge=0.0, le=1.0, exclude_if=lambda v: v is None)

    _names = field_validator("table", "column")(check_name_text)


class Column(BaseModel):
    """One column. ``sample_values`` and ``stats`` come from imports or live snapshots."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    type: str = "TEXT"
    nullable: bool = True
    primary_key: bool = False
    description: str = ""
    value_description: str = ""
    foreign_key: ForeignKey | None = None
    sample_values: list[str] = Field(default_factory=list)
    stats: dict[str, Any] = Field(default_factory=dict)
    pii: bool = False

    @field_validator("type")
    @classmethod
    def _type_text(cls, value: str) -> str:
        return _checked_type(value)

    _name = field_validator("name")(check_name_text)


class ShardRange(BaseModel):
    """The members of a collapsed shard family (``events_20210101`` .. ``events_20211231`` shown as
    one table ``events_*``): ``stem`` + a suffix from ``first`` to ``last`` (same length, compared as
    text), ``count`` of them. The DDL says how to query them and the validator maps a member's name
    to the family, so SQL naming a real shard still checks."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    stem: str = Field(min_length=1)  # the family name without its "*": "ga4.events_"
    pattern: str  # the suffix's shape: YYYYMMDD, YYYY_MM_DD, YYYYMM, YYYY or N
    first: str
    last: str
    count: int = Field(ge=1)

    def member(self, name: str) -> bool:
        """True when ``name`` (any case) is one of the family's shards."""
        low, stem = name.lower(), self.stem.lower()
        if not low.startswith(stem):
            return False
        suffix = low[len(stem) :]
        if self.pattern == "N":
            return suffix.isdigit() and int(self.first) <= int(suffix) <= int(self.last)
        return (
            len(suffix) == len(self.first)
            and suffix.replace("_", "").isdigit()
            and self.first <= suffix <= self.last
        )

    def wildcard(self, name: str) -> bool:
        """True when ``name`` is a BigQuery wildcard over part of the family
        (``ga_sessions_2017*``): the stem, then a suffix prefix that some member starts with.
        Analysts' SQL selects a year or a month this way; it reads the family's table.

        >>> r = ShardRange(stem="ga_sessions_", pattern="YYYYMMDD", first="20160801", last="20170801",
        ...                count=366)
        >>> r.wildcard("GA_SESSIONS_2017*"), r.wildcard("ga_sessions_2015*"), r.wildcard("ga_sessions_*")
        (True, False, True)
        """
        low, stem = name.lower(), self.stem.lower()
        if not low.endswith("*") or not low.startswith(stem):
            return False
        part = low[len(stem) : -1]
        if part and not part.replace("_", "").isdigit():
            return False
        if self.pattern == "N":
            return not part or any(
                int(part) * 10 ** (width - len(part)) <= int(self.last)
                and (int(part) + 1) * 10 ** (width - len(part)) > int(self.first)
                for width in range(max(len(part), len(self.first)), len(self.last) + 1)
            )
        width = len(part)
        return width <= len(self.first) and self.first[:width] <= part <= self.last[:width]


# The longest Table.label: a name in words, not a description (importers cut theirs to it).
LABEL_MAX_CHARS = 200


class Table(BaseModel):
    """One table with its columns, in schema order."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    description: str = ""
    columns: list[Column] = Field(min_length=1)
    row_count: int | None = None
    # What the warehouse says the relation is (``table_type``): a view is queried like a table but
    # cannot be written to, and the DDL says ``CREATE VIEW``. Left out of dumps when unset.
    kind: Literal["table", "view", "materialized_view", "external"] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    # A collapsed shard family: which tables it stands for. Left out of dumps when unset.
    shards: ShardRange | None = Field(default=None, exclude_if=lambda v: v is None)
    # The source database of this table when the datasource pools several (a union): routing
    # reads membership from here, never from a naming convention. Left out of dumps when unset.
    database: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # dbt layer of an imported relation (marts, reports, model, seed, snapshot, intermediate,
    # staging, source): the ranking's layer prior reads it (runtime.search.layer_prior).
    layer: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # The table's name in words where its documentation gives one the identifier does not say: a
    # data dictionary's short text (``KNA1``: "customer master"), BIRD's natural name (``frpm``:
    # "free and reduced-price meals"). The name boost reads it beside the name (named_tables.py).
    # Left out of dumps when unset.
    label: str | None = Field(default=None, max_length=LABEL_MAX_CHARS, exclude_if=lambda v: v is None)

    _name = field_validator("name")(check_name_text)

    @model_validator(mode="after")
    def _unique_columns(self) -> Table:
        seen: set[str] = set()
        for col in self.columns:
            key = col.name.lower()
            if key in seen:
                raise ValueError(f"duplicate column {col.name!r} in table {self.name!r}")
            seen.add(key)
        return self

    @property
    def primary_key(self) -> list[str]:
        return [c.name for c in self.columns if c.primary_key]

    def column(self, name: str) -> Column | None:
        """The column called ``name`` (any case). A map built on first use, not a scan per call:
        chunking a doc looks up every documented column, quadratic on 1,500-column tables. The
        map is rebuilt if ``columns`` was replaced or resized since (``model_copy(update=...)``
        copies it along)."""
        cols = self.columns
        cached = self.__dict__.get("_columns_by_name")
        if cached is None or cached[0] is not cols or len(cached[1]) != len(cols):
            by_name: dict[str, Column] = {}
            for c in cols:
                by_name.setdefault(c.name.lower(), c)
            cached = (cols, by_name)
            self.__dict__["_columns_by_name"] = cached
        return cached[1].get(name.lower())


class Database(BaseModel):
    """A database (or a union of databases) as the index sees it."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    description: str = ""
    dialect: str = "postgres"
    tables: list[Table] = Field(min_length=1)
    schema_version: str | None = None
    tenant: str | None = None

    _name = field_validator("name")(check_name_text)

    @model_validator(mode="after")
    def _check_references(self) -> Database:
        # Cross-field problems have no pydantic location of their own, so each message starts
        # with its JSON path; _format_validation_error prints that path instead of ``$``.
        if self.dialect not in SUPPORTED_DIALECTS:
            raise ValueError(
                f"$.dialect: {self.dialect!r} is not supported; use one of {', '.join(SUPPORTED_DIALECTS)}"
            )
        by_name: dict[str, Table] = {}
        for ti, table in enumerate(self.tables):
            if table.name.lower() in by_name:
                raise ValueError(f"$.tables[{ti}]({table.name}).name: duplicate table {table.name!r}")
            by_name[table.name.lower()] = table
        for ti, table in enumerate(self.tables):
            for ci, col in enumerate(table.columns):
                fk = col.foreign_key
                if fk is None:
                    continue
                where = f"$.tables[{ti}]({table.name}).columns[{ci}]({col.name}).foreign_key"
                target = by_name.get(fk.table.lower())
                if target is None:
                    raise ValueError(
                        f"{where}: {table.name}.{col.name} references unknown table {fk.table!r}"
                    )
                if target.column(fk.column) is None:
                    raise ValueError(
                        f"{where}: {table.name}.{col.name} references unknown column {fk.table}.{fk.column}"
                    )
        return self

    @cached_property
    def table_map(self) -> dict[str, Table]:
        """Tables by lower-cased name."""
        return {t.name.lower(): t for t in self.tables}

    def table(self, name: str) -> Table | None:
        return self.table_map.get(name.lower())

    @cached_property
    def _adjacency(self) -> dict[str, set[str]]:
        adj: dict[str, set[str]] = {t.name: set() for t in self.tables}
        for table in self.tables:
            for col in table.columns:
                if col.foreign_key is None:
                    continue
                target = self.table_map[col.foreign_key.table.lower()].name
                if target != table.name:
                    adj[table.name].add(target)
                    adj[target].add(table.name)
        return adj

    def neighbours(self, table: str) -> set[str]:
        """Tables one foreign-key hop away, in either direction."""
        t = self.table(table)
        return set(self._adjacency[t.name]) if t else set()

    def foreign_keys(self) -> list[tuple[str, str, str, str]]:
        """All ``(table, column, ref_table, ref_column)`` in schema order."""
        return [
            (t.name, c.name, c.foreign_key.table, c.foreign_key.column)
            for t in self.tables
            for c in t.columns
            if c.foreign_key is not None
        ]


def _format_validation_error(path: Path, exc: ValidationError, data: Any) -> str:
    lines = [f"{path}: invalid schema ({exc.error_count()} problem(s))"]
    for err in exc.errors()[:20]:
        loc = _json_path(err["loc"], data)
        msg = err["msg"].removeprefix("Value error, ")
        if msg.startswith("$"):  # a cross-field check that names its own path (see _check_references)
            loc, _, msg = msg.partition(": ")
        lines.append(f"  at {loc}: {msg}")
    lines.append("  fix the fields above; the format is in docs/schema-json.md")
    return "\n".join(lines)


def _json_path(loc: tuple[Any, ...], data: Any) -> str:
    """``('tables', 3, 'columns', 0, 'name')`` -> ``$.tables[3](orders).columns[0].name``."""
    return json_path(loc, data)


def parse_schema(data: Any, source: str | Path = "<schema>") -> Database:
    """Validate already-decoded JSON; errors name ``source`` and the JSON path."""
    try:
        return Database.model_validate(data)
    except ValidationError as exc:
        raise SchemaFileError(_format_validation_error(Path(source), exc, data)) from None


def load_schema(path: str | Path) -> Database:
    """Read and validate ``path``; raises :class:`SchemaFileError` with a precise message."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise SchemaFileError(f"{p}: schema file not found; create it or check --data") from None
    except OSError as exc:
        raise SchemaFileError(f"{p}: cannot read schema file: {exc.strerror}") from None
    try:
        data = loads_bounded(raw.decode("utf-8"), str(p))  # depth checked before json recurses
    except UnicodeDecodeError as exc:
        raise SchemaFileError(f"{p}: not UTF-8 at byte {exc.start}; save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise SchemaFileError(
            f"{p}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except ValueError as exc:  # nested past MAX_JSON_DEPTH
        raise SchemaFileError(f"{exc}; a schema needs only a few levels") from None
    except RecursionError:  # a backstop: the depth check above comes first
        raise SchemaFileError(f"{p}: JSON nested too deeply; a schema needs only a few levels") from None
    if not isinstance(data, dict):
        raise SchemaFileError(f"{p}: the top level must be a JSON object with 'name' and 'tables'")
    return parse_schema(data, p)
