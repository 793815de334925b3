"""What ``schemarag build`` shows while it works and what it says when it is done.

- :class:`BuildProgress` turns the build stages' progress events
  (:mod:`schemarag.assets.lib.progress`) into tqdm bars on stderr: one bar per database that
  walks the stages, and an embedding bar with chunk counts and chunks/s. tqdm (pinned in the
  ``build`` extra, already a fastembed dependency) handles terminal width, redraw rate and
  non-TTY output; bars are off when stderr is not a terminal or with ``--quiet``, and never
  touch stdout, so ``--json``-style output stays clean.
- :func:`tenant_selection` picks the databases of ``--tenant T`` when no ``--db`` is given.
- :func:`next_step` is the one line that tells a new user what to try after a build.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from schemarag.assets.lib.progress import ProgressEvent, reporting
from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.core.paths import did_you_mean, list_databases, schema_path

if TYPE_CHECKING:
    from schemarag.runtime.core.schema import Database

STAGES = (
    "live_schema_snapshot",
    "source_snapshot",
    "doc_chunks",
    "bm25_statistics",
    "chunk_embeddings",
    "published_index",
)


def progress_enabled(quiet: bool, stream: Any = None) -> bool:
    """Bars only for a person watching: stderr is a terminal and ``--quiet`` was not given."""
    stream = stream or sys.stderr
    return not quiet and bool(getattr(stream, "isatty", lambda: False)())


class BuildProgress:
    """tqdm bars driven by progress events; one instance per ``schemarag build``."""

    def __init__(self, databases: list[str]) -> None:
        self.databases = databases
        self._bar: Any = None
        self._db = ""
        self._label = ""
        self._embed: Any = None

    def __call__(self, event: ProgressEvent) -> None:
        from tqdm import tqdm

        if event.database != self._db:
            self._finish_database()
            self._db = event.database
            pos = self.databases.index(event.database) + 1 if event.database in self.databases else 0
            self._label = f"[{pos}/{len(self.databases)}] {event.database}" if pos else event.database
            fmt = "{desc} {n}/{total} stages |{bar:20}| {elapsed}"
            self._bar = tqdm(total=len(STAGES), desc=self._label, file=sys.stderr, leave=True, bar_format=fmt)
        if event.stage == "chunk_embeddings" and event.total:
            if self._embed is None:
                unit = event.unit or "chunk"
                self._embed = tqdm(
                    total=event.total, desc="  embedding", unit=unit, file=sys.stderr, leave=False
                )
            self._embed.update(event.done - self._embed.n)
            self._bar.refresh()  # keep the database's elapsed time moving while it embeds
            return
        if event.stage in STAGES:
            self._close_embed()
            self._bar.n = STAGES.index(event.stage)
            self._bar.set_description_str(f"{self._label}: {event.stage:<20}")

    def _close_embed(self) -> None:
        if self._embed is not None:
            from tqdm import tqdm

            n, secs = self._embed.n, self._embed.format_dict["elapsed"]
            self._embed.close()
            self._embed = None
            # the bar goes; one line above the bars keeps the count and the rate for the record
            rate = f" ({n / secs:.1f} chunks/s)" if secs > 0 else ""
            tqdm.write(f"  {self._db}: embedded {n} chunks in {secs:.1f}s{rate}", file=sys.stderr)

    def _finish_database(self) -> None:
        self._close_embed()
        if self._bar is not None:
            if self._bar.n == len(STAGES) - 1:  # reached publishing; a failure stays at its stage
                self._bar.n = self._bar.total
                self._bar.set_description_str(f"{self._label}: {'finished':<20}")
            self._bar.close()
            self._bar = None

    def close(self) -> None:
        self._finish_database()


@contextmanager
def build_progress(databases: list[str], enabled: bool) -> Iterator[BuildProgress | None]:
    """Install a :class:`BuildProgress` as the progress reporter while the build runs."""
    if not enabled:
        yield None
        return
    bars = BuildProgress(databases)
    try:
        with reporting(bars):
            yield bars
    finally:
        bars.close()


def tenant_selection(
    dbs: list[str], tenant: str, data: Path, datasources: str | None, known_tenants: set[str]
) -> tuple[list[str], list[str]]:
    """``(tenant's databases, skipped)`` among the schema files ``dbs`` plus the datasources file.

    A database belongs to ``tenant`` when its schema file's ``tenant`` field or its datasource
    entry says so; schema files without a tenant are shared samples and are skipped (build one
    for a tenant with ``--db``). No database at all for ``tenant`` is an error with a
    "did you mean" over the tenants that exist.
    """
    from schemarag.assets.lib.datasources.config import datasources_path, load_datasources
    from schemarag.runtime.core.schema import load_schema

    entries = load_datasources(datasources) if datasources_path(datasources).is_file() else []
    live = [e.name for e in entries if e.tenant == tenant]
    known_tenants |= {e.tenant for e in entries}
    mine, skipped = list(live), []
    for db in dbs:
        if db in mine:
            continue
        try:
            owner = load_schema(schema_path(data, db)).tenant
        except SchemaragError:
            owner = None  # unreadable: not provably this tenant's; the user can pass --db to see why
        if owner is not None:
            known_tenants.add(owner)
        (mine if owner == tenant else skipped).append(db)
    if not mine:
        others = sorted(known_tenants - {tenant})
        hint = did_you_mean(tenant, others) or (f"; tenants: {', '.join(others)}" if others else "")
        raise SchemaragError(
            f"no database belongs to tenant {tenant!r} (no datasource in {datasources_path(datasources)} "
            f'and no schema file in {data} with "tenant": {tenant!r}){hint}'
        )
    return mine, [db for db in skipped if db not in mine]


_PLAIN = re.compile(r"[\w\s,.?'%:/()-]*")  # safe between double quotes in any shell
_LAYER_PREFIX = re.compile(r"^(?:stg|fct|fact|dim|int|raw|src|base|mart|rpt|agg)_+", re.I)
_TIME_WORDS = ("date", "time", "timestamp", "created", "updated")


def _shell(arg: str) -> str:
    """``arg`` as a shell reads it back: a plain question in double quotes, anything else quoted."""
    return f'"{arg}"' if _PLAIN.fullmatch(arg) else shlex.quote(arg)


def _words(name: str) -> str:
    """``analytics.stg_shopify__orders`` -> ``shopify orders``: a table as a question names it."""
    last = name.rsplit(".", 1)[-1].rstrip("*_")
    return re.sub(r"_+", " ", _LAYER_PREFIX.sub("", last)).strip() or last


def question_from_tables(schema: Database) -> str:
    """A question the index can answer, from its own tables: a declared join first
    ("how many orders are there for each customer?"), else a time column, else a table."""
    for table in schema.tables:
        for col in table.columns:
            fk = col.foreign_key
            if fk is not None and fk.table.lower() != table.name.lower():
                return f"how many {_words(table.name)} are there for each {_words(fk.table)}?"
    for table in schema.tables:
        for col in table.columns:
            if any(w in col.name.lower() for w in _TIME_WORDS) or col.name.lower().endswith("_at"):
                return f"which {_words(table.name)} are the most recent by {_words(col.name)}?"
    table = schema.tables[0]
    return f"list the {_words(table.name)} with their {_words(table.columns[0].name)}"


def _question(db: str, tenant: str, data: Path, artifacts: Path | None) -> str:
    """The bundled sample's first question when there is one, else one from the published index's
    own tables (its schema.json, so a live datasource gets one too), else the schema file's."""
    sample = data.parent / "questions" / f"{db}.jsonl"  # the bundled samples have one; others may not
    try:
        first = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
        if isinstance(first, dict) and str(first.get("question") or "").strip():
            return str(first["question"]).strip()
    except (OSError, ValueError, IndexError):
        pass
    from schemarag.runtime.artifact.reader import current_key
    from schemarag.runtime.core.paths import database_artifacts
    from schemarag.runtime.core.schema import load_schema

    candidates = []
    if artifacts is not None:
        try:
            root = database_artifacts(artifacts, db, tenant or None)
            key = current_key(root)
            if key is not None:
                candidates.append(root / key / "schema.json")
        except SchemaragError:
            pass
    candidates.append(schema_path(data, db))
    for path in candidates:
        try:
            return question_from_tables(load_schema(path))
        except (SchemaragError, OSError, IndexError):
            continue
    return "show me the most recent records"


def next_step(
    built: list[tuple[str, str]],
    data: Path,
    *,
    artifacts: Path | None = None,
    data_flag: str | None = None,
    artifacts_flag: str | None = None,
) -> str:
    """The command to try next, for the first database that is now published, with the
    ``--data``/``--artifacts`` the user gave (``data_flag``/``artifacts_flag``, as typed), so it
    runs as printed; the question comes from that database's own tables.

    ``built`` is ``[(database, tenant or "")]`` of databases whose index is published;
    ``artifacts`` is the local artifacts folder the build wrote.
    """
    if not built:
        return "next: fix the errors above, then run `schemarag build` again"
    db, tenant = built[0]
    words = ["schemarag", "retrieve"]
    if data_flag:
        words += ["--data", data_flag]
    if artifacts_flag:
        words += ["--artifacts", artifacts_flag]
    words += ["--db", db] + (["--tenant", tenant] if tenant else [])
    return f"next: {shlex.join(words)} {_shell(_question(db, tenant, data, artifacts))}"


def unknown_database_hint(db: str, data: Path, datasources: str | None) -> str:
    """``"; did you mean 'x'?"`` when ``db`` has neither a schema file nor a datasource entry."""
    from schemarag.assets.lib.datasources.config import datasources_path, load_datasources

    if schema_path(data, db).is_file():
        return ""
    try:
        live = (
            [e.name for e in load_datasources(datasources)] if datasources_path(datasources).is_file() else []
        )
    except SchemaragError:
        live = []
    return did_you_mean(db, [*list_databases(data), *live])
