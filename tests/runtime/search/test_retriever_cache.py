"""SDR-REQ-07 caching: no file I/O on repeated requests, hot pick-up of a new CURRENT, invalidation."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from retrieval_support import REPO, build, copy_database_artifacts, current_folder

from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.core.embedding.embedder import ModelSpec
from schemarag.runtime.core.embedding.model_files import default_model_dir
from schemarag.runtime.core.errors import ManifestMismatchError
from schemarag.runtime.search.retriever import Retriever

# sys.addaudithook cannot be removed, so one hook is installed per process and records only
# while a test switches it on.
WATCHED = {"open", "os.listdir", "os.scandir", "shutil.copyfile", "mmap.__new__"}
_recording: dict[str, object] = {"on": False, "events": []}
_installed: list[bool] = []


def _hook(event: str, args: tuple) -> None:
    if _recording["on"] and event in WATCHED:
        _recording["events"].append((event, repr(args)[:200]))  # type: ignore[union-attr]


class FileIORecorder:
    def __enter__(self) -> list[tuple[str, str]]:
        if not _installed:
            sys.addaudithook(_hook)
            _installed.append(True)
        _recording["events"] = []
        _recording["on"] = True
        return _recording["events"]  # type: ignore[return-value]

    def __exit__(self, *exc: object) -> None:
        _recording["on"] = False


def test_recorder_sees_file_opens(tmp_path: Path) -> None:
    """The hook itself works: an open() inside the window is recorded."""
    with FileIORecorder() as events:
        (tmp_path / "x.txt").write_text("x")
    assert any(e == "open" for e, _ in events)


def test_second_request_does_no_file_io(built_artifacts: Path, tmp_path: Path) -> None:
    arts = copy_database_artifacts(built_artifacts, "ecommerce", tmp_path / "artifacts")
    first = Retriever.open("ecommerce", artifacts=arts, refresh_seconds=0)
    first.search("Show me all orders from last month")  # loads the model, maps the index
    with FileIORecorder() as events:
        again = Retriever.open("ecommerce", artifacts=arts, refresh_seconds=0)
        res = again.search("Which users have placed the most orders?", debug=True)
        again.search("orders by status", top_k=3, relevance_threshold=0.1)
    assert again is first
    assert res.chunks
    assert events == [], events


def test_index_arrays_are_memory_mapped(ecommerce: Retriever) -> None:
    art = ecommerce.artifact
    for arr in (art.embeddings, art.bm25_data, art.bm25_indices, art.bm25_indptr, art.bm25_idf):
        # a plain ndarray view over the mapping (the reader drops the memmap subclass, not the mmap)
        assert isinstance(arr, np.memmap) or isinstance(arr.base, np.memmap), type(arr)
    assert art.embeddings.shape == (art.n_chunks, 384)


def test_open_returns_the_same_cached_instance(built_artifacts: Path) -> None:
    a = Retriever.open("ecommerce", artifacts=built_artifacts)
    b = Retriever.open("ecommerce", artifacts=str(built_artifacts))
    c = Retriever.open("ecommerce", artifacts=built_artifacts / ".")
    assert a is b is c
    assert Retriever.open("b2b_saas", artifacts=built_artifacts) is not a


def _edit_orders_doc(data: Path) -> None:
    doc = data / "ecommerce" / "docs" / "orders.md"
    text = doc.read_text(encoding="utf-8")
    text = text.replace(
        "## Notes\n",
        "## Notes\n\nThe zorblax marker flags orders delivered by carrier pigeon (zorblax deliveries).\n",
        1,
    )
    assert "zorblax" in text
    doc.write_text(text, encoding="utf-8")


def test_new_current_is_picked_up_without_restart(built_artifacts: Path, tmp_path: Path) -> None:
    arts = copy_database_artifacts(built_artifacts, "ecommerce", tmp_path / "artifacts")
    data = tmp_path / "schemas"
    data.mkdir()
    shutil.copy(REPO / "data" / "schemas" / "ecommerce.json", data / "ecommerce.json")
    shutil.copytree(REPO / "data" / "schemas" / "ecommerce" / "docs", data / "ecommerce" / "docs")

    r = Retriever.open("ecommerce", artifacts=arts, refresh_seconds=0)
    old_key = r.search("orders").metadata.artifact_key
    before = r.search("zorblax pigeon deliveries", relevance_threshold=0.0, top_k=3)
    assert not any("zorblax" in c.chunk.text for c in before.chunks)

    _edit_orders_doc(data)
    build(["ecommerce"], data, arts)
    new_key = (arts / "ecommerce" / CURRENT).read_text().strip()
    assert new_key != old_key

    # The new version is opened and verified off the request path: requests keep being
    # answered (from the old version) until it is swapped in.
    deadline = time.monotonic() + 120
    after = r.search("zorblax pigeon deliveries")
    while after.metadata.artifact_key != new_key and time.monotonic() < deadline:
        assert after.metadata.artifact_key == old_key
        time.sleep(0.05)
        after = r.search("zorblax pigeon deliveries")
    assert after.metadata.artifact_key == new_key
    assert after.chunks and "zorblax" in after.chunks[0].chunk.text
    assert after.chunks[0].chunk.table == "orders"
    assert Retriever.open("ecommerce", artifacts=arts) is r  # same process, same instance


def test_different_model_name_is_a_manifest_mismatch(built_artifacts: Path) -> None:
    Retriever.open("ecommerce", artifacts=built_artifacts)  # the default model is fine
    other = "BAAI/bge-small-en-v1.5"  # not in the catalogue: it needs its folder (here the default's files)
    spec = ModelSpec(name=other, model_dir=str(default_model_dir()))
    with pytest.raises(ManifestMismatchError) as info:
        Retriever.open("ecommerce", artifacts=built_artifacts, model=spec)
    msg = str(info.value)
    assert other in msg and "sentence-transformers/all-MiniLM-L6-v2" in msg


def test_different_model_dimension_is_a_manifest_mismatch(built_artifacts: Path) -> None:
    with pytest.raises(ManifestMismatchError) as info:
        Retriever.open("ecommerce", artifacts=built_artifacts, model=ModelSpec(dimension=768))
    assert "768" in str(info.value) and "384" in str(info.value)


def test_changed_tokenizer_config_is_a_manifest_mismatch(built_artifacts: Path, tmp_path: Path) -> None:
    arts = copy_database_artifacts(built_artifacts, "ecommerce", tmp_path / "artifacts")
    manifest_path = current_folder(arts, "ecommerce") / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["params"]["tokenizer"]["version"] = 1
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(ManifestMismatchError, match="tokenizer"):
        Retriever.open("ecommerce", artifacts=arts)
