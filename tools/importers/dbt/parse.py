"""``import dbt --parse``: let dbt itself read the project, then import its manifest.

``dbt deps`` (when the project declares packages that are not installed) and ``dbt parse`` need
no warehouse connection: they resolve every package macro, ``ref`` and config as dbt does and
write ``target/manifest.json``, which manifest mode reads. dbt is the user's own install (its
adapter, its version); schemarag does not depend on it, so without ``dbt`` on PATH this is one
error line naming what to do instead.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.dbt.project import _load_yaml

TIMEOUT_S = 900  # a large project parses in a minute; `dbt deps` may download packages


def _project_setting(project: Path, key: str, default: str) -> str:
    data = _load_yaml(project / "dbt_project.yml", [])  # bounded, as the import reads it
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() else default


def _needs_deps(project: Path) -> bool:
    """Packages declared, and the install folder missing or empty."""
    if not any((project / f).is_file() for f in ("packages.yml", "dependencies.yml")):
        return False
    installed = project / _project_setting(project, "packages-install-path", "dbt_packages")
    return not installed.is_dir() or not any(installed.iterdir())


def _run(dbt: str, command: str, project: Path) -> None:
    args = [dbt, command]
    if (project / "profiles.yml").is_file():  # the project's own profile; else dbt's default lookup
        args += ["--profiles-dir", str(project)]
    try:
        done = subprocess.run(
            args, cwd=project, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise ImportFormatError(f"`dbt {command}` in {project} ran over {TIMEOUT_S}s; stopped") from None
    except OSError as exc:
        raise ImportFormatError(f"`dbt {command}` in {project} could not start: {exc}") from None
    if done.returncode != 0:
        said = [ln.strip() for ln in (done.stdout + "\n" + done.stderr).splitlines() if ln.strip()]
        last = said[-1] if said else "no output"
        raise ImportFormatError(f"`dbt {command}` in {project} failed (exit {done.returncode}): {last}")


def dbt_parse(project: Path, progress: Callable[[str], None] | None = None) -> Path:
    """Run ``dbt deps`` (if needed) and ``dbt parse`` in ``project``; the manifest it wrote."""
    dbt = shutil.which("dbt")
    if dbt is None:
        raise ImportFormatError(
            "--parse runs dbt, and `dbt` is not on PATH: install dbt-core with the project's adapter, "
            "or run `dbt parse` yourself and pass --manifest target/manifest.json"
        )
    if not (project / "dbt_project.yml").is_file():
        raise ImportFormatError(f"{project}: no dbt_project.yml; --parse needs a dbt project folder")
    for command in (["deps"] if _needs_deps(project) else []) + ["parse"]:
        if progress:
            progress(f"running `dbt {command}` in {project}")
        _run(dbt, command, project)
    manifest = project / _project_setting(project, "target-path", "target") / "manifest.json"
    if not manifest.is_file():
        raise ImportFormatError(f"`dbt parse` in {project} wrote no {manifest}")
    return manifest
