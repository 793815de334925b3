"""After ``schemarag build --jobs 2`` of the samples, ``schemarag ui`` shows what was built.

Two real processes: the CLI build (two partitions fanned out on the multiprocess executor) and
the ``schemarag ui`` command (``dg dev``: webserver + daemon) on a free loopback port,
queried over its GraphQL API as the UI itself does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from webserver_support import ENV, start_webserver

from schemarag.assets.lib.artifact_store import read_current
from schemarag.assets.published_index import CHECKS

pytestmark = pytest.mark.slow  # two CLI processes and dg dev: minutes on a shared 2-core machine

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "schemas"
DBS = ["b2b_saas", "ecommerce"]
START_TIMEOUT = 180.0
UI = [sys.executable, "-m", "schemarag.cli", "ui"]
RUNS = "{ runsOrError { ... on Runs { results { runId jobName status tags { key value } } } } }"
PARTITIONS = '{ assetNodes(assetKeys: [{path: ["published_index"]}]) { partitionKeys } }'
MATERIALIZATIONS = """{ assetOrError(assetKey: {path: ["published_index"]}) { ... on Asset {
  assetMaterializations(limit: 10) { partition runId metadataEntries { label
    ... on IntMetadataEntry { intValue } ... on TextMetadataEntry { text }
    ... on FloatMetadataEntry { floatValue } } } } } }"""
CHECK_RUNS = (
    '{ assetCheckExecutions(assetKey: {path: ["published_index"]}, checkName: "%s", limit: 10)'
    " { runId status } }"
)


def _post(base: str, query: str) -> dict:
    req = urllib.request.Request(
        f"{base}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        body = json.loads(resp.read())
    assert "errors" not in body, body["errors"]
    return body["data"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """``schemarag build --jobs 2`` of both samples into a temporary artifacts folder."""
    tmp = tmp_path_factory.mktemp("ui")
    artifacts = tmp / "artifacts"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    cmd = [sys.executable, "-m", "schemarag.cli", "build", "--jobs", "2", "--quiet"]
    proc = subprocess.run(
        [*cmd, "--data", str(SAMPLES), "--artifacts", str(artifacts)],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return artifacts, {"stdout": proc.stdout}


@pytest.fixture(scope="module")
def ui(built: tuple[Path, dict]) -> Iterator[str]:
    artifacts, _ = built
    env = {**{k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}, **ENV}
    log_path = artifacts.parent / "ui.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed in teardown

    def launch(port: int) -> subprocess.Popen:
        return subprocess.Popen(
            [*UI, "--artifacts", str(artifacts), "--data", str(SAMPLES), "--port", str(port)],
            cwd=artifacts.parent,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: teardown can stop dg dev's children too
        )

    def kill_group(proc: subprocess.Popen) -> None:  # a start that failed: nothing is checked
        if _group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    try:
        proc, base = start_webserver(launch, log_path, "schemarag ui", START_TIMEOUT, 1.0, kill_group)
    except BaseException:
        log.close()
        raise
    try:
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)  # forwarded to dg dev as SIGINT, which stops its services
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError("schemarag ui did not stop on SIGTERM") from None
        finally:
            log.close()
        deadline = time.monotonic() + 30
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        leftover = _group_alive(proc.pid)
        if leftover:
            os.killpg(proc.pid, signal.SIGKILL)
        assert not leftover, "dg dev left webserver/daemon/code-server processes behind after SIGTERM"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_jobs_2_builds_and_publishes_both_databases(built: tuple[Path, dict]) -> None:
    artifacts, out = built
    for db in DBS:
        assert read_current(artifacts / db), db
        assert f"{db:<24} built" in out["stdout"]
    assert (artifacts.parent / ".dagster" / "dagster.yaml").is_file()
    assert not list(artifacts.parent.glob(".tmp_dagster_home_*"))


def test_ui_shows_named_runs_partitions_materializations_and_checks(ui: str) -> None:
    runs = _post(ui, RUNS)["runsOrError"]["results"]
    assert sorted(r["jobName"] for r in runs) == ["build_index", "build_index"]
    assert all(r["status"] == "SUCCESS" for r in runs)
    partition_of = {r["runId"]: {t["key"]: t["value"] for t in r["tags"]}["dagster/partition"] for r in runs}
    assert sorted(partition_of.values()) == DBS

    [node] = _post(ui, PARTITIONS)["assetNodes"]
    assert sorted(node["partitionKeys"]) == DBS

    mats = _post(ui, MATERIALIZATIONS)["assetOrError"]["assetMaterializations"]
    assert sorted(m["partition"] for m in mats) == DBS
    for m in mats:
        meta = {
            e["label"]: e.get("intValue", e.get("text", e.get("floatValue"))) for e in m["metadataEntries"]
        }
        assert meta["chunks"] > 0 and len(meta["key"]) == 16 and meta["seconds"] >= 0
        assert partition_of[m["runId"]] == m["partition"]

    for name, _ in CHECKS:
        execs = _post(ui, CHECK_RUNS % name)["assetCheckExecutions"]
        assert sorted(e["runId"] for e in execs) == sorted(partition_of), name
        assert {e["status"] for e in execs} == {"SUCCEEDED"}, name
