"""One request, one index version: searches racing rebuilds and hostile CURRENT flips.

Issue 13 finding 1: a search that scored one version and read chunks from the next returned
wrong chunks or raised IndexError. Here 8 threads search ``b2b_saas`` while it is rebuilt and
republished twice by the real build, and then while ``CURRENT`` flips between the built
versions every few milliseconds. Every result must come entirely from the version its
metadata names: its chunk ids, tables, ranked tables and schema.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from retrieval_support import REPO, build, copy_database_artifacts

from schemarag.runtime.artifact.format import CURRENT, MANIFEST
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.search.retriever import Retriever

THREADS = 8
QUESTIONS = [
    json.loads(line)["question"]
    for line in (REPO / "data" / "questions" / "b2b_saas.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@dataclass
class Observed:
    results: list[tuple[str, frozenset[str], frozenset[str], frozenset[str], int]] = field(
        default_factory=list
    )
    errors: list[str] = field(default_factory=list)


def _search_until(r: Retriever, stop: threading.Event, out: Observed, seed: int) -> None:
    i = seed
    while not stop.is_set():
        q = QUESTIONS[i % len(QUESTIONS)]
        i += 1
        try:
            res = r.search(q, top_k=8, relevance_threshold=0.0, table_budget=5)
            ranked = frozenset(res.ranking.tables) if res.ranking else frozenset()
            names = frozenset(t.name for t in res.schema.tables) if res.schema is not None else frozenset()
            out.results.append(
                (
                    res.metadata.artifact_key,
                    frozenset(c.chunk.chunk_id for c in res.chunks),
                    frozenset(res.tables) | frozenset(res.expanded_tables) | ranked,
                    names,
                    res.metadata.total_chunks_searched,
                )
            )
        except Exception as exc:  # any exception is a failure of the test
            out.errors.append(f"{type(exc).__name__}: {exc}")


def _start(r: Retriever, stop: threading.Event, out: Observed) -> list[threading.Thread]:
    threads = [threading.Thread(target=_search_until, args=(r, stop, out, k * 7)) for k in range(THREADS)]
    for t in threads:
        t.start()
    return threads


def _versions(root: Path) -> dict[str, tuple[frozenset[str], frozenset[str], int]]:
    """Per built version: its chunk ids, table names and chunk count (read from disk)."""
    out = {}
    for folder in root.iterdir():
        if (folder / MANIFEST).is_file() and not folder.name.startswith("."):
            art = IndexArtifact.open(folder)
            ids = frozenset(art.chunk(i).chunk_id for i in range(art.n_chunks))
            out[art.key] = (ids, frozenset(art.table_names), art.n_chunks)
    return out


def _assert_single_version(observed: Observed, versions: dict) -> None:
    assert observed.errors == [], observed.errors[:5]
    assert observed.results
    for key, ids, tables, schema_tables, n_chunks in observed.results:
        assert key in versions, key
        v_ids, v_tables, v_n = versions[key]
        assert ids <= v_ids, f"chunks from another version in a result naming {key}"
        assert tables <= v_tables
        assert n_chunks == v_n
        assert not schema_tables or schema_tables == v_tables


@pytest.fixture(scope="module")
def rebuilt(
    built_artifacts: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Observed, list[str]]:
    """Search with 8 threads while b2b_saas is rebuilt and republished twice."""
    base = tmp_path_factory.mktemp("swap")
    arts = copy_database_artifacts(built_artifacts, "b2b_saas", base / "artifacts")
    data = base / "schemas"
    data.mkdir()
    shutil.copy(REPO / "data" / "schemas" / "b2b_saas.json", data / "b2b_saas.json")
    shutil.copytree(REPO / "data" / "schemas" / "b2b_saas" / "docs", data / "b2b_saas" / "docs")
    docs = data / "b2b_saas" / "docs"
    root = arts / "b2b_saas"
    keys = [(root / CURRENT).read_text().strip()]

    r = Retriever.open("b2b_saas", artifacts=arts, refresh_seconds=0)
    stop, observed = threading.Event(), Observed()
    threads = _start(r, stop, observed)
    try:
        # version 2: early docs removed, so chunk positions shift (a mixed read shows)
        saved = {n: (docs / n).read_text(encoding="utf-8") for n in ("accounts.md", "agents.md")}
        for name in saved:
            (docs / name).unlink()
        build(["b2b_saas"], data, arts)
        keys.append((root / CURRENT).read_text().strip())
        time.sleep(1.0)
        # version 3: those docs back, plus a note
        for name, text in saved.items():
            (docs / name).write_text(text, encoding="utf-8")
        with open(docs / "invoices.md", "a", encoding="utf-8") as fh:
            fh.write("\n\n## Notes\n\nZorblax invoices are settled by carrier pigeon.\n")
        build(["b2b_saas"], data, arts)
        keys.append((root / CURRENT).read_text().strip())
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not any(k == keys[-1] for k, *_ in observed.results[-50:]):
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return root, observed, keys


def test_searches_during_two_republishes_each_read_one_version(rebuilt) -> None:
    root, observed, keys = rebuilt
    assert len(set(keys)) == 3, keys
    versions = _versions(root)
    assert set(keys) <= set(versions)
    _assert_single_version(observed, versions)
    served = {k for k, *_ in observed.results}
    assert keys[-1] in served  # the last republish was picked up while searching
    assert len(served) >= 2


def test_hostile_current_flips_never_mix_versions(rebuilt) -> None:
    """CURRENT flips between the built versions every few ms while 8 threads search."""
    root, _, keys = rebuilt
    versions = _versions(root)
    flip_keys = [k for k in dict.fromkeys(keys) if k in versions]
    assert len(flip_keys) >= 2
    Retriever.clear_cache()
    r = Retriever.open("b2b_saas", artifacts=root.parent, refresh_seconds=0)
    stop, observed = threading.Event(), Observed()

    def flip() -> None:
        i = 0
        while not stop.is_set():
            tmp = root / f"{CURRENT}.flip"
            tmp.write_text(flip_keys[i % len(flip_keys)] + "\n", encoding="utf-8")
            os.replace(tmp, root / CURRENT)
            i += 1
            time.sleep(0.003)

    flipper = threading.Thread(target=flip)
    threads = _start(r, stop, observed)
    flipper.start()
    time.sleep(6.0)
    stop.set()
    flipper.join()
    for t in threads:
        t.join()
    _assert_single_version(observed, versions)
    assert len({k for k, *_ in observed.results}) >= 2, "the flips were never served: nothing was tested"
