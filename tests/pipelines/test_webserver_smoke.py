"""``dagster-webserver`` loads workspace.yaml and serves our asset graph over GraphQL, as the UI sees it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from webserver_support import ENV, start_webserver

from schemarag.assets.published_index import CHECKS

REPO = Path(__file__).resolve().parents[2]

START_TIMEOUT = 90.0
ASSETS = {"source_snapshot", "doc_chunks", "bm25_statistics", "chunk_embeddings", "published_index"}
QUERY = """
{
  assetNodes {
    assetKey { path }
    groupName
    partitionDefinition { type name description }
    partitionKeys
    assetChecksOrError { ... on AssetChecks { checks { name } } }
  }
  repositoriesOrError {
    ... on RepositoryConnection { nodes { name location { name } schedules { name } sensors { name } } }
  }
}
"""


def _post(url: str, query: str) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps({"query": query}).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.fixture(scope="module")
def webserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import dagster as dg

    home = tmp_path_factory.mktemp("dagster_home")
    env = {**os.environ, "DAGSTER_HOME": str(home), **ENV}
    old = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            instance.add_dynamic_partitions("databases", ["ecommerce", "b2b_saas"])
    finally:
        if old is None:
            os.environ.pop("DAGSTER_HOME", None)
        else:
            os.environ["DAGSTER_HOME"] = old
    log = open(home / "webserver.log", "wb")  # noqa: SIM115 - closed in teardown
    cmd = [sys.executable, "-m", "dagster_webserver", "-w", "workspace.yaml", "-h", "127.0.0.1"]

    def launch(port: int) -> subprocess.Popen:
        return subprocess.Popen(
            [*cmd, "-p", str(port)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
        )

    def stop(proc: subprocess.Popen) -> None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    try:
        proc, base = start_webserver(launch, home / "webserver.log", "webserver", START_TIMEOUT, 0.5, stop)
        try:
            yield base
        finally:
            stop(proc)
    finally:
        log.close()


def test_graphql_lists_our_partitioned_assets_and_checks(webserver: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:  # the code location may still be loading right after /server_info answers
        body = _post(f"{webserver}/graphql", QUERY)
        nodes = (body.get("data") or {}).get("assetNodes") or []
        if nodes or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert "errors" not in body, body["errors"]
    by_key = {"/".join(n["assetKey"]["path"]): n for n in nodes}
    assert set(by_key) >= ASSETS
    for name in ASSETS:
        node = by_key[name]
        assert node["groupName"] == "index"
        assert node["partitionDefinition"]["type"] == "DYNAMIC"
        assert node["partitionDefinition"]["name"] == "databases"
        assert sorted(node["partitionKeys"]) == ["b2b_saas", "ecommerce"]
    checks = {c["name"] for c in by_key["published_index"]["assetChecksOrError"]["checks"]}
    assert checks == {name for name, _ in CHECKS}
    (repo,) = body["data"]["repositoriesOrError"]["nodes"]
    assert repo["location"]["name"] == "schemarag.pipelines.definitions"
    assert {s["name"] for s in repo["schedules"]} == {"daily_index_build"}
    assert "docs_changed_sensor" in {s["name"] for s in repo["sensors"]}
