"""The first hour of a new user, driven through the real ``schemarag`` console script.

Every step runs the installed entry point in a subprocess, as a person at a terminal would:
misspelt names get a "did you mean", a database built for a tenant is found from the default
namespace with the exact flag to add, ``build --tenant`` builds only that tenant's databases,
a build ends with the next command to try, and on a terminal the build draws progress bars
(stage by stage, embedding with chunks/s) while piped output stays free of them.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest

from schemarag import __version__

REPO = Path(__file__).resolve().parents[1]
SCHEMARAG = str(Path(sys.executable).with_name("schemarag"))
QUESTION = "How many orders were placed last month?"


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([SCHEMARAG, *args], cwd=cwd, capture_output=True, text=True, timeout=900)


def cli_on_terminal(*args: str) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (so it is a TTY); returns (rc, stdout, terminal text)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))  # a real terminal's size
    proc = subprocess.Popen([SCHEMARAG, *args], cwd=REPO, stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:  # keep reading so tqdm never blocks on a full pty buffer
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=900)
    reader.join(timeout=30)
    os.close(master)
    return proc.returncode, out, b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """ecommerce (no tenant) plus ``shop`` of tenant ``acme``; no live datasources."""
    root = tmp_path_factory.mktemp("first_hour")
    data = root / "schemas"
    data.mkdir()
    shutil.copy(REPO / "data/schemas/ecommerce.json", data / "ecommerce.json")
    shutil.copytree(REPO / "data/schemas/ecommerce/docs", data / "ecommerce/docs")
    shop = json.loads((data / "ecommerce.json").read_text(encoding="utf-8"))
    shop.update(name="shop", tenant="acme")
    (data / "shop.json").write_text(json.dumps(shop), encoding="utf-8")
    (root / "datasources.yaml").write_text(
        "datasources:\n  - {name: live_shop, kind: sqlite, tenant: demo, connection: shop.sqlite}\n",
        encoding="utf-8",
    )
    return {
        "data": str(data),
        "artifacts": str(root / "artifacts"),
        "datasources": str(root / "none.yaml"),  # missing file: no live datasources
        "yaml": str(root / "datasources.yaml"),
    }


@pytest.fixture(scope="module")
def tenant_build(workspace: dict[str, str]) -> tuple[int, str, str]:
    w = workspace
    return cli_on_terminal(
        "build", "--tenant", "acme", "--data", w["data"], "--artifacts", w["artifacts"],
        "--datasources", w["datasources"],
    )  # fmt: skip


@pytest.fixture(scope="module")
def default_build(workspace: dict[str, str], tenant_build) -> subprocess.CompletedProcess:
    w = workspace
    return cli("build", "--db", "ecommerce", "--data", w["data"], "--artifacts", w["artifacts"],
               "--datasources", w["datasources"])  # fmt: skip


def hint_of(stderr: str) -> str:
    """The command of the last ``next:`` line, as printed."""
    return [ln for ln in stderr.splitlines() if ln.startswith("next: ")][-1].removeprefix("next: ")


def run_as_typed(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """A printed hint through a shell, verbatim, with the installed ``schemarag`` first on PATH."""
    env = {**os.environ, "PATH": f"{Path(SCHEMARAG).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for name in ("SCHEMARAG_DATA", "SCHEMARAG_ARTIFACTS"):
        env.pop(name, None)  # the flags in the hint must be enough
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def where(w: dict[str, str]) -> list[str]:
    return ["--data", w["data"], "--artifacts", w["artifacts"]]


def test_version() -> None:
    res = cli("--version")
    assert res.returncode == 0
    assert res.stdout.strip() == f"schemarag {__version__}"


def test_misspelt_command_suggests_the_command() -> None:
    res = cli("retreive", "--db", "ecommerce", QUESTION)
    assert res.returncode == 2
    assert "invalid choice: 'retreive'; did you mean 'retrieve'?" in res.stderr


def test_misspelt_subcommand_choice_suggests_it() -> None:
    res = cli("docs", "int")
    assert res.returncode == 2
    assert "did you mean 'init'?" in res.stderr


def test_misspelt_datasource_suggests_it(workspace: dict[str, str]) -> None:
    res = cli("docs", "init", "--datasource", "live_shp", "--datasources", workspace["yaml"])
    assert res.returncode == 2
    assert "no datasource named 'live_shp'; did you mean 'live_shop'?" in res.stderr


def test_tenant_build_builds_only_that_tenant_with_progress(tenant_build: tuple[int, str, str]) -> None:
    rc, out, terminal = tenant_build
    assert rc == 0, terminal
    assert "skipped 1 database(s) not of tenant 'acme': ecommerce" in out
    assert "shop " in out and "built" in out and "tenant=acme" in out
    assert "ecommerce " not in out.replace("tenant 'acme': ecommerce", "")
    # progress bars on the terminal: stages per database, then embedding with a rate
    assert "[1/1] shop: chunk_embeddings" in terminal
    assert "6/6 stages" in terminal and "finished" in terminal
    assert "embedding" in terminal and "chunk/s" in terminal
    assert "next: schemarag retrieve --data " in terminal and ' --db shop --tenant acme "' in terminal


def test_build_next_step_and_no_bars_when_piped(default_build: subprocess.CompletedProcess) -> None:
    assert default_build.returncode == 0, default_build.stderr
    assert "ecommerce" in default_build.stdout and "built" in default_build.stdout
    assert ' --db ecommerce "' in hint_of(default_build.stderr)
    assert "stages |" not in default_build.stderr and "chunk/s" not in default_build.stderr


def test_unknown_tenant_for_build_suggests_one(workspace: dict[str, str], tenant_build) -> None:
    res = cli("build", "--tenant", "acmee", *where(workspace), "--datasources", workspace["datasources"])
    assert res.returncode == 2
    assert "no database belongs to tenant 'acmee'" in res.stderr and "did you mean 'acme'?" in res.stderr


def test_misspelt_database_suggests_it(workspace: dict[str, str], default_build) -> None:
    res = cli("retrieve", "--db", "ecomerce", *where(workspace), QUESTION)
    assert res.returncode == 2
    assert (
        f"no index for 'ecomerce' in the default namespace of {workspace['artifacts']}; "
        "did you mean 'ecommerce'?" in res.stderr
    )
    res = cli("chunks", "--db", "ecomerce", "--data", workspace["data"])
    assert res.returncode == 2 and "schema file not found; did you mean 'ecommerce'?" in res.stderr
    res = cli("build", "--db", "ecomerce", *where(workspace), "--datasources", workspace["datasources"])
    assert res.returncode == 1
    assert "did you mean 'ecommerce'?" in res.stdout


def test_index_under_another_tenant_names_the_flag(workspace: dict[str, str], tenant_build) -> None:
    res = cli("retrieve", "--db", "shop", *where(workspace), QUESTION)
    assert res.returncode == 2
    assert (
        f"no index for 'shop' in the default namespace of {workspace['artifacts']}; "
        "it exists under tenant 'acme': add --tenant acme" in res.stderr
    )
    res = cli("generate", "--db", "shop", "--prompt-only", *where(workspace), QUESTION)
    assert res.returncode == 2 and "it exists under tenant 'acme': add --tenant acme" in res.stderr
    res = cli("retrieve", "--db", "shop", "--tenant", "acm", *where(workspace), QUESTION)
    assert res.returncode == 2 and "did you mean 'acme'?" in res.stderr
    ok = cli("retrieve", "--db", "shop", "--tenant", "acme", *where(workspace), QUESTION)
    assert ok.returncode == 0, ok.stderr
    assert "orders" in ok.stdout


def test_retrieve_debug_reports_startup_apart(workspace: dict[str, str], default_build) -> None:
    res = cli("retrieve", "--db", "ecommerce", "--debug", *where(workspace), QUESTION)
    assert res.returncode == 0, res.stderr
    startup = next(ln for ln in res.stdout.splitlines() if ln.startswith("start-up timings"))
    per_query = next(ln for ln in res.stdout.splitlines() if ln.startswith("per-query timings"))
    assert "open_index=" in startup and "load_model=" in startup
    assert "embed=" in per_query and "load_model" not in per_query
    payload = json.loads(
        cli("retrieve", "--db", "ecommerce", "--debug", "--json", *where(workspace), QUESTION).stdout
    )
    assert set(payload["startup_ms"]) == {"open_index", "load_model"}


def test_source_url_is_relative_to_the_docs_folder(workspace: dict[str, str], default_build) -> None:
    res = cli("retrieve", "--db", "ecommerce", "--json", *where(workspace), QUESTION)
    assert res.returncode == 0, res.stderr
    urls = [c["source_url"] for c in json.loads(res.stdout)["chunks"] if c["source_url"]]
    assert urls and all(u.endswith(".md") and "/" not in u for u in urls), urls  # no local path


def test_eval_reads_the_bundled_question_files(workspace: dict[str, str], default_build) -> None:
    argv = ["eval", "--questions", "data/questions/ecommerce.jsonl", "--no-baselines", *where(workspace)]
    lines = (REPO / "data/questions/ecommerce.jsonl").read_text(encoding="utf-8").splitlines()
    n = sum(1 for line in lines if line.strip())  # every bundled question is scored, none dropped
    table = cli(*argv)  # a table by default, JSON with --json (the same flag as everywhere)
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith(f"eval: per-db, question, {n} questions")
    assert table.stdout.splitlines()[1].split()[:3] == ["method", "CR@5", "CR@8"]
    res = cli(*argv, "--json")
    assert res.returncode == 0, res.stderr
    payload = json.loads(res.stdout)
    assert payload["questions"] == n and payload["gold_unresolved"] == 0
    assert 0.0 < payload["metrics"]["complete_recall"]["15"] <= 1.0
    old = cli(*argv, "--json", "out.json")  # the old spelling fails and names the fix
    assert old.returncode == 2 and "use --out out.json" in old.stderr


def test_bench_writes_a_chart_and_helps_honestly(workspace: dict[str, str], default_build, tmp_path) -> None:
    chart = tmp_path / "calibration.png"
    res = cli("bench", "calibration", "--db", "ecommerce", "--chart", str(chart), *where(workspace))
    assert res.returncode == 0, res.stderr
    assert f"chart: {chart}" in res.stderr
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    as_json = cli(
        "bench", "calibration", "--db", "ecommerce", "--chart", str(chart), "--json", *where(workspace)
    )
    assert as_json.returncode == 0, as_json.stderr
    assert isinstance(
        json.loads(as_json.stdout), dict | list
    )  # stdout is only the JSON; the table went to stderr
    helps = {b: " ".join(cli("bench", b, "-h").stdout.split()) for b in ("build", "retrieve")}
    assert "--artifacts ARTIFACTS ignored: bench build always builds" in helps["build"]
    assert "ignored" not in helps["retrieve"].split("--artifacts ARTIFACTS", 1)[1].split("--db")[0]


def test_import_ends_with_the_build_command(tmp_path: Path) -> None:
    fixture = REPO / "tests/fixtures/bird_small/tables.json"
    res = cli("import", "bird", "--tables", str(fixture), "--out", str(tmp_path / "schemas"))
    assert res.returncode == 0, res.stderr
    db = res.stdout.split()[0]
    assert f"next: schemarag build --data {tmp_path / 'schemas'} --db {db}" in res.stderr


def test_every_printed_hint_runs_as_typed(tmp_path: Path) -> None:
    """import -> its ``next:`` (a build) -> its ``next:`` (a retrieve), each run verbatim from
    another folder: the hints carry --data/--artifacts and a question from the index's tables."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data, artifacts = tmp_path / "ws" / "schemas", tmp_path / "ws" / "my artifacts"  # a space too
    res = cli("import", "dbt", "--project", str(REPO / "tests/fixtures/dbt_shop"), "--out", str(data),
              "--artifacts", str(artifacts))  # fmt: skip
    assert res.returncode == 0, res.stderr
    db = res.stdout.split()[0]
    build = hint_of(res.stderr)
    assert f"--data {data}" in build and "--artifacts" in build and f"--db {db}" in build, build
    built = run_as_typed(build, elsewhere)
    assert built.returncode == 0, built.stdout + built.stderr
    retrieve = hint_of(built.stderr)
    assert f"--db {db}" in retrieve and "--artifacts" in retrieve, retrieve
    assert "most recent records" not in retrieve  # the index's own tables, not a stock question
    answer = run_as_typed(retrieve, elsewhere)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip(), answer.stderr
    # without --artifacts the same command fails, and says which folder it looked in
    lost = run_as_typed(retrieve.replace(f"--artifacts '{artifacts}'", ""), elsewhere)
    assert lost.returncode == 2 and f"no index for {db!r}" in lost.stderr
    assert f"in the default namespace of {elsewhere / 'artifacts'}" in lost.stderr, lost.stderr


def test_tenant_build_hint_runs_as_typed(workspace: dict[str, str], tenant_build) -> None:
    rc, _, terminal = tenant_build
    assert rc == 0, terminal
    hint = hint_of(terminal)
    res = run_as_typed(hint, REPO)
    assert res.returncode == 0, res.stderr
    assert "orders" in res.stdout
