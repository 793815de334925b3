"""Hot swap under a looping client, and the concurrency limit / timeout of a constrained server."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
from server_support import start_server
from tiny_support import SHOP, build, write_schema

from schemarag.runtime.artifact.format import CURRENT


def test_republish_is_served_without_restart(unkeyed, tmp_path: Path) -> None:
    """A client loops while a new version of ``shop_c`` is built and published into the served
    folder: every answer is a 200 from the old or the new version, never an error, and the
    new version is served without a restart."""
    root = unkeyed.artifacts / "shop_c"
    old = (root / CURRENT).read_text().strip()
    seen: list[tuple[int, str]] = []
    stop = threading.Event()

    def loop() -> None:
        with httpx.Client(base_url=unkeyed.base, timeout=60) as client:
            i = 0
            while not stop.is_set():
                i += 1
                r = client.post("/v1/retrieve", json={"database": "shop_c", "question": f"gift cards {i}"})
                key = r.json()["metadata"]["artifact_key"] if r.status_code == 200 else r.text
                seen.append((r.status_code, key))

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        changed = json.loads(json.dumps(SHOP))
        gift = {"name": "code", "type": "TEXT", "primary_key": True}
        changed["tables"].append(
            {"name": "gift_cards", "description": "Prepaid gift cards.", "columns": [gift]}
        )
        data = tmp_path / "schemas"
        write_schema(data, changed, "shop_c")
        build(["shop_c"], data, unkeyed.artifacts)
        new = (root / CURRENT).read_text().strip()
        assert new != old
        deadline = 600
        while deadline and not any(k == new for _, k in seen[-3:]):
            stop.wait(0.1)
            deadline -= 1
    finally:
        stop.set()
        thread.join()
    assert seen and all(status == 200 for status, _ in seen), [s for s in seen if s[0] != 200][:3]
    keys = [k for _, k in seen]
    assert keys[0] == old and keys[-1] == new
    assert keys.index(new) > 0 and old not in keys[keys.index(new) :]  # swapped once, never back
    tables = httpx.get(f"{unkeyed.base}/v1/databases").json()["databases"]
    assert next(d for d in tables if d["database"] == "shop_c")["tables"] == 3


def test_concurrency_limit_and_timeout(serve_artifacts: Path, tmp_path: Path) -> None:
    """One request at a time and a 1 ms budget: a request arriving while another is in progress
    gets 503 (not a queue), an admitted one that outlives the budget 504; the server stays healthy
    and shuts down cleanly. Every assertion runs in the test's own thread (a failed assert in a
    worker thread is only a warning), and the request in progress is held open on purpose (a
    chunked body never finished), so the 503 does not depend on two requests racing (issue 39)."""
    env = {"SCHEMARAG_SERVE_MAX_INFLIGHT": "1", "SCHEMARAG_SERVE_REQUEST_TIMEOUT": "0.001"}
    server = start_server(serve_artifacts, tmp_path / "tight.log", env)
    try:
        host, port = server.base.rsplit("/", 1)[1].split(":")
        with socket.create_connection((host, int(port)), timeout=30) as held:
            held.sendall(b"POST /v1/validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n")  # fmt: skip
            busy = None
            for _ in range(100):  # until the held request is admitted (counted in flight)
                busy = httpx.post(f"{server.base}/v1/retrieve", json={"database": "shop_a", "question": "x"})
                if busy.status_code == 503:
                    break
                time.sleep(0.05)
        assert busy is not None and busy.status_code == 503, busy
        assert busy.headers["retry-after"] == "1" and "busy" in busy.json()["error"]
        late = None
        for i in range(50):  # a 200 is possible when the answer and the deadline share a loop turn
            body = {"database": "shop_a", "question": f"orders of customer number {i}"}
            late = httpx.post(f"{server.base}/v1/retrieve", json=body, timeout=60)
            if late.status_code == 504:
                break
            assert late.status_code in (200, 503), late.text  # 503 while the held one is released
        assert late is not None and late.status_code == 504, late
        assert "SCHEMARAG_SERVE_REQUEST_TIMEOUT" in late.json()["error"]
        assert httpx.get(f"{server.base}/healthz").status_code == 200
        assert "schemarag_http_rejected_total" in httpx.get(f"{server.base}/metrics").text
    finally:
        assert server.stop() == 0
