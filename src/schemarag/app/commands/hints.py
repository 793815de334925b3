"""Errors that name the fix, for the local command line only.

When ``schemarag retrieve --db live_shop`` finds no index, the user's next step depends on
what *does* exist: the database under a tenant (``add --tenant demo``), a near-miss name
(``did you mean 'ecommerce'?``), or only a schema file (``run schemarag build``). Working that
out means listing tenants and databases, which is fine for the person who owns the artifacts
folder and never fine for a server answering many callers (it would tell one tenant which
other tenants exist). So these hints live here, in the CLI command layer; the reader and the
Retriever keep their plain, non-revealing messages.

Example:
    >>> from pathlib import Path
    >>> missing_index_message("x", Path("/nonexistent"), None, Path("/nonexistent"))
    "no index for 'x' in the default namespace of /nonexistent and no schema file /nonexistent/x.json; ..."
"""

from __future__ import annotations

import shlex
from pathlib import Path

from schemarag.runtime.core.paths import (
    artifacts_dir,
    data_dir,
    did_you_mean,
    list_databases,
    published_databases,
    schema_path,
    tenants,
    tenants_publishing,
)


def _where(tenant: str | None, artifacts: Path) -> str:
    """Where the index was looked for, with the folder: a hint typed without ``--artifacts``
    looked in another folder than the build wrote, and this is how the user sees it."""
    folder = artifacts.absolute()
    return f"under tenant {tenant!r} in {folder}" if tenant else f"in the default namespace of {folder}"


def _build_command(db: str, tenant: str | None, artifacts: Path, data: Path) -> str:
    """``schemarag build --db X`` with the folders this command used when they are not the
    defaults, so the fix runs as printed from anywhere."""
    words = ["schemarag", "build"]
    if data.absolute() != data_dir(None).absolute():
        words += ["--data", str(data)]
    if artifacts.absolute() != artifacts_dir(None).absolute():
        words += ["--artifacts", str(artifacts)]
    words += ["--db", db] + (["--tenant", tenant] if tenant else [])
    return shlex.join(words)


def missing_index_message(db: str, artifacts: Path, tenant: str | None, data: Path) -> str:
    """One line: what is missing and the command that fixes it."""
    head = f"no index for {db!r} {_where(tenant, artifacts)}"
    if tenant is not None and tenant not in tenants(artifacts):
        known = tenants(artifacts)
        head = f"{head}: no tenant {tenant!r} has been built in {artifacts}"
        suggestion = did_you_mean(tenant, known)
        if suggestion:
            return head + suggestion
        listed = f" (tenants: {', '.join(known)})" if known else ""
        return f"{head}{listed}; build it with `schemarag build --tenant {tenant}`"
    # Only an unscoped call learns which tenant owns a database: a call made as one tenant gets
    # the same answer as for a nonexistent database (tenancy is a boundary, SECURITY.md).
    owners = tenants_publishing(artifacts, db) if tenant is None else []
    if owners:
        return f"{head}; it exists under tenant {owners[0]!r}: add --tenant {owners[0]}"
    if tenant is not None and db in published_databases(artifacts):
        return f"{head}; it exists in the default namespace: drop --tenant {tenant}"
    if schema_path(data, db).is_file():
        return f"{head}; {schema_path(data, db)} exists: run `{_build_command(db, tenant, artifacts, data)}`"
    candidates = set(published_databases(artifacts, tenant)) | set(list_databases(data))
    suggestion = did_you_mean(db, candidates)
    if suggestion:
        return f"{head}{suggestion}"
    known = ", ".join(sorted(candidates)) or "none yet"
    return (
        f"{head} and no schema file {schema_path(data, db)}; known databases: {known} "
        "(add <db>.json to --data, then `schemarag build`)"
    )
