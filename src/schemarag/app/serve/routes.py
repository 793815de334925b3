"""HTTP endpoints: request models (which FastAPI turns into the OpenAPI document) and handlers.

Handlers do no CPU work on the event loop: each hands the service call to the app's thread
pool (:meth:`ServerState.call`), under the per-request timeout. Responses are ``orjson`` bytes with
the field names of ``schemarag retrieve --json``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from schemarag.app.serve.settings import ServeSettings
from schemarag.app.serve.state import ServerState, json_response
from schemarag.runtime.ranking.config import TableFocus
from schemarag.runtime.search.history_examples import DEFAULT_EXAMPLES, MAX_EXAMPLES

router = APIRouter()


Focus = Literal["default", "compact"]  # the names in ranking.config.focus_policies()


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error, not silently ignored

    database: str = Field(min_length=1, max_length=128, description="database name (GET /v1/databases)")


class _Ranked(BaseModel):
    """The table-ranking fields of POST /v1/schema and /v1/generate."""

    table_budget: int | None = Field(
        default=None,
        ge=1,
        description="with a question: at most N tables ranked from all evidence, each with its "
        "focused columns (default 15: the selection the README's quality figures measure)",
    )
    focus: Focus | None = Field(
        default=None,
        description="with a question: what each ranked table shows. 'default': focused columns as "
        "DDL with descriptions; 'compact': the whole schema capped at 30% of the full one, lower-"
        "ranked tables thinned to their column names (no table dropped)",
    )
    adaptive: bool = Field(
        default=False,
        description="with a question: choose the number of tables per question, 'table_budget' (default "
        "15) being the ceiling; a clear question keeps fewer tables, an uncertain one the whole budget",
    )

    def table_focus(self) -> TableFocus:
        return TableFocus(self.table_budget, self.focus, self.adaptive)


class _Examples(BaseModel):
    """The past-queries field of POST /v1/schema and /v1/generate (issue 38)."""

    examples: int | None = Field(
        default=None,
        ge=0,
        le=MAX_EXAMPLES,
        description="with a question: past queries from the database's query history shown after "
        "the schema as examples, those that read only the ranked tables and best fit the question "
        f"(default {DEFAULT_EXAMPLES}; 0: none; an index built without a history has none)",
    )


class RetrieveBody(_Body, _Ranked):
    question: str = Field(min_length=1, description="natural-language question")
    top_k: int | None = Field(default=None, ge=1, description="evidence chunks to return (default 5)")
    threshold: float | None = Field(default=None, ge=0.0, le=1.0, description="minimum relevance in [0, 1]")


class SchemaBody(_Body, _Ranked, _Examples):
    question: str | None = Field(default=None, description="question to focus the schema on")
    tables: list[str] | None = Field(
        default=None, min_length=1, description="explicit tables; their FK neighbours are added"
    )
    token_budget: int | None = Field(default=None, ge=50, description="cap on the schema's size in tokens")
    top_k: int | None = Field(default=None, ge=1, description="chunks to retrieve for a question")


class ValidateBody(_Body):
    sql: str = Field(min_length=1, description="one SQL statement to check against the schema")


class GenerateBody(_Body, _Ranked, _Examples):
    question: str = Field(min_length=1, description="natural-language question")


def limit_problem(body: BaseModel, s: ServeSettings) -> tuple[str, str] | None:
    """The first (field, message) by which a well-typed body breaks the server's limits or the
    field rules the model cannot state; None when it keeps them. HTTP answers it with 422, MCP
    with a tool error (issue 39: MCP accepted 1,000 ``tables``), so both refuse the same input."""
    question, tables = getattr(body, "question", None), getattr(body, "tables", None)
    if isinstance(body, SchemaBody) and not question and not tables:
        return "question", "give 'question' or 'tables' (or both)"
    if question is not None and len(question) > s.max_question_chars:
        return "question", (f"question is {len(question)} characters; the limit is {s.max_question_chars} "
                            "(SCHEMARAG_SERVE_MAX_QUESTION_CHARS)")  # fmt: skip
    if question and not question.strip():
        return "question", "question is empty or whitespace; ask a question"
    if tables and len(tables) > s.max_top_k:
        return "tables", f"at most {s.max_top_k} tables per request"
    sql = getattr(body, "sql", None)
    if sql is not None and len(sql) > s.max_sql_chars:
        limit = s.max_sql_chars
        return "sql", f"sql is {len(sql)} characters; the limit is {limit} (SCHEMARAG_SERVE_MAX_SQL_CHARS)"
    for field in ("top_k", "table_budget"):
        value = getattr(body, field, None)
        if value is not None and value > s.max_top_k:
            return field, f"{field} {value} is over the limit {s.max_top_k}"
    if isinstance(body, SchemaBody) and body.table_focus().requested and (tables or not question):
        return ("tables" if tables else "question"), (
            "'table_budget', 'focus' and 'adaptive' rank the tables for a 'question'; they do not "
            "apply to explicit 'tables' (send a question without tables)"
        )
    if isinstance(body, SchemaBody) and body.examples and (tables or not question):
        return ("tables" if tables else "question"), (
            "'examples' follow the ranked tables of a 'question'; send a question without 'tables'"
        )
    return None


def _rt(request: Request, body: BaseModel | None = None) -> ServerState:
    """The server state, after checking ``body`` against :func:`limit_problem` (422)."""
    rt: ServerState = request.app.state.server
    if body is not None:
        problem = limit_problem(body, rt.settings)
        if problem:
            rt.unprocessable(problem[1], problem[0])
        if getattr(body, "question", None):
            request.state.log["question"] = body.question
    return rt


@router.get("/healthz", summary="Liveness: the process answers")
async def healthz() -> Response:
    return json_response({"status": "ok"})


@router.get("/readyz", summary="Readiness: indexes opened and the embedding model loaded")
async def readyz(request: Request) -> Response:
    rt = _rt(request)
    if rt.failed:  # an index that failed to open: try again (a fixed version may be published)
        await rt.call(rt.warm)
    body: dict[str, Any] = {"ready": rt.ready}
    # the details name every tenant's databases: for an operator key or a loopback probe only
    # (the middleware decides, as for /metrics); anyone else learns ready / not ready
    if request.state.operator:
        body["databases"] = rt.opened
        if rt.warm_error:
            body["error"] = rt.warm_error
    return json_response(body, status=200 if rt.ready else 503)


@router.get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def metrics_endpoint() -> Response:
    from schemarag.app.serve.metrics import render

    body, ctype = render()
    return Response(body, media_type=ctype)


@router.get("/v1/databases", summary="The caller's databases with index version and table count")
async def databases(request: Request) -> Response:
    rt = _rt(request)
    principal = request.state.principal
    return json_response({"databases": await rt.call(rt.service.databases, principal)})


@router.post(
    "/v1/retrieve", summary="Focused tables for a question (the table ranking), with the chunks behind it"
)
async def retrieve(body: RetrieveBody, request: Request) -> Response:
    rt = _rt(request, body)
    out = await rt.call(
        rt.service.retrieve,
        request.state.principal,
        body.database,
        body.question,
        body.top_k,
        body.threshold,
        body.table_focus(),
    )
    return json_response(out)


@router.post("/v1/schema", summary="Focused schema text (CREATE TABLE + docs) for a question or tables")
async def schema(body: SchemaBody, request: Request) -> Response:
    rt = _rt(request, body)
    ranking = body.table_focus()
    out = await rt.call(
        rt.service.schema,
        request.state.principal,
        body.database,
        body.question,
        body.tables,
        body.token_budget,
        body.top_k,
        ranking,
        body.examples,
    )
    return json_response(out)


@router.post("/v1/validate", summary="Validate SQL against the database's schema: verdict and reasons")
async def validate(body: ValidateBody, request: Request) -> Response:
    rt = _rt(request, body)
    return json_response(await rt.call(rt.service.validate, request.state.principal, body.database, body.sql))


@router.post("/v1/generate", summary="SQL for a question, validated (needs SCHEMARAG_LLM_BASE_URL)")
async def generate(body: GenerateBody, request: Request) -> Response:
    rt = _rt(request, body)
    out = await rt.call(
        rt.service.generate,
        request.state.principal,
        body.database,
        body.question,
        body.table_focus(),
        body.examples,
    )
    return json_response(out)
