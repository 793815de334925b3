"""Convert the public Spider 2.0-lite release into the folder ``schemarag eval --warehouse`` reads.

The source is a clone of https://github.com/xlang-ai/Spider2 (MIT). Its ``spider2-lite/`` holds

- ``spider2-lite.jsonl``: one question a line (``instance_id, db, question, external_knowledge``);
- ``resource/databases/<engine>/<db>/``: per table a JSON file (``table_name``, ``table_fullname``,
  ``column_names``, ``column_types``, ``description``; BigQuery adds ``nested_column_names`` /
  ``nested_column_types``, one entry per STRUCT field, with ``description`` aligned to them) and one
  ``DDL.csv`` per schema folder (BigQuery and SQLite: ``table_name, ddl``; Snowflake: ``table_name,
  description, DDL``, whose ``description`` is the table's comment). BigQuery and Snowflake nest
  the tables one folder deeper (``<project>.<dataset>/``, ``<SCHEMA>/``);
- the gold tables in ``../methods/gold-tables/spider2-lite-gold-tables.jsonl``
  (``instance_id, gold_tables``; five Snowflake questions ``sf_bqNNN`` are filed as ``bqNNN``).

The output, one ``<engine>/<db>/`` folder per database a question names:

- ``columns.csv.gz``: ``table_catalog, table_schema, table_name, column_name, field_path,
  ordinal_position, data_type, is_nullable, column_comment``, a row per column and (BigQuery) per
  nested field, ``field_path`` dotted, ``ordinal_position`` that of the top-level column;
- ``tables.csv``: ``table_catalog, table_schema, table_name, table_type, table_comment``;
- ``foreign_keys.csv`` (BigQuery, only where a column's description calls it a primary key, the
  only key information the release carries): ``constraint_type`` ``PRIMARY KEY`` rows;
- ``questions.jsonl`` beside the engine folders: ``instance_id, db, engine, question,
  external_knowledge, gold_tables``.

SQLite tables get catalog = the database name and schema ``main``. The release declares no
nullability, so ``is_nullable`` is ``YES`` throughout, and every table is a ``BASE TABLE``.
Everything is streamed: one table JSON is in memory at a time, rows go straight to gzip.

Example:
    >>> _engine_of("sf_bq350"), _engine_of("local002"), _engine_of("bq011")
    ('snowflake', 'sqlite', 'bigquery')
    >>> _fold("Db-IMDB") == _fold("DB_IMDB")
    True
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ImportFormatError

ENGINES = ("bigquery", "snowflake", "sqlite")
COLUMNS_HEADER = [
    "table_catalog", "table_schema", "table_name", "column_name", "field_path",
    "ordinal_position", "data_type", "is_nullable", "column_comment",
]  # fmt: skip
TABLES_HEADER = ["table_catalog", "table_schema", "table_name", "table_type", "table_comment"]
KEYS_HEADER = [
    "table_schema", "table_name", "column_name", "referenced_table_schema", "referenced_table_name",
    "referenced_column_name", "constraint_type",
]  # fmt: skip
GOLD_FILE = Path("methods") / "gold-tables" / "spider2-lite-gold-tables.jsonl"
_PRIMARY_KEY = re.compile(r"\bprimary key\b", re.IGNORECASE)

csv.field_size_limit(sys.maxsize)  # BigQuery STRUCT types and DDL cells run to hundreds of KB


@dataclass
class EngineCount:
    databases: int = 0
    tables: int = 0
    columns: int = 0
    keys: int = 0
    questions: int = 0


@dataclass
class Spider2Report:
    out: Path
    engines: dict[str, EngineCount] = field(default_factory=dict)
    questions: int = 0
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        dbs = sum(c.databases for c in self.engines.values())
        tables = sum(c.tables for c in self.engines.values())
        columns = sum(c.columns for c in self.engines.values())
        return (
            f"spider2: {dbs} databases, {tables:,} tables, {columns:,} columns, "
            f"{self.questions} questions into {self.out}, {len(self.warnings)} warning(s)"
        )


def _engine_of(instance_id: str) -> str:
    """Spider 2.0-lite names its questions by engine: ``bq*``/``ga*``, ``sf*``, ``local*``."""
    if instance_id.startswith("local"):
        return "sqlite"
    if instance_id.startswith("sf"):
        return "snowflake"
    return "bigquery"


def _fold(name: str) -> str:
    """Question ``db`` names and database folders differ in case and ``-``/``_`` for two SQLite
    databases (``Db-IMDB`` / ``DB_IMDB``, ``sqlite-sakila`` / ``SQLITE_SAKILA``)."""
    return name.lower().replace("-", "_")


def _need(path: Path, what: str) -> Path:
    if not path.exists():
        raise ImportFormatError(f"spider2: {path}: not found ({what})")
    return path


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise ImportFormatError(f"spider2: {path}:{n}: not JSON ({exc.msg})") from None


def _gold_tables(path: Path) -> dict[str, list[str]]:
    return {rec["instance_id"]: list(rec.get("gold_tables") or []) for rec in _read_jsonl(path)}


def _split_fullname(meta: dict[str, Any], engine: str, db: str) -> tuple[str, str, str]:
    name = str(meta.get("table_name") or "")
    full = str(meta.get("table_fullname") or name)
    if engine == "sqlite":
        return db, "main", name
    catalog, _, rest = full.partition(".")
    if name and rest.endswith(name):  # GITHUB_REPOS_DATE names its tables "DAY._20110731"
        schema = rest[: -len(name)].rstrip(".") or name.rpartition(".")[0]
    else:
        schema = rest.rpartition(".")[0]
    return catalog, schema, name.rpartition(".")[2] if engine == "snowflake" else name


def _clean(text: object) -> str:
    """Comments as one line: the release wraps some descriptions over several lines and spaces."""
    return " ".join(str(text).split()) if text is not None else ""


def _ddl_rows(folder: Path) -> list[tuple[str, str, str]]:
    """``(table name, table comment, DDL)`` of a schema folder's ``DDL.csv``; ``table_name`` may be
    qualified (Snowflake: ``DB.SCHEMA.TABLE``), the name is its last part. No file: none."""
    path = folder / "DDL.csv"
    if not path.is_file():
        return []
    out: list[tuple[str, str, str]] = []
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            lower = {(k or "").lower(): v or "" for k, v in row.items()}
            out.append((lower.get("table_name", "").rsplit(".", 1)[-1], _clean(lower.get("description")),
                        lower.get("ddl", "")))  # fmt: skip
    return out


_STOP = re.compile(
    r"\s+(OPTIONS\s*\(|COMMENT\b|NOT\s+NULL\b|NULL\b|DEFAULT\b|PRIMARY\s+KEY\b|REFERENCES\b|COLLATE\b)",
    re.IGNORECASE,
)
_NOTE = re.compile(r"""(?:description\s*=\s*|COMMENT\s+)(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""", re.I)
_ESCAPE = re.compile(r"\\(.)")
_CONSTRAINT = re.compile(r"(PRIMARY|FOREIGN|CONSTRAINT|UNIQUE|CHECK|KEY)\b", re.IGNORECASE)


def _split_top(body: str, until_close: bool = False) -> list[str]:
    """Split a column list at commas outside brackets and quotes; ``until_close`` stops at the
    bracket that closes the list (table options and PARTITION BY follow it)."""
    parts, depth, quote, cur, escaped = [], 0, "", [], False
    for ch in body:
        if quote:
            quote = "" if ch == quote and not escaped else quote
            escaped = ch == "\\" and not escaped
        elif ch in "\"'`":
            quote = ch
        elif ch in "(<":
            depth += 1
        elif ch in ")>":
            if depth == 0 and until_close and ch == ")":
                break
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _ddl_columns(ddl: str) -> list[tuple[str, str, str]]:
    """``(name, type, comment)`` per top-level column of a ``CREATE TABLE`` (BigQuery, Snowflake or
    SQLite as the release writes them); nested STRUCT fields stay inside their column's type."""
    open_at = ddl.find("(")
    body = _split_top(ddl[open_at + 1 :], until_close=True) if open_at >= 0 else []
    out = []
    for part in body:
        if _CONSTRAINT.match(part):
            continue
        m = re.match(r'"((?:[^"]|"")*)"|`([^`]*)`|\[([^\]]*)\]|(\S+)', part)
        if not m:
            continue
        name = next(g for g in m.groups() if g is not None).replace('""', '"')
        rest = part[m.end() :]
        stop = _STOP.search(rest)
        kind = (rest[: stop.start()] if stop else rest).strip()
        note = _NOTE.search(rest[stop.start() :] if stop else "")
        text = next((g for g in note.groups() if g is not None), "") if note else ""
        out.append((name, kind, _clean(_ESCAPE.sub(r"\1", text))))
    return out


def _column_rows(meta: dict[str, Any], engine: str) -> Iterator[tuple[str, str, int, str, str]]:
    """(column_name, field_path, ordinal_position, data_type, comment) per column / nested field."""
    names = list(meta.get("column_names") or [])
    nested = meta.get("nested_column_names")
    if engine == "bigquery" and nested:
        paths, types = list(nested), list(meta.get("nested_column_types") or [])
    else:
        paths, types = names, list(meta.get("column_types") or [])
    notes = list(meta.get("description") or [])
    position = {name: i for i, name in reversed(list(enumerate(names, 1)))}
    for i, path in enumerate(paths):
        top = path if path in position else path.split(".", 1)[0]
        ordinal = position.get(top, i + 1)
        note = notes[i] if i < len(notes) else None
        kind = types[i] if i < len(types) and types[i] else ("TEXT" if engine == "sqlite" else "")
        yield top, path, ordinal, str(kind), _clean(note)


def _schema_folders(folder: Path, engine: str) -> list[Path]:
    """SQLite keeps tables in the database folder, the others one folder per schema / dataset."""
    if engine == "sqlite":
        return [folder]
    return sorted(p for p in folder.iterdir() if p.is_dir())


def _folder_names(folder: Path, engine: str, db: str, source_db: str) -> tuple[str, str]:
    """Catalog and schema of a schema folder without a table JSON (``project.dataset`` / ``SCHEMA``)."""
    if engine == "sqlite":
        return db, "main"
    if engine == "bigquery":
        catalog, _, schema = folder.name.partition(".")
        return catalog, schema
    return source_db, folder.name


def _tables_of(folder: Path, engine: str, db: str, warnings: list[str]):
    """Yield ``(catalog, schema, name, comment, rows)`` per table of a database folder: the table
    JSONs first, then what ``DDL.csv`` lists without a JSON (columns from the DDL). A BigQuery name
    the release wrote with a leading space (`` accident_2015``) is also given under its real name."""
    for sub in _schema_folders(folder, engine):
        ddl = _ddl_rows(sub)
        if sub != folder and not ddl and not (sub / "DDL.csv").is_file():
            warnings.append(f"{sub / 'DDL.csv'}: not found (tables without a JSON file there are missed)")
        comments = {name: note for name, note, _ in ddl if note}
        seen: set[str] = set()
        extra: list[tuple[str, str, str, str, list]] = []
        catalog, schema = _folder_names(sub, engine, db, folder.name)
        for path in sorted(sub.glob("*.json")):
            try:
                meta = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                warnings.append(f"{path}: skipped, not readable JSON ({exc})")
                continue
            if not isinstance(meta, dict) or not meta.get("column_names"):
                warnings.append(f"{path}: skipped, no column_names")
                continue
            meta.pop("sample_rows", None)
            catalog, schema, name = _split_fullname(meta, engine, db)
            rows = list(_column_rows(meta, engine))
            seen.add(name)
            yield catalog, schema, name, comments.get(name, ""), rows
            if name != name.strip():
                extra.append((catalog, schema, name.strip(), comments.get(name.strip(), ""), rows))
        for item in extra:
            if item[2] not in seen:
                seen.add(item[2])
                yield item
        for name, note, text in ddl:
            if name in seen or not text.strip():
                continue
            seen.add(name)
            columns = _ddl_columns(text)
            rows = [(c, c, i, kind or ("TEXT" if engine == "sqlite" else ""), cn)
                    for i, (c, kind, cn) in enumerate(columns, 1)]  # fmt: skip
            if not rows:
                warnings.append(f"{sub / 'DDL.csv'}: {name}: no columns in its DDL, skipped")
                continue
            yield catalog, schema, name, note, rows


def _convert_database(engine: str, folder: Path, db: str, target: Path, warnings: list[str]) -> EngineCount:
    count = EngineCount(databases=1)
    target.mkdir(parents=True, exist_ok=True)
    tables: list[list[str]] = []
    keys: list[list[str]] = []
    with gzip.open(target / "columns.csv.gz", "wt", encoding="utf-8", newline="") as gz:
        writer = csv.writer(gz)
        writer.writerow(COLUMNS_HEADER)
        # one database's tables are ordered by schema and name, case-insensitively, as listed
        ordered = sorted(_tables_of(folder, engine, db, warnings), key=lambda t: (t[1].lower(), t[2].lower()))
        for catalog, schema, name, comment, rows in ordered:
            tables.append([catalog, schema, name, "BASE TABLE", comment])
            count.tables += 1
            for column, field_path, ordinal, kind, note in rows:
                writer.writerow([catalog, schema, name, column, field_path, ordinal, kind, "YES", note])
                count.columns += 1
                if engine == "bigquery" and field_path == column and _PRIMARY_KEY.search(note):
                    keys.append([schema, name, column, "", "", "", "PRIMARY KEY"])
    with (target / "tables.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([TABLES_HEADER, *tables])
    if keys:
        with (target / "foreign_keys.csv").open("w", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerows([KEYS_HEADER, *keys])
        count.keys = len(keys)
    return count


def convert_spider2(
    source: Path,
    out: Path,
    *,
    engines: list[str] | None = None,
    dbs: list[str] | None = None,
    gold: Path | None = None,
    all_databases: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Spider2Report:
    """Write ``out/<engine>/<db>/...`` and ``out/questions.jsonl`` from ``source`` (the clone's
    ``spider2-lite`` folder). ``engines``/``dbs`` select (db names as the questions spell them,
    case-insensitive); ``all_databases`` also writes the databases no question names."""
    source = Path(source)
    _need(source, "pass --source <clone>/spider2-lite")
    questions_path = _need(source / "spider2-lite.jsonl", "the questions")
    databases = _need(source / "resource" / "databases", "the database schemas")
    gold_path = _need(Path(gold) if gold else source.parent / GOLD_FILE, "the gold tables; pass --gold FILE")
    unknown = sorted(set(engines or []) - set(ENGINES))
    if unknown:
        raise ImportFormatError(
            f"spider2: unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}"
        )
    chosen_engines = [e for e in ENGINES if not engines or e in engines]
    wanted = {_fold(d) for d in dbs} if dbs else None

    gold_tables = _gold_tables(gold_path)
    questions = list(_read_jsonl(questions_path))
    asked = {(_engine_of(q["instance_id"]), _fold(q["db"])): q["db"] for q in questions}

    report = Spider2Report(out=Path(out))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: set[tuple[str, str]] = set()
    for engine in chosen_engines:
        started = time.perf_counter()
        count = EngineCount()
        root = databases / engine
        folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        if not root.is_dir():
            report.warnings.append(f"{root}: not found (no {engine} databases)")
        for folder in folders:
            key = (engine, _fold(folder.name))
            name = asked.get(key)
            if name is None and not all_databases:
                continue
            name = name or folder.name
            if wanted is not None and _fold(name) not in wanted:
                continue
            one = _convert_database(engine, folder, name, out / engine / name, report.warnings)
            for attr in ("databases", "tables", "columns", "keys"):
                setattr(count, attr, getattr(count, attr) + getattr(one, attr))
            written.add(key)
        count.questions = sum(
            1
            for q in questions
            if (_engine_of(q["instance_id"]), _fold(q["db"])) in written
            and _engine_of(q["instance_id"]) == engine
        )
        report.engines[engine] = count
        if progress:
            progress(
                f"spider2: {engine}: {count.databases} databases, {count.tables:,} tables, "
                f"{count.columns:,} columns, {count.keys} keys, {count.questions} questions "
                f"in {time.perf_counter() - started:.1f}s"
            )
    missing_dbs = sorted(
        {
            f"{e}/{n}"
            for (e, f), n in asked.items()
            if e in chosen_engines and (e, f) not in written and (wanted is None or f in wanted)
        }
    )
    for name in missing_dbs:
        report.warnings.append(f"{databases / name}: not found (its questions are left out)")

    with (out / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for q in questions:
            engine = _engine_of(q["instance_id"])
            if (engine, _fold(q["db"])) not in written:
                continue
            iid = q["instance_id"]
            tables = gold_tables.get(iid)
            if tables is None and iid.startswith("sf_"):
                tables = gold_tables.get(iid[3:])  # filed without the sf_ prefix
            if tables is None:
                report.warnings.append(f"{gold_path}: no gold tables for {iid}")
                tables = []
            record = {
                "instance_id": iid,
                "db": q["db"],
                "engine": engine,
                "question": q.get("question", ""),
                "external_knowledge": q.get("external_knowledge"),
                "gold_tables": tables,
            }
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            report.questions += 1
    return report
