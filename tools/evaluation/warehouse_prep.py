"""Import and build a folder of warehouse catalog exports the way a user does, with the numbers.

A warehouse folder holds ``<engine>/<db>/columns.csv.gz`` (+ ``tables.csv``, ``foreign_keys.csv``),
the layout of ``shared/benchmarks/spider2_lite``. Every database goes through the real command
line, ``schemarag import catalog`` (shards collapsed as the importer does by default), then one
``schemarag build`` per engine, each a child process whose wall time and peak RSS
(``os.wait4``'s ``ru_maxrss``) are recorded: the per-engine import/build table of issue 24.3.

Imports are cached under the work folder: a database is imported again only when its export
files or the importer's source changed (a stamp records both); ``schemarag build`` itself skips
databases whose content key is already published, and its embedding cache makes a rebuild after
a chunk-text change cost only the changed chunks. A database whose import fails is reported
(with the first line of the error) and left out; the others go on, and the next run imports it
again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from schemarag.runtime.core.errors import ConfigError

# The SQL dialect of each engine folder (sqlglot names); an unknown folder imports as postgres.
ENGINE_DIALECTS = {"bigquery": "bigquery", "snowflake": "snowflake", "sqlite": "sqlite"}
_IMPORTED = re.compile(
    r"imported \d+ datasource\(s\) into .*?: (\d+) tables, (\d+) columns, .*?(\d+) warning"
)


@dataclass(frozen=True)
class Export:
    """One database's export folder."""

    engine: str
    db: str
    folder: Path

    @property
    def columns(self) -> Path:
        return next(p for p in (self.folder / "columns.csv.gz", self.folder / "columns.csv") if p.is_file())

    def optional(self, stem: str) -> Path | None:
        return next(
            (p for p in (self.folder / f"{stem}.csv", self.folder / f"{stem}.csv.gz") if p.is_file()), None
        )


@dataclass
class ImportStat:
    """What importing one database gave (``ok`` False: ``error`` says why, nothing was written)."""

    engine: str
    db: str
    ok: bool
    raw_tables: int = 0
    tables: int = 0
    columns: int = 0
    warnings: list[str] = field(default_factory=list)  # the first lines, for the report
    warning_count: int = 0
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    error: str = ""


@dataclass
class BuildStat:
    engine: str
    databases: int
    seconds: float
    peak_rss_mb: float
    ok: bool
    error: str = ""


def discover(
    root: Path, engines: Sequence[str] | None = None, dbs: Sequence[str] | None = None
) -> list[Export]:
    """Every ``<engine>/<db>/columns.csv[.gz]`` under ``root``, filtered by engine and db names
    (case-insensitive), sorted."""
    if not root.is_dir():
        raise ConfigError(
            f"--warehouse {root}: not a folder; pass the folder holding <engine>/<db>/columns.csv.gz"
        )
    want_e = {e.lower() for e in engines or ()}
    want_d = {d.lower() for d in dbs or ()}
    out = []
    for folder in sorted(root.glob("*/*")):
        if not folder.is_dir() or not any((folder / n).is_file() for n in ("columns.csv.gz", "columns.csv")):
            continue
        engine, db = folder.parent.name, folder.name
        if (want_e and engine.lower() not in want_e) or (want_d and db.lower() not in want_d):
            continue
        out.append(Export(engine, db, folder))
    if not out:
        raise ConfigError(
            f"--warehouse {root}: no <engine>/<db>/columns.csv(.gz) found"
            + (" for the --engines/--dbs given" if want_e or want_d else "")
        )
    return out


def _raw_tables(columns: Path) -> int:
    """Distinct (schema, table) pairs in an export: the tables before shard families collapse."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    read = pacsv.ReadOptions(block_size=1 << 22)
    convert = pacsv.ConvertOptions(
        include_columns=["table_schema", "table_name"],
        column_types={"table_schema": pa.string(), "table_name": pa.string()},
    )
    seen: set[tuple[str, str]] = set()
    for batch in pacsv.open_csv(columns, read_options=read, convert_options=convert):
        seen.update(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True))
    return len(seen)


def _importer_stamp() -> str:
    """A hash of the importer sources: a changed importer re-imports every database."""
    from schemarag.tools import importers

    h = hashlib.sha256()
    for path in sorted(Path(importers.__file__).parent.glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _files_stamp(export: Export) -> list[list[object]]:
    return [
        [p.name, p.stat().st_size, int(p.stat().st_mtime)]
        for p in (export.columns, export.optional("tables"), export.optional("foreign_keys"))
        if p is not None
    ]


def _run_measured(cmd: list[str], echo_stderr: bool = False) -> tuple[int, str, float, float]:
    """Run ``cmd``; ``(exit code, stderr, seconds, peak RSS in MB)`` measured with ``os.wait4``
    (this process's own child only; a build's worker processes, if any, are not counted)."""
    import tempfile

    started = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=None if echo_stderr else err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = "" if echo_stderr else err.read()
    return proc.returncode, text, time.perf_counter() - started, usage.ru_maxrss / 1024.0


def _cli() -> list[str]:
    return [sys.executable, "-m", "schemarag"]


def import_one(
    export: Export, data: Path, stamp: str, force: bool = False, reuse: bool = False
) -> ImportStat:
    """``schemarag import catalog`` of one export into ``data/<engine>`` (cached by a stamp;
    ``reuse``: keep an earlier import even if the importer changed since). A failed import is
    never kept: its stamp records the failure for the report, and the next run tries again (a
    failure may be the machine's, such as a crash at exit, not the export's)."""
    out = data / export.engine
    stamp_file = data / ".stamps" / f"{export.engine}__{export.db}.json"
    files = _files_stamp(export)
    if not force and stamp_file.is_file():
        cached = json.loads(stamp_file.read_text(encoding="utf-8"))
        kept = (reuse or cached.get("importer") == stamp) and cached.get("files") == files
        if kept and cached.get("stat", {}).get("ok"):
            return ImportStat(**cached["stat"])
    cmd = [*_cli(), "import", "catalog", "--columns", str(export.columns), "--database", export.db,
           "--dialect", ENGINE_DIALECTS.get(export.engine, "postgres"), "--out", str(out), "-q"]  # fmt: skip
    for flag, stem in (("--tables", "tables"), ("--foreign-keys", "foreign_keys")):
        path = export.optional(stem)
        if path is not None:
            cmd += [flag, str(path)]
    code, err, seconds, rss = _run_measured(cmd)
    stat = ImportStat(
        export.engine, export.db, code == 0, seconds=round(seconds, 2), peak_rss_mb=round(rss, 1)
    )
    if code != 0:
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        stat.error = (lines[-1] if lines else f"exit code {code}")[:300]
    else:
        stat.raw_tables = _raw_tables(export.columns)
        m = _IMPORTED.search(err)
        if m:
            stat.tables, stat.columns, stat.warning_count = (int(m.group(i)) for i in (1, 2, 3))
        stat.warnings = [
            ln.strip() for ln in err.splitlines() if "WARNING" in ln or "warning:" in ln.lower()
        ][:50]
    stamp_file.parent.mkdir(parents=True, exist_ok=True)
    stamp_file.write_text(
        json.dumps({"importer": stamp, "files": files, "stat": asdict(stat)}), encoding="utf-8"
    )
    return stat


def build_engine(engine: str, dbs: Sequence[str], data: Path, artifacts: Path) -> BuildStat:
    """One ``schemarag build`` (niced) of ``dbs`` of one engine; its progress goes to stderr."""
    cmd = ["nice", "-n", "10", *_cli(), "build", "--data", str(data / engine), "--artifacts", str(artifacts)]
    for db in dbs:
        cmd += ["--db", db]
    code, err, seconds, rss = _run_measured(cmd, echo_stderr=True)
    return BuildStat(
        engine, len(dbs), round(seconds, 1), round(rss, 1), code == 0, err[-300:] if code else ""
    )


def prepare(
    exports: Sequence[Export],
    work: Path,
    force_import: bool = False,
    skip_build: bool = False,
    reuse_imports: bool = False,
    say: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True),
) -> tuple[list[ImportStat], list[BuildStat]]:
    """Import every export and build each engine's databases under ``work``
    (``work/data/<engine>``, ``work/artifacts``)."""
    data, artifacts = work / "data", work / "artifacts"
    stamp = _importer_stamp()
    imports: list[ImportStat] = []
    for n, export in enumerate(exports, start=1):
        stat = import_one(export, data, stamp, force_import, reuse_imports)
        imports.append(stat)
        state = f"{stat.tables} tables, {stat.columns} columns" if stat.ok else f"FAILED: {stat.error}"
        say(f"import {n}/{len(exports)} {export.engine}/{export.db}: {state}")
    builds: list[BuildStat] = []
    if skip_build:
        return imports, builds
    for engine in sorted({e.engine for e in exports}):
        dbs = [s.db for s in imports if s.engine == engine and s.ok]
        if not dbs:
            continue
        say(f"build {engine}: {len(dbs)} database(s) (cached ones are reported unchanged)")
        stat = build_engine(engine, dbs, data, artifacts)
        builds.append(stat)
        say(
            f"build {engine}: {'ok' if stat.ok else 'FAILED'} in {stat.seconds:.0f}s, "
            f"peak RSS {stat.peak_rss_mb:.0f} MB"
        )
    return imports, builds


def engine_table(imports: Sequence[ImportStat], builds: Sequence[BuildStat]) -> list[dict[str, object]]:
    """Per engine: databases (imported / found), raw tables, tables after shard families,
    columns, import and build seconds, peak RSS, warnings and failures."""
    rows = []
    built = {b.engine: b for b in builds}
    for engine in sorted({s.engine for s in imports}):
        ok = [s for s in imports if s.engine == engine and s.ok]
        failed = [s for s in imports if s.engine == engine and not s.ok]
        b = built.get(engine)
        rows.append(
            {
                "engine": engine,
                "databases": len(ok),
                "databases_found": len(ok) + len(failed),
                "raw_tables": sum(s.raw_tables for s in ok),
                "tables": sum(s.tables for s in ok),
                "columns": sum(s.columns for s in ok),
                "import_seconds": round(sum(s.seconds for s in ok + failed), 1),
                "import_peak_rss_mb": max((s.peak_rss_mb for s in ok + failed), default=0.0),
                "build_seconds": b.seconds if b else None,
                "build_peak_rss_mb": b.peak_rss_mb if b else None,
                "build_ok": b.ok if b else None,
                "warnings": sum(s.warning_count for s in ok),
                "failed": {s.db: s.error for s in failed},
            }
        )
    return rows
