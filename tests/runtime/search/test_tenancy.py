"""Tenancy is a boundary: a tenant-scoped request resolves inside its own namespace or fails
exactly like a database that does not exist (issue 13 finding 2), in both directions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from tiny_support import SHOP, current_key, write_schema

from schemarag.cli import main
from schemarag.runtime.api import retrieve
from schemarag.runtime.artifact.format import CURRENT
from schemarag.runtime.core.errors import ArtifactError, ArtifactNotFoundError, ManifestMismatchError
from schemarag.runtime.search.retriever import Retriever

OTHER = {"acme": ("globex_hr", "salary_band"), "globex": ("acme_crm", "pipeline_stage")}


def _not_found(db: str, tenant: str | None, artifacts: Path) -> str:
    with pytest.raises(ArtifactNotFoundError) as info:
        Retriever.open(db, artifacts=artifacts, tenant=tenant)
    return str(info.value)


@pytest.mark.parametrize("tenant", ["acme", "globex"])
def test_retriever_of_one_tenant_cannot_open_the_others_database(
    tiny: tuple[Path, Path], tenant: str
) -> None:
    _, artifacts = tiny
    other_db, _ = OTHER[tenant]
    leaked = _not_found(other_db, tenant, artifacts)
    ghost = _not_found("no_such_db", tenant, artifacts)
    assert leaked.replace(other_db, "<db>") == ghost.replace("no_such_db", "<db>")  # same words
    owner = "globex" if tenant == "acme" else "acme"
    assert owner not in leaked.replace(other_db, "")  # nothing names the owning tenant


def test_each_tenant_opens_its_own_and_the_default_namespace_sees_neither(tiny: tuple[Path, Path]) -> None:
    _, artifacts = tiny
    res = Retriever.open("globex_hr", artifacts=artifacts, tenant="globex").search("list salary bands")
    assert res.tables == ["salaries"]
    res = Retriever.open("acme_crm", artifacts=artifacts, tenant="acme").search("leads by pipeline stage")
    assert res.tables == ["leads"]
    for db in ("globex_hr", "acme_crm"):
        _not_found(db, None, artifacts)


@pytest.mark.parametrize("tenant", ["acme", "globex"])
def test_python_api_respects_the_tenant(tiny: tuple[Path, Path], tenant: str) -> None:
    _, artifacts = tiny
    other_db, _ = OTHER[tenant]
    with pytest.raises(ArtifactNotFoundError):
        retrieve("list salary bands", database=other_db, artifacts=artifacts, tenant=tenant)
    own = "acme_crm" if tenant == "acme" else "globex_hr"
    assert retrieve("pipeline stage salary band", database=own, artifacts=artifacts, tenant=tenant)


def _generate(capsys: pytest.CaptureFixture[str], data: Path, artifacts: Path, *args: str) -> tuple[int, str]:
    code = main(
        ["generate", "--data", str(data), "--artifacts", str(artifacts), *args, "--prompt-only", "list them"]
    )
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("tenant", ["acme", "globex"])
def test_generate_never_prints_another_tenants_schema(
    tiny: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tenant: str
) -> None:
    """The probe: ``generate --tenant acme --db globex_hr --prompt-only`` printed globex's
    CREATE TABLE from the shared ``<data>/globex_hr.json``."""
    data, artifacts = tiny
    other_db, other_column = OTHER[tenant]
    assert (data / f"{other_db}.json").is_file()  # the shared schema file the old fallback read
    code, text = _generate(capsys, data, artifacts, "--tenant", tenant, "--db", other_db)
    assert code == 2
    assert other_column not in text and "CREATE TABLE" not in text
    assert "generate: error: no index for" in text  # (the local CLI's hint may name the owner)


def test_generate_serves_a_tenant_its_own_schema(
    tiny: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, artifacts = tiny
    code, text = _generate(capsys, data, artifacts, "--tenant", "globex", "--db", "globex_hr")
    assert code == 0 and "salary_band" in text


def test_generate_without_tenant_never_falls_back_to_a_tenants_schema_file(
    tiny: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, artifacts = tiny
    code, text = _generate(capsys, data, artifacts, "--db", "globex_hr")
    assert code == 2 and "salary_band" not in text


def test_generate_without_tenant_still_falls_back_to_a_shared_schema_file(
    tiny: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "schemas"
    write_schema(data, SHOP, "unbuilt_shop")
    code, text = _generate(capsys, data, tmp_path / "no_artifacts", "--db", "unbuilt_shop")
    assert code == 0 and "loyalty_tier" in text


@pytest.fixture
def acme_copy(tiny: tuple[Path, Path], tmp_path: Path) -> Path:
    """A private copy of the whole artifacts folder (both tenants and the default namespace)."""
    _, artifacts = tiny
    dest = tmp_path / "artifacts"
    shutil.copytree(artifacts, dest, ignore=shutil.ignore_patterns("_cache"))
    return dest


@pytest.mark.parametrize("pointer", ["../../globex/globex_hr/{key}", "../../../shop/{key}", "/tmp/{key}"])
def test_current_pointing_out_of_the_namespace_is_rejected(acme_copy: Path, pointer: str) -> None:
    globex_key = current_key(acme_copy / "_tenants" / "globex" / "globex_hr")
    (acme_copy / "_tenants" / "acme" / "acme_crm" / CURRENT).write_text(pointer.format(key=globex_key) + "\n")
    with pytest.raises(ArtifactError, match="not an index key"):
        Retriever.open("acme_crm", artifacts=acme_copy, tenant="acme")


def test_default_namespace_current_of_another_database_is_rejected(acme_copy: Path) -> None:
    key = current_key(acme_copy / "shop_a")
    (acme_copy / "shop" / CURRENT).write_text(f"../shop_a/{key}\n")
    with pytest.raises(ArtifactError, match="not an index key"):
        Retriever.open("shop", artifacts=acme_copy)


def test_another_tenants_version_copied_into_a_namespace_is_refused(acme_copy: Path) -> None:
    """A well-formed key, but the version folder (and manifest) belongs to globex."""
    globex = acme_copy / "_tenants" / "globex" / "globex_hr"
    planted = acme_copy / "_tenants" / "acme" / "globex_hr"
    key = current_key(globex)
    planted.mkdir()
    shutil.copytree(globex / key, planted / key)
    (planted / CURRENT).write_text(key + "\n")
    with pytest.raises(ManifestMismatchError, match="tenant 'globex'"):
        Retriever.open("globex_hr", artifacts=acme_copy, tenant="acme")
    # and a database's version under another database's name
    shutil.copytree(acme_copy / "shop", acme_copy / "renamed")
    with pytest.raises(ManifestMismatchError, match="database 'shop'"):
        Retriever.open("renamed", artifacts=acme_copy)


@pytest.mark.parametrize("tenant", ["acme", "globex"])
def test_schema_resolution_for_generate_and_validate_is_tenant_scoped(
    tiny: tuple[Path, Path], tenant: str
) -> None:
    """``resolve_schema`` is what tenant-scoped commands (generate, validate) read schemas with."""
    from schemarag.app.commands.schema_source import resolve_schema

    data, artifacts = tiny
    other_db, _ = OTHER[tenant]
    with pytest.raises(ArtifactNotFoundError):
        resolve_schema(other_db, tenant, artifacts, data)
    own = "acme_crm" if tenant == "acme" else "globex_hr"
    source = resolve_schema(own, tenant, artifacts, data)
    assert source.pinned is not None and source.database.tenant == tenant
    assert source.pinned.key == current_key(artifacts / "_tenants" / tenant / own)


@pytest.mark.parametrize("tenant", ["acme", "globex"])
@pytest.mark.parametrize("command", [["retrieve"], ["validate"]], ids=["retrieve", "validate"])
def test_retrieve_and_validate_commands_stay_in_the_tenant(
    tiny: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tenant: str, command: list[str]
) -> None:
    data, artifacts = tiny
    other_db, other_column = OTHER[tenant]
    table = "salaries" if other_db == "globex_hr" else "leads"
    arg = f"SELECT {other_column} FROM {table}" if command == ["validate"] else f"list {other_column}"
    where = ["--data", str(data), "--artifacts", str(artifacts)]
    code = main([*command, *where, "--tenant", tenant, "--db", other_db, arg])
    out = capsys.readouterr()
    assert code == 2 and "valid (" not in out.out and "chunk" not in out.out.lower()
    owner = "globex" if tenant == "acme" else "acme"
    assert f"tenant {owner!r}" not in out.err  # a scoped caller is not told which tenant owns it
    assert main([*command, *where, "--tenant", owner, "--db", other_db, arg]) == 0  # its owner may
    capsys.readouterr()
