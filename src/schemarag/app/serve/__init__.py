"""``schemarag serve``: the runtime behind HTTP (FastAPI on uvicorn) and MCP, tenant-scoped.

Query side only: imports the runtime and the ``serve`` extra (fastapi, uvicorn, mcp,
prometheus-client, orjson), never the build libraries. Modules: ``settings`` (flags/env),
``keys`` (API keys -> tenants), ``service`` (the operations, shared by both front doors),
``state`` (thread pool, limits, error mapping), ``routes`` (HTTP), ``mcp_tools`` (MCP),
``middleware`` (request ids, auth, limits, access log), ``metrics`` (Prometheus), ``app``.
See docs/serving.md.
"""

from __future__ import annotations
