"""Question files: BIRD (``question, evidence, SQL, db_id``), Spider (``question, query, db_id``)
and the bundled samples (``data/questions/<db>.jsonl``: ``question, sql``, the database named by
the file), so ``schemarag eval --questions data/questions`` runs on a fresh clone.

Example:
    >>> q = parse_question({"db_id": "x", "question": "How many?", "query": "SELECT 1"}, 7)
    >>> q.question_id, q.sql, q.text(with_evidence=True)
    (7, 'SELECT 1', 'How many?')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from schemarag.runtime.core.errors import ConfigError


@dataclass(frozen=True)
class Question:
    question_id: int | str
    db_id: str
    question: str
    sql: str
    evidence: str = ""

    def text(self, with_evidence: bool = False) -> str:
        """What the retriever sees: the question, plus BIRD's evidence hint when asked for."""
        if with_evidence and self.evidence.strip():
            return f"{self.question.strip()} {self.evidence.strip()}"
        return self.question.strip()


def parse_question(
    raw: dict[str, Any], position: int, source: str = "<questions>", db_id: str | None = None
) -> Question:
    """One record; ``question_id`` is the file's, or the 0-based position when it has none.
    ``db_id`` is the database of records without one (the bundled ``<db>.jsonl`` files)."""
    if db_id is not None and "db_id" not in raw:
        raw = {**raw, "db_id": db_id}
    missing = [k for k in ("db_id", "question") if not isinstance(raw.get(k), str)]
    sql = raw.get("SQL", raw.get("query", raw.get("sql")))
    if not isinstance(sql, str):
        missing.append("SQL (BIRD), query (Spider) or sql (bundled samples)")
    if missing:
        raise ConfigError(f"{source}: question #{position} lacks {', '.join(missing)}")
    qid = raw.get("question_id", position)
    return Question(
        question_id=qid if isinstance(qid, int | str) else position,
        db_id=raw["db_id"],
        question=raw["question"],
        sql=sql,
        evidence=str(raw.get("evidence") or ""),
    )


def load_questions(path: Path, limit: int | None = None) -> list[Question]:
    """All questions of a BIRD/Spider JSON list (or JSON-lines) file, or of every ``*.jsonl``
    in a folder (``data/questions``: each file's stem is its records' database)."""
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise ConfigError(f"{path}: no *.jsonl question files in this folder; check --questions")
        # ids restart in every file; prefix the database so predictions stay unique
        out = [
            replace(q, question_id=f"{f.stem}/{q.question_id}") for f in files for q in _load_file(f, f.stem)
        ]
        return out[:limit] if limit else out
    return _load_file(path)[:limit] if limit else _load_file(path)


def _load_file(path: Path, db_id: str | None = None) -> list[Question]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{path}: questions file not found; check --questions") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: neither a JSON list nor JSON lines ({exc})") from None
    if not isinstance(data, list):
        raise ConfigError(f"{path}: expected a JSON list of questions")
    if db_id is None and path.suffix == ".jsonl":  # a bundled sample file is named after its database
        db_id = path.stem
    return [parse_question(raw, i, str(path), db_id) for i, raw in enumerate(data) if isinstance(raw, dict)]
