"""Keep an importer inside the folder the user named.

A dbt project or a folder of export parts is input like any other: a symlink in ``models/``
that points at ``/etc`` or at another team's project, or ``model-paths: ["../../secrets"]``,
must not pull outside files into an index that tenants are served from. Every path an importer
reads goes through :func:`inside`: it is resolved (symlinks followed, ``..`` folded) and refused,
with one warning naming the file, when it lands outside the root.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> warnings: list[str] = []
    >>> inside(root, root / "models" / "a.sql", warnings) == (root / "models" / "a.sql").resolve()
    True
    >>> inside(root, root / ".." / "elsewhere.sql", warnings) is None
    True
    >>> "outside" in warnings[0]
    True
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def inside(root: Path, path: Path, warnings: list[str], what: str = "file") -> Path | None:
    """``path`` resolved, or None (and one warning) when it resolves outside ``root``."""
    base = root.resolve()
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, an unreadable parent
        warnings.append(f"{path}: skipped: cannot resolve this {what} ({exc})")
        return None
    if real == base or real.is_relative_to(base):
        return real
    warnings.append(
        f"{path}: skipped: this {what} resolves to {real}, outside {base}; "
        "importers read only inside the folder you name (copy the file in if it belongs)"
    )
    return None


def files_inside(root: Path, paths: Iterable[Path], warnings: list[str], what: str = "file") -> list[Path]:
    """The ``paths`` that resolve inside ``root``, as given (so messages keep the user's
    spelling) and in the given order; one warning per path refused."""
    out: list[Path] = []
    for path in paths:
        if inside(root, path, warnings, what) is not None:
            out.append(path)
    return out
