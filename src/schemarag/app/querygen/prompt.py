"""The messages sent to the model: a fixed system prompt, the schema context and the question.

The guidance follows published text-to-SQL prompting results:

- schema as ``CREATE TABLE`` statements with keys and foreign keys (Rajkumar et al. 2022,
  "Evaluating the Text-to-SQL Capabilities of Large Language Models"; Gao et al. 2023, DAIL-SQL
  "code representation"; Chang & Fosler-Lussier 2023, "How to Prompt LLMs for Text-to-SQL");
- name the SQL dialect explicitly, since function names and quoting differ;
- link question words to schema elements before writing SQL and join only along foreign keys
  (Pourreza & Rafiei 2023, DIN-SQL schema linking);
- calibration hints against common over-generation: select only the asked-for columns, avoid
  needless joins and DISTINCT (Dong et al. 2023, C3);
- a structured JSON answer, so the SQL can be validated and repaired mechanically.

- past queries on the same database as examples, when its query history has some that read
  the focused tables (Gao et al. 2023, DAIL-SQL: examples chosen by similarity help most), after
  the schema and before the question; without examples the message is exactly what it was.

Everything here is a pure function of its inputs: the same question, schema text and dialect
give byte-identical messages, which keeps ``--prompt-only`` output diffable and LLM caches warm.

Example:
    >>> msgs = build_messages("How many users?", "CREATE TABLE users (id INT);", "sqlite")
    >>> [m["role"] for m in msgs]
    ['system', 'user']
    >>> "SQLite" in msgs[0]["content"]
    True
"""

from __future__ import annotations

DIALECT_NAMES: dict[str, str] = {
    "postgres": "PostgreSQL",
    "sqlite": "SQLite",
    "duckdb": "DuckDB",
    "mysql": "MySQL",
    "bigquery": "Google BigQuery (GoogleSQL)",
    "snowflake": "Snowflake",
    "tsql": "Microsoft SQL Server (T-SQL)",
}


_SYSTEM_TEMPLATE = """\
You are an expert data analyst who translates questions into {dialect} SQL.

The database schema is given as CREATE TABLE statements with primary and foreign keys; \
comments and documentation after the statements explain what tables, columns and values mean.

Follow these rules:
1. Write exactly one read-only {dialect} SELECT statement (WITH ... SELECT is fine). Never \
write INSERT, UPDATE, DELETE, MERGE, DDL, PRAGMA, ATTACH or more than one statement.
2. Use only tables and columns that appear in the CREATE TABLE statements, spelled exactly as \
there; quote identifiers that contain spaces or special characters the way {dialect} requires.
3. First link each part of the question to the tables, columns and values it refers to; use the \
documentation to pick the right column and the right literal values (codes, enums, formats).
4. Join tables only along the foreign keys shown, and join only the tables you need.
5. Select only the columns the question asks for, in the order it asks for them; avoid \
DISTINCT, extra columns and extra joins unless the question needs them.
6. Qualify columns with table aliases whenever more than one table is involved.
7. Use {dialect} functions and syntax for dates, strings, limits and casts.
8. If the question is ambiguous, choose the most likely reading and state it as an assumption.

Answer with a single JSON object and nothing else (no markdown fences), with these keys:
{{"query": "<the SQL>", "explanation": "<one or two sentences on how the query answers the \
question>", "confidence": "high" | "medium" | "low", "tables_used": ["<table>", ...], \
"assumptions": ["<assumption>", ...]}}"""

_USER_TEMPLATE = """\
Database: {database}
Dialect: {dialect}

{schema}

Question: {question}"""

_REPAIR_TEMPLATE = """\
Your SQL failed validation against the schema:
{errors}

Fix the query so that it is one read-only {dialect} SELECT using only the tables and columns \
in the schema above. Answer again with the same JSON object format and nothing else."""


def dialect_name(dialect: str) -> str:
    """Human name of a sqlglot dialect id (unknown ids are shown as given)."""
    return DIALECT_NAMES.get(dialect, dialect)


def system_prompt(dialect: str) -> str:
    """The system message for ``dialect``."""
    return _SYSTEM_TEMPLATE.format(dialect=dialect_name(dialect))


def build_messages(
    question: str, schema_context: str, dialect: str, database: str = "", examples: str = ""
) -> list[dict[str, str]]:
    """Chat messages for one question; deterministic for the same arguments.

    ``examples``: the rendered "Examples of past queries" section
    (:func:`~schemarag.runtime.search.history_examples.examples_section`), placed between the
    schema and the question; "" (none) leaves the message byte-identical to one without it.
    """
    schema = schema_context.strip()
    if examples.strip():
        schema = f"{schema}\n\n{examples.strip()}"
    user = _USER_TEMPLATE.format(
        database=database or "(unnamed)",
        dialect=dialect_name(dialect),
        schema=schema,
        question=question.strip(),
    )
    return [{"role": "system", "content": system_prompt(dialect)}, {"role": "user", "content": user}]


def build_repair_messages(
    messages: list[dict[str, str]], previous_answer: str, errors: list[str], dialect: str
) -> list[dict[str, str]]:
    """The conversation so far plus the model's answer and the exact validation errors."""
    listed = "\n".join(f"- {e}" for e in errors)
    repair = _REPAIR_TEMPLATE.format(errors=listed, dialect=dialect_name(dialect))
    return [
        *messages,
        {"role": "assistant", "content": previous_answer},
        {"role": "user", "content": repair},
    ]
