"""Reading ``tables.json`` catalogs and wording what a catalog knows about a name.

Spider/BIRD give each table and column an "original" name (what SQL uses) and a natural
name (``gasstations`` -> ``gas stations``). When the natural name says more than the
original, it goes into the description so that lexical and dense retrieval can match the
words a question uses.

Example:
    >>> describe_column("Segment", "client segment", "")
    'client segment'
    >>> describe_column("CustomerID", "customer id", "identification of the customer")
    'identification of the customer'
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ImportFormatError


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def informative(original: str, natural: str) -> bool:
    """True when ``natural`` adds words beyond ``original`` (ignoring case and separators)."""
    return bool(natural.strip()) and _norm(natural) != _norm(original)


def describe_column(original: str, natural: str, description: str) -> str:
    """The column description: the human text, with the natural name when it adds something."""
    description = " ".join(description.split())
    if not informative(original, natural):
        return description
    natural = " ".join(natural.split())
    if not description:
        return natural
    if _norm(natural) in _norm(description):
        return description
    return f"{description} (also called: {natural})"


def describe_table(db_id: str, table: str, natural: str) -> str:
    """The table's purpose from what the catalog knows: its natural name and its database."""
    if informative(table, natural):
        return f"{natural[:1].upper()}{natural[1:]} (table `{table}` of the `{db_id}` database)."
    return f"The `{table}` table of the `{db_id}` database."


def read_catalogs(paths: list[Path]) -> list[tuple[dict[str, Any], str]]:
    """Every database entry of the given ``tables.json`` files with its source file name.

    A ``db_id`` seen twice keeps its first entry (pooled dev+train files must not clash).
    """
    out: list[tuple[dict[str, Any], str]] = []
    seen: set[str] = set()
    for path in paths:
        try:
            data = json.loads(path.read_bytes().decode("utf-8-sig"))
        except FileNotFoundError:
            raise ImportFormatError(f"{path}: tables file not found; check --tables") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ImportFormatError(f"{path}: not a JSON tables file ({exc}); check --tables") from None
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise ImportFormatError(f"{path}: expected a JSON list of databases (Spider tables.json format)")
        for i, entry in enumerate(data):
            if not isinstance(entry, dict):
                raise ImportFormatError(f"{path}: entry #{i} is not an object with 'db_id'")
            db_id = entry.get("db_id")
            if not isinstance(db_id, str) or not db_id:
                raise ImportFormatError(f"{path}: entry #{i} has no 'db_id'; every database needs a name")
            if db_id in seen:
                raise ImportFormatError(
                    f"{path}: database {db_id!r} appears twice across --tables files; remove one copy"
                )
            seen.add(db_id)
            out.append((entry, str(path)))
    if not out:
        raise ImportFormatError(f"{', '.join(map(str, paths))}: no databases found; check --tables")
    return out
