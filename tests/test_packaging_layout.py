"""No folder in the repository root shadows the installed ``schemarag`` package.

A query service's Dockerfile does ``COPY . /app; WORKDIR /app; pip install .`` and then starts
Python in ``/app``, where the working directory comes first on ``sys.path``. When the facade lived
in a root folder named ``schemarag/``, that folder won and ``schemarag.runtime`` was not found.
The fast test checks the editable install the suite runs in, from the root; the slow one builds a
real wheel, installs it in a fresh venv and starts a child interpreter in the repository root.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import json, schemarag, schemarag.runtime; from schemarag import Retriever; "
    "print(json.dumps({'facade': schemarag.__file__, 'runtime': schemarag.runtime.__file__, "
    "'retriever': Retriever.__module__}))"
)


def _probe(python: str | Path, cwd: Path) -> dict[str, str]:
    import json

    proc = subprocess.run([str(python), "-c", PROBE], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_no_root_folder_is_named_like_an_installed_package() -> None:
    installed = {"schemarag", "runtime", "assets", "pipelines", "tools"}
    shadowing = [p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    # runtime/ assets/ pipelines/ tools/ are the design card's folders; they install under
    # schemarag.*, so a bare `import runtime` is never what the code does (test_import_direction).
    assert "schemarag" not in shadowing
    assert set(shadowing) <= installed - {"schemarag"}


def test_editable_install_imports_from_the_repository_root() -> None:
    found = _probe(sys.executable, ROOT)
    assert Path(found["facade"]).is_relative_to(ROOT / "src" / "schemarag")
    assert Path(found["runtime"]).is_relative_to(ROOT / "runtime")
    assert found["retriever"].startswith("schemarag.runtime.")


def test_license_metadata_names_the_license_file() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    for name in project["license-files"]:
        assert "Apache License" in (ROOT / name).read_text()[:200]
    assert any(c.startswith("Programming Language :: Python :: 3.11") for c in project["classifiers"])


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_imports_from_the_repository_root(tmp_path: Path) -> None:
    """Build the wheel as pip does, install it (with its dependencies) in a new venv, then import
    from the repository root: the installed package must win. The build must be quiet and leave
    no build/ or .egg-info behind."""
    before = {p.name for p in ROOT.iterdir()}
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    noise = [line for line in built.stderr.splitlines() if line and not line.startswith("WARNING: Location")]
    assert noise == [], noise
    assert {p.name for p in ROOT.iterdir()} == before  # no build/, no *.egg-info
    (wheel,) = wheels.glob("schemarag-*.whl")

    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert site != sysconfig.get_paths()["purelib"]
    for cwd in (ROOT, tmp_path):
        found = _probe(python, cwd)
        assert Path(found["facade"]).is_relative_to(site), (cwd, found)
        assert Path(found["runtime"]).is_relative_to(site), (cwd, found)
