"""Noticing a new version costs a request one ``stat``; opening and verifying it happens on a
background thread, and a version that fails verification never replaces the one serving."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from tiny_support import current_key

from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.core.errors import ManifestMismatchError
from schemarag.runtime.search.retriever import Retriever

_events: list[tuple[int, str, str]] = []
_on: list[bool] = [False]
_hooked: list[bool] = []


def _hook(event: str, args: tuple) -> None:
    if _on[0] and event in ("open", "os.scandir", "os.listdir"):
        _events.append((threading.get_ident(), event, repr(args)[:160]))


@pytest.fixture
def private(tiny: tuple[Path, Path], tmp_path: Path) -> Path:
    _, artifacts = tiny
    dest = tmp_path / "artifacts"
    for db in ("shop", "shop_a"):
        shutil.copytree(artifacts / db, dest / db)
    return dest


def test_request_threads_only_stat_and_a_bad_version_never_serves(private: Path) -> None:
    if not _hooked:
        sys.addaudithook(_hook)
        _hooked.append(True)
    shop = private / "shop"
    r = Retriever.open("shop", artifacts=private, refresh_seconds=0)
    old = r.search("gold tier customers").metadata.artifact_key
    # publish a "new version" that is another database's index: it must fail verification
    planted = current_key(private / "shop_a")
    shutil.copytree(private / "shop_a" / planted, shop / planted)
    (shop / f"{CURRENT}.tmp").write_text(planted + "\n")
    (shop / f"{CURRENT}.tmp").replace(shop / CURRENT)

    me = threading.get_ident()
    _events.clear()
    _on[0] = True
    try:
        res = r.search("gold tier customers")  # notices the change: starts the load, does not wait
        deadline = time.monotonic() + 60
        while r.last_error is None and time.monotonic() < deadline:
            time.sleep(0.05)
        again = r.search("order totals")
    finally:
        _on[0] = False
    mine = [e for e in _events if e[0] == me]
    assert mine == [], f"the request thread touched files itself: {mine[:3]}"
    assert any(planted in e[2] for e in _events if e[0] != me), "no background load happened"
    assert isinstance(r.last_error, ManifestMismatchError)
    assert res.metadata.artifact_key == old and again.metadata.artifact_key == old
    Retriever.clear_cache()
