"""The query-log exports ``import queries`` reads, told apart by their header row.

Each warehouse's system view names its columns its own way; a CSV/Parquet export keeps those
names (any case), so the header says which view it is. One :class:`Format` per view, with the
column that holds the SQL and the optional ones (times run, user, start time, question, status):

=================  ===================================================  ==========================
format             view                                                 SQL column (signature)
=================  ===================================================  ==========================
snowflake          ``SNOWFLAKE.ACCOUNT_USAGE.QUERY_HISTORY``            QUERY_TEXT + EXECUTION_STATUS
bigquery           ``region-xx.INFORMATION_SCHEMA.JOBS``                query + job_id/statement_type
pg_stat_statements ``pg_stat_statements``                               query + calls
redshift           ``SYS_QUERY_HISTORY``                                query_text + status
databricks         ``system.query.history``                             statement_text
mysql              ``performance_schema.events_statements_summary_by_digest``  DIGEST_TEXT
generic            any table with ``sql`` / ``query_text`` / ``query``  (the ``.jsonl`` fields)
=================  ===================================================  ==========================

docs/query-history.md has the export query for each.

Example:
    >>> detect(["QUERY_ID", "QUERY_TEXT", "EXECUTION_STATUS", "USER_NAME"]).name
    'snowflake'
    >>> detect(["userid", "dbid", "queryid", "query", "calls"]).name
    'pg_stat_statements'
    >>> detect(["a", "b"]) is None
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """One export layout. Every field is a tuple of lower-case header names, most specific first.

    ``signature``: headers that must all be present for this format; ``ok_status``: the values of
    ``status`` that mean the statement ran (others are counted as failed and skipped; empty = no
    filter)."""

    name: str
    signature: tuple[str, ...]
    sql: tuple[str, ...]
    count: tuple[str, ...] = ()
    user: tuple[str, ...] = ()
    start_time: tuple[str, ...] = ()
    question: tuple[str, ...] = ()
    status: tuple[str, ...] = ()
    ok_status: frozenset[str] = frozenset()
    error: tuple[str, ...] = ()  # a non-empty value means the statement failed
    job_type: tuple[str, ...] = ()  # BigQuery: only QUERY jobs carry SQL
    database: tuple[str, ...] = ()  # the session's database and schema: a table written
    schema: tuple[str, ...] = ()  # without them resolves there (short_names.py)
    referenced: tuple[str, ...] = ()  # the tables the statement read, in full (short_names.py)
    label: str = ""

    def fields(self) -> dict[str, tuple[str, ...]]:
        """Canonical field -> accepted headers, for :func:`~..export_reader.read_batches`."""
        out = {
            "sql": self.sql,
            "count": self.count,
            "user": self.user,
            "start_time": self.start_time,
            "question": self.question,
            "status": self.status,
            "error": self.error,
            "job_type": self.job_type,
            "database": self.database,
            "schema": self.schema,
            "referenced": self.referenced,
        }
        return {k: v for k, v in out.items() if v}


FORMATS: tuple[Format, ...] = (
    Format(
        "snowflake",
        signature=("query_text", "execution_status"),
        sql=("query_text",),
        user=("user_name",),
        start_time=("start_time",),
        status=("execution_status",),
        ok_status=frozenset({"success"}),
        error=("error_code",),
        database=("database_name",),
        schema=("schema_name",),
        referenced=("direct_objects_accessed",),  # from ACCESS_HISTORY, joined on QUERY_ID
        label="Snowflake ACCOUNT_USAGE.QUERY_HISTORY",
    ),
    Format(
        "redshift",
        signature=("query_text", "status"),
        sql=("query_text",),
        user=("user_id",),
        start_time=("start_time",),
        status=("status",),
        ok_status=frozenset({"success"}),
        error=("error_message",),
        label="Redshift SYS_QUERY_HISTORY",
    ),
    Format(
        "databricks",
        signature=("statement_text",),
        sql=("statement_text",),
        user=("executed_by", "executed_as"),
        start_time=("start_time",),
        status=("execution_status",),
        ok_status=frozenset({"finished"}),
        error=("error_message",),
        label="Databricks system.query.history",
    ),
    Format(
        "mysql",
        signature=("digest_text",),
        sql=("digest_text", "query_sample_text"),
        count=("count_star",),
        start_time=("last_seen", "first_seen"),
        schema=("schema_name",),
        label="MySQL performance_schema.events_statements_summary_by_digest",
    ),
    Format(
        "pg_stat_statements",
        signature=("query", "calls"),
        sql=("query",),
        count=("calls",),
        user=("userid", "rolname", "usename"),
        start_time=("stats_since",),
        label="PostgreSQL pg_stat_statements",
    ),
    *(  # INFORMATION_SCHEMA.JOBS, recognised by job_id or (an export without it) statement_type
        Format(
            "bigquery",
            signature=("query", key),
            sql=("query",),
            user=("user_email",),
            start_time=("creation_time", "start_time"),
            status=("state",),
            ok_status=frozenset({"done"}),
            error=("error_result", "error_result.reason", "error_reason"),
            job_type=("job_type",),
            referenced=("referenced_tables",),
            label="BigQuery INFORMATION_SCHEMA.JOBS",
        )
        for key in ("job_id", "statement_type")
    ),
    Format(
        "generic",
        signature=(),
        sql=("sql", "query_text", "query", "statement_text"),
        count=("count", "calls"),
        user=("user", "user_name"),
        start_time=("start_time",),
        question=("question",),
        schema=("schema",),
        referenced=("referenced_tables",),
        label="a table of statements",
    ),
)

# every header any format reads: the union asked of the reader before the format is known
ALL_HEADERS: dict[str, tuple[str, ...]] = {
    h: (h,) for f in FORMATS for group in f.fields().values() for h in group
} | {h: (h,) for f in FORMATS for h in f.signature}

ACCEPTED = (
    "QUERY_TEXT + EXECUTION_STATUS (Snowflake), query + job_id (BigQuery JOBS), query + calls "
    "(pg_stat_statements), query_text + status (Redshift SYS_QUERY_HISTORY), statement_text "
    "(Databricks), DIGEST_TEXT (MySQL), or sql / query_text / query"
)


def detect(headers: Iterable[str]) -> Format | None:
    """The format whose signature the header row has (first match), the generic one for a
    table with only a SQL column, else None."""
    lower = {h.strip().lower() for h in headers}
    for fmt in FORMATS:
        if fmt.signature and set(fmt.signature) <= lower:
            return fmt
    generic = FORMATS[-1]
    return generic if any(h in lower for h in generic.sql) else None
