"""A BIRD set with coded names: a stand-in for an enterprise warehouse nobody can read.

The issue's hardest target is a warehouse we never see: key-less, with cryptic names
(``KNA1.KUNNR``), documented only in a data dictionary, whose questions join about four
tables. No public set is like it, so this module makes one from BIRD: every table and column
name becomes a code, the same column name the same code within a database (as an ERP repeats
``KUNNR`` in every table that holds a customer number), and the dictionary is BIRD's
column descriptions, renamed with them. The gold SQL is rewritten to the codes with sqlglot,
so the usual evaluation (``import bird --strip-foreign-keys``, ``build``, ``eval
--query-log-folds``) scores it unchanged, and a history of the rewritten SQL is a log in coded
names, as such a warehouse's log would be.

What is left to read is what an ERP's data dictionary gives: a short text per table (BIRD's
natural table name, ``superhero``) and per column (its natural name, ``full name``), with
BIRD's column and value descriptions where the dev set has them. No identifier a question or a
log shows says anything: the SQL names ``AAG8.MIROI``, and an example past query matches a
question's words on nothing but its literals (stripped by default).

    python -m schemarag.tools.evaluation.coded_names --tables dev_tables.json[,train_tables.json]
        --descriptions <bird_dev>/descriptions --questions <bird_dev>/dev.json --out DIR
        [--dev-only DIR/dev_tables.json] [--flat NAME]

writes ``DIR/tables.json`` (every database, coded), ``DIR/descriptions/<db>/<code>.csv`` (the
dictionary), ``DIR/questions.json`` (the questions, their SQL coded) and ``DIR/codes.json`` (the
renaming, to read results by); ``make eval-history-coded`` runs it and the evaluation.

``--flat NAME`` also writes the same set as *one* database ``NAME`` holding every coded table, in
``DIR/flat/`` (``tables.json``, ``descriptions/NAME/``, ``questions.json`` asking ``NAME``): the
shape of that warehouse, hundreds of key-less coded tables in one schema, where nothing routes a
question to its source database first (a union index does) and the history's co-usage and joins
are what tell one subject's tables from another's.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import string
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_LETTERS = string.ascii_uppercase
# BIRD's database_description header, which `import bird --descriptions` reads
_DICTIONARY_HEADER = [
    "original_column_name",
    "column_name",
    "column_description",
    "data_format",
    "value_description",
]


def code_for(key: str, length: int, taken: set[str], digit: bool) -> str:
    """A code of ``length`` upper-case letters (the last a digit when ``digit``, as in ``KNA1``)
    drawn from a hash of ``key``, unique among ``taken`` (which it joins): deterministic, so a
    rerun writes the same set.

    >>> taken = set()
    >>> a = code_for("superhero", 4, taken, True); b = code_for("superhero", 4, taken, True)
    >>> len(a), a[-1].isdigit(), a != b
    (4, True, True)
    """
    salt = 0
    while True:
        raw = hashlib.sha256(f"{key}\x00{salt}".encode()).digest()
        letters = "".join(_LETTERS[b % 26] for b in raw[:length])
        code = letters[:-1] + str(raw[length] % 10) if digit else letters
        if code not in taken:
            taken.add(code)
            return code
        salt += 1


@dataclass
class Codes:
    """One database's renaming: table and column names (lower-cased) to their codes."""

    tables: dict[str, str] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Codes:
        """Codes for a ``tables.json`` entry: tables ``XXX9``, columns five letters, one code
        per distinct column name in the database."""
        db = str(entry["db_id"])
        out = cls()
        taken_t: set[str] = set()
        taken_c: set[str] = set()
        for name in entry.get("table_names_original") or []:
            out.tables.setdefault(name.lower(), code_for(f"{db}.{name.lower()}", 4, taken_t, True))
        for _, name in entry.get("column_names_original") or []:
            if name == "*":
                continue
            out.columns.setdefault(name.lower(), code_for(f"{db}..{name.lower()}", 5, taken_c, False))
        return out


def coded_entry(entry: dict[str, Any], codes: Codes) -> dict[str, Any]:
    """The ``tables.json`` entry with every name a code; the natural table names stay as the
    tables' short texts (an ERP dictionary names each table: ``KNA1`` "General Data in Customer
    Master"), the natural column names go to the dictionary (:func:`write_dictionary`)."""
    tables = [codes.tables[t.lower()] for t in entry.get("table_names_original") or []]
    columns = [
        [t, name if name == "*" else codes.columns[name.lower()]]
        for t, name in entry.get("column_names_original") or []
    ]
    return {**entry, "table_names_original": tables, "column_names_original": columns,
            "column_names": [list(c) for c in columns]}  # fmt: skip


def coded_sql(sql: str, codes: Codes) -> str | None:
    """``sql`` (SQLite, as BIRD writes it) with table and column names as codes; None when
    sqlglot cannot parse it. A qualifier is renamed only when it names a table, not an alias."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except sqlglot.errors.ParseError:
        return None
    aliases = {a.name.lower() for a in tree.find_all(exp.TableAlias)}
    for table in tree.find_all(exp.Table):
        code = codes.tables.get(table.name.lower())
        if code:
            table.set("this", exp.to_identifier(code))
    for column in tree.find_all(exp.Column):
        code = codes.columns.get(column.name.lower())
        if code:
            column.set("this", exp.to_identifier(code))
        qualifier = column.table.lower()
        if qualifier and qualifier not in aliases and qualifier in codes.tables:
            column.set("table", exp.to_identifier(codes.tables[qualifier]))
    return tree.sql(dialect="sqlite")


def flat_entry(coded: Sequence[dict[str, Any]], name: str) -> dict[str, Any]:
    """One ``tables.json`` entry ``name`` holding every table of the coded entries ``coded``,
    their column, key and FK indices moved with them. Raises ValueError when two databases'
    tables have one code (a flat set could not tell them apart; BIRD's 597 have none).

    >>> a = {"db_id": "a", "table_names_original": ["AAA1"], "table_names": ["x"],
    ...      "column_names_original": [[-1, "*"], [0, "KEYAA"]], "column_names": [[-1, "*"], [0, "KEYAA"]],
    ...      "column_types": ["text", "integer"], "primary_keys": [1], "foreign_keys": []}
    >>> b = {**a, "db_id": "b", "table_names_original": ["BBB2"], "primary_keys": [[1]]}
    >>> f = flat_entry([a, b], "flat")
    >>> f["table_names_original"], f["column_names_original"], f["primary_keys"]
    (['AAA1', 'BBB2'], [[-1, '*'], [0, 'KEYAA'], [1, 'KEYAA']], [1, [2]])
    """
    out: dict[str, Any] = {"db_id": name, "table_names_original": [], "table_names": [],
                           "column_names_original": [[-1, "*"]], "column_names": [[-1, "*"]],
                           "column_types": ["text"], "primary_keys": [], "foreign_keys": []}  # fmt: skip
    seen: dict[str, str] = {}
    for entry in coded:
        db = str(entry["db_id"])
        for code in entry.get("table_names_original") or []:
            if code in seen:
                raise ValueError(f"table code {code} is in both {seen[code]} and {db}: no flat set")
            seen[code] = db
        t_off = len(out["table_names_original"])
        c_off = len(out["column_names_original"]) - 1  # column 0 is "*" in every entry
        out["table_names_original"] += list(entry.get("table_names_original") or [])
        out["table_names"] += list(entry.get("table_names") or entry.get("table_names_original") or [])
        names, shown = entry["column_names_original"], entry["column_names"]
        for (t, code), (_, natural), kind in list(zip(names, shown, entry["column_types"], strict=True))[1:]:
            out["column_names_original"].append([t + t_off, code])
            out["column_names"].append([t + t_off, natural])
            out["column_types"].append(kind)
        for pk in entry.get("primary_keys") or []:
            out["primary_keys"].append([k + c_off for k in pk] if isinstance(pk, list) else pk + c_off)
        out["foreign_keys"] += [[a + c_off, b + c_off] for a, b in entry.get("foreign_keys") or []]
    return out


def write_dictionary(entry: dict[str, Any], files: dict[str, Path] | None, target: Path, codes: Codes) -> int:
    """The database's data dictionary as BIRD ``<table>.csv`` files named by the tables' codes:
    one row per column with its code (``original_column_name``), its short text (BIRD's
    ``column_name``, else the natural name ``tables.json`` gives: an ERP dictionary names every
    field) and BIRD's descriptions where ``files`` (the database's description CSVs by table,
    :func:`~schemarag.tools.importers.descriptions.find_description_files`) have them.
    Returns the files written."""
    from schemarag.tools.importers.descriptions import read_description_csv

    target.mkdir(parents=True, exist_ok=True)
    bird: dict[str, dict[str, Any]] = {}
    for table, path in (files or {}).items():
        rows, _ = read_description_csv(path)
        bird[table] = {r.original_column_name.strip().lower(): r for r in rows}
    tables = entry.get("table_names_original") or []
    natural = entry.get("column_names") or []
    per_table: dict[int, list[list[str]]] = {}
    for i, (t, name) in enumerate(entry.get("column_names_original") or []):
        if name == "*" or t < 0:
            continue
        row = bird.get(tables[t].lower(), {}).get(name.lower())
        short = (row.column_name if row else "") or (natural[i][1] if i < len(natural) else name)
        per_table.setdefault(t, []).append([
            codes.columns[name.lower()], short,
            row.column_description if row else "", row.data_format if row else "",
            row.value_description if row else "",
        ])  # fmt: skip
    for t, rows in per_table.items():
        with open(target / f"{codes.tables[tables[t].lower()]}.csv", "w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(_DICTIONARY_HEADER)
            writer.writerows(rows)
    return len(per_table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", required=True, help="BIRD tables.json files, comma-separated")
    parser.add_argument("--descriptions", type=Path, help="BIRD's description folders (<db>/<table>.csv)")
    parser.add_argument("--questions", type=Path, required=True, help="BIRD dev.json")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--dev-only",
        type=Path,
        help="also write the coded entries of the questions' databases here (a per-database set)",
    )
    parser.add_argument(
        "--flat",
        metavar="NAME",
        help="also write DIR/flat/: every coded table in one database NAME, the questions asking it",
    )
    args = parser.parse_args(argv)

    args.out.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    for part in args.tables.split(","):
        entries.extend(json.loads(Path(part).read_text(encoding="utf-8")))
    from schemarag.tools.importers.descriptions import find_description_files

    codes = {str(e["db_id"]): Codes.of(e) for e in entries}
    coded = [coded_entry(e, codes[str(e["db_id"])]) for e in entries]
    (args.out / "tables.json").write_text(json.dumps(coded), encoding="utf-8")
    files = 0
    for entry in entries:
        db = str(entry["db_id"])
        found = find_description_files(args.descriptions, db) if args.descriptions else None
        files += write_dictionary(entry, found, args.out / "descriptions" / db, codes[db])
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    kept, dropped = [], 0
    for q in questions:
        sql = coded_sql(q["SQL"], codes[q["db_id"]]) if q.get("db_id") in codes else None
        if sql is None:
            dropped += 1
            continue
        kept.append({**q, "SQL": sql, "evidence": ""})  # the evidence names columns: not kept
    (args.out / "questions.json").write_text(json.dumps(kept, indent=1), encoding="utf-8")
    if args.dev_only:
        asked = {q["db_id"] for q in kept}
        args.dev_only.parent.mkdir(parents=True, exist_ok=True)
        args.dev_only.write_text(json.dumps([c for c in coded if c["db_id"] in asked]), encoding="utf-8")
    (args.out / "codes.json").write_text(
        json.dumps({db: {"tables": c.tables, "columns": c.columns} for db, c in codes.items()}, indent=1),
        encoding="utf-8",
    )
    print(
        f"{len(entries)} database(s) coded, {files} dictionary file(s), {len(kept)} question(s) "
        f"rewritten, {dropped} dropped (SQL sqlglot cannot parse) -> {args.out}"
    )
    if args.flat:
        _write_flat(args.out, args.flat, coded, kept)
    return 0


def _write_flat(out: Path, name: str, coded: list[dict[str, Any]], questions: list[dict[str, Any]]) -> None:
    """``out/flat/``: :func:`flat_entry` of ``coded``, the dictionary files of every database
    in one folder (the codes are unique across them), the questions asking ``name``."""
    import shutil

    flat = out / "flat"
    try:
        entry = flat_entry(coded, name)
    except ValueError as exc:
        raise SystemExit(f"--flat {name}: {exc}") from None
    target = flat / "descriptions" / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for entry_db in coded:
        for path in sorted((out / "descriptions" / str(entry_db["db_id"])).glob("*.csv")):
            shutil.copyfile(path, target / path.name)
    (flat / "tables.json").write_text(json.dumps([entry]), encoding="utf-8")
    asked = [{**q, "db_id": name} for q in questions]
    (flat / "questions.json").write_text(json.dumps(asked, indent=1), encoding="utf-8")
    print(f"one database {name} of {len(entry['table_names_original'])} tables -> {flat}")


if __name__ == "__main__":
    sys.exit(main())
