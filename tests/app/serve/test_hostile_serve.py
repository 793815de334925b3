"""Issue 39's serving findings against a real ``schemarag serve`` process: ``/readyz`` leaks no
tenant's databases before a key, a chunked body over the limit is 413 like a declared one, a
request head that never completes is closed, and MCP ``get_schema`` refuses what HTTP refuses."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from server_support import Server, key_env, start_server


def _non_loopback_ipv4() -> str | None:
    """An address of this machine that is not loopback (the route a remote client would take)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
            addr = s.getsockname()[0]
    except OSError:
        return None
    return None if addr.startswith("127.") else addr


def test_readyz_details_need_an_operator_key_or_loopback(keyed: Server) -> None:
    url = f"{keyed.base}/readyz"
    for headers in (keyed.headers("acme"), {"Authorization": "Bearer sr_not-a-key"}):
        assert httpx.get(url, headers=headers).json() == {"ready": True}  # nothing of any tenant
    operator = httpx.get(url, headers=keyed.headers(None)).json()
    assert {"acme_crm", "globex_hr"} <= {d["database"] for d in operator["databases"]}
    loopback = httpx.get(url).json()  # like /metrics: a local probe without a key sees the details
    assert {d["database"] for d in loopback["databases"]} >= {"acme_crm"}


@pytest.fixture(scope="module")
def remote(serve_artifacts, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    host = _non_loopback_ipv4()
    if host is None:
        pytest.skip("this machine has no non-loopback IPv4 address to reach the server from")
    log = tmp_path_factory.mktemp("logs") / "remote.log"
    server = start_server(serve_artifacts, log, key_env(), host=host)
    yield server
    assert server.stop() == 0, log.read_text()


def test_readyz_from_another_host_without_a_key_says_only_ready(remote: Server) -> None:
    r = httpx.get(f"{remote.base}/readyz")
    assert r.status_code == 200 and r.json() == {"ready": True}, r.text
    assert "acme" not in r.text and "globex" not in r.text
    assert "databases" in httpx.get(f"{remote.base}/readyz", headers=remote.headers(None)).json()


def _chunks(total: int) -> Iterator[bytes]:
    body = b'{"database": "shop", "sql": "SELECT 1 -- ' + b"x" * total + b'"}'
    for i in range(0, len(body), 1024):
        yield body[i : i + 1024]


@pytest.mark.parametrize("path", ["/v1/validate", "/mcp"])
def test_a_chunked_body_over_the_limit_is_413(unkeyed: Server, path: str) -> None:
    r = httpx.post(
        f"{unkeyed.base}{path}",
        content=_chunks(20_000),  # an iterator: httpx sends it chunked, no Content-Length
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream"},
    )
    assert r.status_code == 413, r.text
    assert "4096" in r.text
    parts = iter([b'{"database": "shop", ', b'"sql": "SELECT 1"}'])  # chunked, under the limit
    json_type = {"content-type": "application/json"}
    small = httpx.post(f"{unkeyed.base}/v1/validate", content=parts, headers=json_type)
    assert small.status_code == 200 and small.json()["valid"] is True, small.text


def test_a_request_head_that_never_completes_is_closed(unkeyed: Server) -> None:
    host, port = unkeyed.base.rsplit("/", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # and nothing more
        start = time.monotonic()
        s.settimeout(30)
        assert s.recv(65536) == b""  # closed by the server, not by our timeout (which raises)
        waited = time.monotonic() - start
    assert waited < 10, waited  # SCHEMARAG_SERVE_HEADER_TIMEOUT is 2 s for this server
    assert httpx.get(f"{unkeyed.base}/healthz").status_code == 200  # a normal client is unaffected


def _mcp(server: Server, tenant: str | None):
    return streamable_http_client(f"{server.base}/mcp", http_client=httpx2.AsyncClient(
        headers=server.headers(tenant), timeout=120))  # fmt: skip


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"tables": [f"t{i}" for i in range(1000)]}, "at most 100 tables"),
        ({"tables": ["leads"], "token_budget": -5}, "token_budget"),
        ({"question": "leads", "table_budget": 1000}, "table_budget"),
        ({"question": "x" * 5000}, "limit is 4000"),
        ({"question": "leads", "database": ""}, "database"),
    ],
)
def test_mcp_get_schema_refuses_what_http_refuses(keyed: Server, arguments: dict, fragment: str) -> None:
    body = {"database": "acme_crm", **arguments}
    http = httpx.post(f"{keyed.base}/v1/schema", json=body, headers=keyed.headers("acme"))
    assert http.status_code == 422, http.text

    async def call() -> tuple[bool, str]:
        async with Client(_mcp(keyed, "acme")) as client:
            r = await client.call_tool("get_schema", body)
            return r.is_error, r.content[0].text

    is_error, text = anyio.run(call)
    assert is_error, text
    assert fragment in text and "\n" not in text, text
