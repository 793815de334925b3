"""Find a dbt project's files without ever leaving the folder the user named.

``dbt_project.yml`` names folders (``model-paths: ["../../shared"]``), folders hold symlinks
(``models/leak.sql -> /etc/passwd``, ``models/team -> /home/other/project``) and packages sit in
``dbt_packages/`` (or ``packages-install-path``). Any of these may point outside the project; a
file read from there would land in the index and be served to tenants (issue 23). Every folder
and file goes through :func:`~schemarag.tools.importers.safe_paths.inside`, so it is resolved
and refused, with exactly one warning naming it, when it resolves outside the root.

Symlinks that stay inside the project are followed (a shared ``models/common`` linked into two
folders is fine); each real file is read once however many names lead to it.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "models").mkdir()
    >>> _ = (root / "models" / "a.sql").write_text("select 1")
    >>> walker = ProjectWalker(root)
    >>> [p.name for p in walker.files([walker.folder("../elsewhere", "model-paths")], (".sql",))]
    []
    >>> [p.name for p in walker.files([walker.folder("models", "model-paths")], (".sql",))]
    ['a.sql']
    >>> len(walker.warnings), "outside" in walker.warnings[0]
    (1, True)
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from schemarag.tools.importers.safe_paths import inside

# Folders dbt itself writes or that hold other tools' files; never project sources.
SKIP_DIRS = frozenset({"target", "dbt_packages", "dbt_modules", "logs", ".git", "node_modules", ".venv"})


class ProjectWalker:
    """The project root, the warnings so far, and the paths already refused (one warning each)."""

    def __init__(self, root: Path, warnings: list[str] | None = None, skip: Iterable[str] = ()) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.warnings = warnings if warnings is not None else []
        self.skip = SKIP_DIRS | set(skip)
        self._refused: set[Path] = set()

    def check(self, path: Path, what: str = "file") -> Path | None:
        """``path`` resolved when it is inside the project; else None and (once) a warning."""
        key = Path(os.path.abspath(path))
        if key in self._refused:
            return None
        scratch: list[str] = []
        real = inside(self.root, path, scratch, what)
        if real is None:
            self._refused.add(key)
            self.warnings.extend(scratch)
        return real

    def folder(self, relative: str, key: str) -> Path | None:
        """A folder named in ``dbt_project.yml`` (``model-paths`` entry...), or None if it leaves."""
        return self.check(self.root / relative, f"{key} entry {relative!r}")

    def files(self, folders: Iterable[Path | None], suffixes: tuple[str, ...]) -> list[Path]:
        """Files under ``folders`` with one of ``suffixes``, sorted per folder, each real file once.

        Returned paths are resolved (so two names of one file cannot be read twice) and all lie
        inside the project.
        """
        out: dict[Path, None] = {}
        for folder in folders:
            if folder is None or not folder.is_dir():
                continue
            seen_dirs: set[Path] = set()
            for path in self._walk(folder, seen_dirs):
                if path.suffix.lower() in suffixes:
                    real = self.check(path)
                    if real is not None and real.is_file():
                        out.setdefault(real, None)
        return list(out)

    def _walk(self, folder: Path, seen_dirs: set[Path]) -> list[Path]:
        """Every file below ``folder``; symlinked folders followed only when they stay inside."""
        real = self.check(folder, "folder")
        if real is None or real in seen_dirs:  # outside, or a loop back to a folder already walked
            return []
        seen_dirs.add(real)
        found: list[Path] = []
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.warnings.append(f"{folder}: skipped: cannot list this folder ({exc})")
            return []
        for entry in entries:
            path = Path(entry.path)
            if entry.name in self.skip:
                continue
            try:
                is_dir = entry.is_dir()  # follows symlinks; where they lead is checked next
            except OSError:
                is_dir = False
            if is_dir:
                found.extend(self._walk(path, seen_dirs))
            else:
                found.append(path)
        return found
