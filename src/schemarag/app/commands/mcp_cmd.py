"""``schemarag mcp``: the schema tools over MCP stdio, for a desktop or IDE client.

    schemarag mcp --artifacts DIR [--tenant T]

The client starts this process and talks JSON-RPC over its stdin/stdout, so nothing else may
be written to stdout: logs go to stderr. The caller is the local user, so there are no keys;
``--tenant`` picks the namespace (default: ``artifacts/<db>/``).
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import artifacts_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", default=None, help="serve this tenant's databases (_tenants/<tenant>/)")


def run(args: argparse.Namespace) -> int:
    import anyio.to_thread

    from schemarag.app.serve.keys import Principal
    from schemarag.app.serve.mcp_tools import build_mcp
    from schemarag.app.serve.service import SchemaService
    from schemarag.app.serve.settings import ServeSettings
    from schemarag.runtime.core.names import check_name

    settings = ServeSettings.load(artifacts=artifacts_dir(args.artifacts))
    if not settings.artifacts.is_dir():
        raise ConfigError(f"--artifacts {settings.artifacts}: no such folder; run `schemarag build` first")
    tenant = check_name(args.tenant, "tenant") if args.tenant else None
    service = SchemaService(settings.artifacts, settings.refresh_seconds, settings.query_cache)

    async def call(fn: Any, *a: Any) -> Any:
        with anyio.fail_after(settings.request_timeout):
            return await anyio.to_thread.run_sync(functools.partial(fn, *a))

    service.warm([tenant])
    build_mcp(service, call, Principal(tenant), limits=settings).run("stdio")
    return 0
