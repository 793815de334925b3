"""What a user types and reads around the server (issue 40, item 6), against real processes:
"did you mean" over HTTP and MCP, ``/mcp`` with and without its slash, ``serve --new-key`` output
a shell takes, ``schemarag list``, help without docstring markup (``source_url``: in
tests/test_cli_first_hour.py, whose index has docs)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_support import start_server

from schemarag.app.serve.service import table_hint
from schemarag.cli import COMMANDS, build_parser

SCHEMARAG = str(Path(sys.executable).with_name("schemarag"))
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-03-26",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_unknown_database_and_table_get_a_did_you_mean_over_http(unkeyed) -> None:
    r = httpx.post(f"{unkeyed.base}/v1/retrieve", json={"database": "shp", "question": "customers"})
    assert r.status_code == 404 and "did you mean 'shop'?" in r.json()["error"], r.text
    r = httpx.post(f"{unkeyed.base}/v1/schema", json={"database": "shop", "tables": ["ordrs"]})
    assert r.status_code == 422 and "'ordrs' (did you mean 'orders'?)" in r.json()["error"], r.text


def test_unqualified_table_suggests_the_qualified_names() -> None:
    tables = ["SALES.ORDERS", "sales.customers", "hr.orders_archive"]
    assert table_hint("ORDERS", tables) == " (did you mean 'SALES.ORDERS'?)"
    assert table_hint("customer", tables) == " (did you mean 'sales.customers'?)"
    assert table_hint("zzz", tables) == ""


def test_unknown_database_gets_a_did_you_mean_over_mcp(unkeyed) -> None:
    async def call() -> str:
        async with Client(streamable_http_client(f"{unkeyed.base}/mcp")) as client:
            r = await client.call_tool("get_schema", {"database": "shp", "question": "customers"})
            assert r.is_error
            return r.content[0].text

    assert "did you mean 'shop'?" in anyio.run(call)


def test_mcp_answers_with_and_without_the_slash(unkeyed) -> None:
    for path in ("/mcp", "/mcp/"):
        r = httpx2.post(f"{unkeyed.base}{path}", json=INIT, headers=MCP_HEADERS, follow_redirects=False)
        assert r.status_code == 200, (path, r.status_code, r.headers.get("location"))
        assert r.json()["result"]["serverInfo"]


def test_new_key_prints_a_line_the_shell_takes_and_the_server_accepts(
    serve_artifacts: Path, tmp_path: Path
) -> None:
    out = subprocess.run(
        [SCHEMARAG, "serve", "--new-key", "acme"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    key = out.stdout.splitlines()[0].rsplit(" ", 1)[1]
    (line,) = [ln for ln in out.stdout.splitlines() if ln.startswith("export ")]
    assert line.startswith("export SCHEMARAG_SERVE_API_KEYS='acme=sha256:"), line
    shell = subprocess.run(["bash", "-c", f"{line}\nprintenv SCHEMARAG_SERVE_API_KEYS"],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert shell.returncode == 0, shell.stderr
    server = start_server(
        serve_artifacts, tmp_path / "newkey.log", {"SCHEMARAG_SERVE_API_KEYS": shell.stdout.strip()}
    )
    try:
        ok = httpx.get(f"{server.base}/v1/databases", headers={"Authorization": f"Bearer {key}"})
        assert ok.status_code == 200 and {d["database"] for d in ok.json()["databases"]} == {"acme_crm"}
        assert httpx.get(f"{server.base}/v1/databases").status_code == 401
    finally:
        assert server.stop() == 0, (tmp_path / "newkey.log").read_text()


def test_list_shows_every_built_index(serve_artifacts: Path, unkeyed) -> None:
    done = subprocess.run([SCHEMARAG, "list", "--artifacts", str(serve_artifacts), "--json"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    by_name = {(r["database"], r["tenant"]): r for r in rows}
    assert {("shop", None), ("acme_crm", "acme"), ("globex_hr", "globex")} <= set(by_name)
    served = {d["database"]: d for d in httpx.get(f"{unkeyed.base}/v1/databases").json()["databases"]}
    shop = by_name[("shop", None)]
    assert shop["key"] == served["shop"]["artifact_key"] and shop["tables"] == served["shop"]["tables"]
    assert shop["chunks"] > 0 and shop["model"] and shop["built_at"].endswith("Z")
    table = subprocess.run([SCHEMARAG, "list", "--artifacts", str(serve_artifacts)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    head, *lines = table.stdout.splitlines()
    assert head.split() == ["database", "tenant", "tables", "chunks", "key", "built", "at", "model"]
    assert any(ln.split()[:2] == ["acme_crm", "acme"] for ln in lines), table.stdout
    empty = subprocess.run([SCHEMARAG, "list", "--artifacts", str(serve_artifacts / "nothing")],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert empty.returncode == 0 and "no index built in" in empty.stderr


def _helps(parser: argparse.ArgumentParser):
    yield parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _helps(sub)


def test_help_has_no_docstring_markup() -> None:
    for name in COMMANDS:
        for text in _helps(build_parser([name])):
            assert "``" not in text and ":func:" not in text and ":mod:" not in text, (name, text[:300])
