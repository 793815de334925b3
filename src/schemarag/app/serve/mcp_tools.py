"""The MCP server (official ``mcp`` SDK, ``MCPServer``): the HTTP API's capabilities as tools.

Two transports share these tools: ``schemarag mcp`` runs them over stdio for a desktop or IDE
client (the caller is the local user, namespace from ``--tenant``), and ``schemarag serve``
mounts them at ``/mcp`` as streamable HTTP behind the same API-key middleware as ``/v1``; there
each call reads the caller's tenant from the HTTP request the middleware already authorised, so
an MCP client sees exactly the databases its key sees over HTTP.

Descriptions are written for the model that picks tools: when to call which, and what it gets.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ValidationError

from schemarag import __version__
from schemarag.app.serve.keys import Principal
from schemarag.app.serve.service import SchemaService, llm_configured
from schemarag.app.serve.settings import ServeSettings
from schemarag.runtime.core.errors import SchemaragError
from schemarag.runtime.ranking.config import TableFocus
from schemarag.runtime.search.history_examples import DEFAULT_EXAMPLES

Call = Callable[..., Awaitable[Any]]

INSTRUCTIONS = """\
schemarag answers questions about the schema of SQL databases without dumping the whole schema.
Typical flow: list_databases -> get_schema(database, question) -> write SQL -> validate_sql.
Use search_schema when you want ranked evidence (which tables/columns/docs match), get_schema when
you want ready-to-use CREATE TABLE statements plus documentation within a token budget."""

LIST_DATABASES = """List the databases you can query, with their index version and table count.
Call this first when you do not know the database name; every other tool needs one of these names."""

SEARCH_SCHEMA = """Search a database's schema and documentation for a natural-language question.
Returns `ranking`: the tables to use (at most `table_budget`, default 15), best first, each with
its relevance in [0, 1] and the columns that matter; `tables` (ranked on their own evidence) and
`expanded_tables` (foreign-key neighbours the ranking took along, for joins); and, as evidence,
the top_k best-matching chunks (table, column and doc passages). Use it to find out WHICH tables
and columns matter; use get_schema to get their DDL.
If metadata.nothing_relevant is true, the database probably cannot answer the question."""

GET_SCHEMA = f"""Get a focused schema for writing SQL: CREATE TABLE statements for the tables relevant
to `question` (at most `table_budget`, default 15, ranked from all evidence, the foreign-key
neighbours needed for joins among them), each showing its relevant columns, followed by the
retrieved documentation, trimmed to `token_budget` tokens. Or give the explicit `tables` you
already know you need (their foreign-key neighbours come along). `focus` says what each ranked
table shows: "default" (the default) DDL with descriptions, "compact" at most ~30% of the full
schema and never more than "default" (lower-ranked tables shrink to a line of column names; no
table is dropped); `adaptive` keeps fewer tables when the question is clear and the whole
`table_budget` when it is not. When the database's query history was imported, the `examples`
best-fitting past queries on the ranked tables follow the schema (default {DEFAULT_EXAMPLES}, 0 for
none): copy their joins and column choices, not their answers.
This is what to put in your context before writing a query; it is much smaller than the full schema."""

VALIDATE_SQL = """Check one SQL statement against the database's real schema before running or showing it.
Returns valid: true, false, or null (unchecked: no error found, but the binder could not confirm
the query; unchecked_reason says why; do not treat it as valid), errors (exact, fixable messages:
unknown table or column with close matches, not read-only, executable comment or hint,
assignment, does not parse), warnings, and the tables referenced. Only read-only SELECT queries
pass. Fix the errors it names and call it again."""

GENERATE_SQL = f"""Generate a SQL query for a natural-language question with the server's own LLM,
using a focused schema, and validate it. Returns the query, an explanation, confidence, tables used
and the validation result. `examples`: past queries from the database's query history put in the
prompt (default {DEFAULT_EXAMPLES}, 0 for none). Prefer writing SQL yourself from get_schema when you
can."""


def build_mcp(
    service: SchemaService,
    call: Call,
    default: Principal,
    *,
    generation: bool | None = None,
    limits: ServeSettings | None = None,
) -> MCPServer:
    """An MCPServer whose tools run ``service`` methods through ``call`` (the thread pool).

    ``default`` is the principal for transports without an HTTP request (stdio). Every tool's
    arguments are checked by the HTTP request model and :func:`~.routes.limit_problem` with
    ``limits`` (the server's settings), so MCP refuses exactly what ``/v1`` answers with 422.
    """
    from schemarag.app.serve.routes import GenerateBody, RetrieveBody, SchemaBody, ValidateBody, limit_problem

    settings = limits or ServeSettings()
    mcp = MCPServer("schemarag", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def checked(model: type[BaseModel], **arguments: Any) -> Any:
        """``arguments`` as ``model`` (None means "not given"), or a one-line ToolError."""
        try:
            body = model.model_validate({k: v for k, v in arguments.items() if v is not None})
        except ValidationError as exc:
            raise ToolError("; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                                      for e in exc.errors()[:3])) from None  # fmt: skip
        problem = limit_problem(body, settings)
        if problem:
            raise ToolError(f"{problem[0]}: {problem[1]}")
        return body

    def principal_of(ctx: Context) -> Principal:
        request = getattr(ctx.request_context, "request", None)
        state = getattr(request, "scope", {}).get("state", {}) if request is not None else {}
        found = state.get("principal") if isinstance(state, dict) else None
        return found if isinstance(found, Principal) else default

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return await call(fn, *args)
        except (SchemaragError, TimeoutError) as exc:
            raise ToolError(str(exc)) from None

    @mcp.tool(description=LIST_DATABASES)
    async def list_databases(ctx: Context) -> dict[str, Any]:
        return {"databases": await run(service.databases, principal_of(ctx))}

    @mcp.tool(description=SEARCH_SCHEMA)
    async def search_schema(
        database: str,
        question: str,
        ctx: Context,
        top_k: int = 5,
        table_budget: int | None = None,
        focus: Literal["default", "compact"] | None = None,
        adaptive: bool = False,
    ) -> dict[str, Any]:
        body = checked(RetrieveBody, database=database, question=question, top_k=top_k,
                       table_budget=table_budget, focus=focus, adaptive=adaptive)  # fmt: skip
        ranking = body.table_focus()
        return await run(service.retrieve, principal_of(ctx), database, question, top_k, None, ranking)

    @mcp.tool(description=GET_SCHEMA)
    async def get_schema(
        database: str,
        ctx: Context,
        question: str | None = None,
        tables: list[str] | None = None,
        token_budget: int | None = 4000,
        focus: Literal["default", "compact"] | None = None,
        table_budget: int | None = None,
        adaptive: bool = False,
        examples: int | None = None,
    ) -> str:
        if not question and not tables:
            raise ToolError("give `question` (what the SQL should answer) or `tables` (names you need)")
        ranking = TableFocus(table_budget, focus, adaptive)
        if ranking.requested and (tables or not question):
            raise ToolError(
                "`focus`, `table_budget` and `adaptive` rank the tables for a `question`; drop `tables`"
            )
        checked(SchemaBody, database=database, question=question, tables=tables, token_budget=token_budget,
                table_budget=table_budget, focus=focus, adaptive=adaptive, examples=examples)  # fmt: skip
        out = await run(
            service.schema,
            principal_of(ctx),
            database,
            question,
            tables,
            token_budget,
            None,
            ranking,
            examples,
        )
        meta = out["metadata"]
        header = (
            f"-- database {database}, index {meta['artifact_key']}, ~{meta['token_estimate']} tokens; "
            f"tables: {', '.join(meta['tables_shown'])}\n"
        )
        return header + out["schema"]

    @mcp.tool(description=VALIDATE_SQL)
    async def validate_sql(database: str, sql: str, ctx: Context) -> dict[str, Any]:
        checked(ValidateBody, database=database, sql=sql)
        return await run(service.validate, principal_of(ctx), database, sql)

    if generation if generation is not None else llm_configured():

        @mcp.tool(description=GENERATE_SQL)
        async def generate_sql(
            database: str, question: str, ctx: Context, examples: int | None = None
        ) -> dict[str, Any]:
            checked(GenerateBody, database=database, question=question, examples=examples)
            return await run(service.generate, principal_of(ctx), database, question, None, examples)

    return mcp
