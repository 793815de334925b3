"""The relation name dbt builds a node as: ``[database.]schema.alias``, as the warehouse runs it.

* **schema**: dbt calls ``generate_schema_name(custom_schema, node)``. Its default is
  ``<target schema>_<custom>`` (``prefixed``): ``+schema: marts`` on target ``analytics`` builds
  ``analytics_marts``. Many teams override it to use the custom schema as is (``custom``). Unless the
  user picks a mode (``--schema-mode``), the project's own ``generate_schema_name`` macro is run
  when it defines one (it falls back to ``prefixed``, with one warning, when it cannot run here).
* **target**: the target schema/database/adapter from ``--target-schema`` or, when the project keeps
  one, ``profiles.yml`` (the output dbt would use). Without a target schema, models without a
  custom schema keep a bare name (they live in whatever schema the connection defaults to).
* **database**: ``+database`` (sources: ``database:``) when it differs from the target database;
  the same database is left out (naming contract: ``schema.table`` unless several catalogs).
* **alias**: ``+alias`` or the model name; a source table's ``identifier`` or its name.
* **snapshots**: legacy ``target_schema`` is used as is (dbt does not run generate_schema_name on it).

Example:
    >>> naming = Naming(Target(schema="analytics", database="wh"), "prefixed")
    >>> naming.relation(RelationSpec(name="orders", kind="model", config={"schema": "marts"}), [])
    'analytics_marts.orders'
    >>> Naming(Target(schema="analytics"), "custom").relation(
    ...     RelationSpec(name="orders", kind="model", config={"schema": "marts", "alias": "fct_orders"}), [])
    'marts.fct_orders'
    >>> naming.relation(RelationSpec(name="raw.o", kind="source",
    ...     config={"schema": "raw", "identifier": "orders", "database": "lake"}), [])
    'lake.raw.orders'
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Literal

from schemarag.tools.importers.dbt.jinja_env import DbtJinja, RenderError, Target
from schemarag.tools.importers.dbt.specs import RelationSpec

SchemaMode = Literal["prefixed", "custom", "project"]
SCHEMA_MODES: tuple[str, ...] = ("prefixed", "custom", "project")
# adapters whose profile may leave the schema out (dbt-duckdb builds into "main" then)
_DEFAULT_SCHEMA = {"duckdb": "main"}


def target_from_profile(
    profile: dict[str, Any], dialect: str, schema: str | None, database: str | None
) -> Target:
    """dbt's ``target`` from the user's options, else the profile's output, else nothing known.

    DuckDB names its database after the file (``path: ./shop.duckdb`` -> ``shop``) and builds in
    ``main`` when the profile names no schema."""
    db = database or str(profile.get("database") or profile.get("dbname") or profile.get("catalog") or "")
    if not db and profile.get("path"):
        db = str(profile["path"]).replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0]
    kind = str(profile.get("type") or dialect)
    return Target(
        name=str(profile.get("target") or "dev"),
        schema=schema
        or str(profile.get("schema") or profile.get("dataset") or _DEFAULT_SCHEMA.get(kind, "")),
        database=db,
        type=kind,
    )


def _clean(part: Any) -> str:
    return str(part or "").strip().strip('"`[]').strip()


class Naming:
    """Decides relation names for one import (one target, one schema mode)."""

    def __init__(self, target: Target, mode: SchemaMode, env: DbtJinja | None = None) -> None:
        self.target = target
        self.mode = mode
        self.env = env
        self._warned: set[str] = set()

    def _warn_once(self, key: str, message: str, warnings: list[str]) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.append(message)

    def schema(self, rel: RelationSpec, custom: str | None, warnings: list[str]) -> str:
        """``generate_schema_name(custom, node)`` under this import's mode."""
        custom = _clean(custom) or None
        if self.mode == "project" and self.env is not None and self.env.has_macro("generate_schema_name"):
            node = SimpleNamespace(
                name=rel.node,
                resource_type=rel.kind,
                fqn=rel.fqn,
                package_name=rel.package,
                config=rel.config,
            )
            try:
                return _clean(self.env.call_macro("generate_schema_name", custom, node))
            except RenderError as exc:
                self._warn_once(
                    "macro",
                    f"generate_schema_name of the project cannot run here ({exc}); schemas follow dbt's "
                    "default (<target>_<custom>); pass --schema-mode custom|prefixed to choose",
                    warnings,
                )
        if custom is None:
            return self.target.schema
        if self.mode == "custom":
            return custom
        if not self.target.schema:
            self._warn_once(
                "target",
                "no target schema (no --target-schema, no profiles.yml output): custom schemas are "
                "used as is; pass --target-schema to get dbt's <target>_<custom> names",
                warnings,
            )
            return custom
        return f"{self.target.schema}_{custom}"

    def relation(self, rel: RelationSpec, warnings: list[str]) -> str:
        """The node's relation name; also sets ``rel.schema`` and ``rel.database``."""
        cfg = rel.config
        if rel.kind == "source":
            schema, alias = _clean(cfg.get("schema")), _clean(cfg.get("identifier")) or rel.node
        elif rel.kind == "snapshot" and cfg.get("target_schema"):
            schema, alias = _clean(cfg["target_schema"]), _clean(cfg.get("alias")) or rel.node
        else:
            schema = self.schema(rel, cfg.get("schema"), warnings)
            alias = _clean(cfg.get("alias")) or rel.node
        database = _clean(cfg.get("target_database") or cfg.get("database"))
        if database and database.lower() == self.target.database.lower():
            database = ""
        rel.schema, rel.database = schema, database
        return ".".join(p for p in ((database, schema, alias) if schema else (alias,)) if p)
