"""``--artifacts s3://bucket/prefix``: publish to a real S3 server (moto) and search from a local cache.

The server is moto's standalone S3 on a loopback port, a separate process spoken to over HTTP by
pyarrow's S3 client, exactly like MinIO or AWS would be. ``moto_server -p 0`` lets the kernel pick
the port when it binds, and the URL is read from the line it prints once bound (`` * Running on
http://127.0.0.1:PORT``), so no other process can take the port between choosing and binding it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemarag.cli import main as cli_main
from schemarag.runtime.artifact.remote import filesystem, local_artifacts, read_remote_current
from schemarag.runtime.search.retriever import Retriever

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "schemas"
BUCKET = "schemarag-test"


_BOUND = re.compile(rb"Running on (http://127\.0\.0\.1:\d+)")
_ANSI = re.compile(rb"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or shutil.which("moto_server")
    if server is None:
        pytest.skip("moto_server not installed: pip install -e '.[test]'")
    log_path = tmp_path_factory.mktemp("moto") / "moto.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", "0"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        url = None
        while True:
            if url is None:
                found = _BOUND.search(_ANSI.sub(b"", log_path.read_bytes()))
                url = found.group(1).decode() if found else None
            if url is not None:
                try:
                    urllib.request.urlopen(f"{url}/moto-api/", timeout=2)
                    break
                except OSError:
                    pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"moto_server did not start (exit {proc.poll()}): {log_path.read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.fixture
def s3_env(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Credentials and endpoint as a deployment sets them; a fresh bucket prefix per test."""
    for var, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "SCHEMARAG_S3_ENDPOINT": s3_endpoint,
        "SCHEMARAG_CACHE_DIR": str(tmp_path / "cache"),
    }.items():
        monkeypatch.setenv(var, value)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    import pyarrow.fs as pafs

    admin = pafs.S3FileSystem(
        endpoint_override=s3_endpoint.removeprefix("http://"), scheme="http", allow_bucket_creation=True
    )
    admin.create_dir(BUCKET)  # the operator's job, once; the build never creates buckets
    return f"s3://{BUCKET}/{tmp_path.name}"


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.rglob("*")
    }


def test_build_publishes_to_s3_and_the_runtime_searches_a_cached_copy(
    s3_env: str, data_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, append_note, capsys
) -> None:
    uri = s3_env
    assert cli_main(["build", "--db", "ecommerce", "--data", str(data_copy), "--artifacts", uri]) == 0
    capsys.readouterr()
    fs, base = filesystem(uri)
    key = read_remote_current(fs, f"{base}/ecommerce")
    assert key, "CURRENT object published"
    import pyarrow.fs as pafs

    remote = {
        i.path.removeprefix(f"{base}/ecommerce/{key}/")
        for i in fs.get_file_info(pafs.FileSelector(f"{base}/ecommerce/{key}", recursive=True))
        if i.type == pafs.FileType.File
    }
    assert {"manifest.json", "chunks.parquet", "embeddings.npy", "tables.parquet"} <= remote

    # The runtime on another machine: an empty cache, the bucket as the only source.
    monkeypatch.setenv("SCHEMARAG_CACHE_DIR", str(tmp_path / "reader-cache"))
    Retriever.clear_cache()
    r = Retriever.open("ecommerce", artifacts=uri)
    cached = local_artifacts(uri) / "ecommerce"
    assert r.root == cached.resolve() and (cached / key / "manifest.json").is_file()
    assert r.snapshot().key == key
    res = r.search("orders placed by a customer", top_k=5)
    assert "orders" in res.metadata.tables_included

    # Immutable versions: reopening finds the key in the cache and downloads nothing again.
    before = _files(cached / key)
    Retriever.clear_cache()
    assert Retriever.open("ecommerce", artifacts=uri).snapshot().key == key
    assert _files(cached / key) == before

    # A docs edit republishes: a new key and CURRENT object; a fresh open fetches that version.
    append_note(data_copy, "ecommerce", "orders", "- Orders ship from the Rotterdam warehouse.")
    assert cli_main(["build", "--db", "ecommerce", "--data", str(data_copy), "--artifacts", uri]) == 0
    new_key = read_remote_current(fs, f"{base}/ecommerce")
    assert new_key and new_key != key
    Retriever.clear_cache()
    assert Retriever.open("ecommerce", artifacts=uri).snapshot().key == new_key
    assert (cached / "CURRENT").read_text(encoding="utf-8").strip() == new_key
    Retriever.clear_cache()


def test_an_unpublished_remote_database_is_a_clear_error(s3_env: str) -> None:
    from schemarag.runtime.core.errors import ArtifactNotFoundError

    Retriever.clear_cache()
    with pytest.raises(ArtifactNotFoundError, match="no published index for database 'ecommerce'"):
        Retriever.open("ecommerce", artifacts=s3_env)


def test_artifacts_uri_from_the_environment_is_honoured(s3_env: str, tmp_path: Path) -> None:
    env = {**os.environ, "SCHEMARAG_ARTIFACTS": s3_env}
    local = local_artifacts(None, env=env)
    assert local == local_artifacts(s3_env) and local.parents[1] == tmp_path / "cache" / "remote"
    assert local_artifacts(f"{s3_env}-other") != local, "each location has its own cache folder"
