"""``schemarag build`` records named runs, materializations and check results in a persistent instance.

The instance is real (SQLite files in ``.dagster/`` next to the artifacts); each test reopens it
from disk, as ``schemarag ui`` would, and reads back what the build recorded.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from schemarag.assets.published_index import CHECKS
from schemarag.pipelines.build import build_databases
from schemarag.pipelines.instance import DAGSTER_YAML, dagster_home, ensure_home, open_instance

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "schemas"


@pytest.fixture(autouse=True)
def _no_dagster_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def test_home_is_next_to_the_artifacts_unless_dagster_home_is_set(tmp_path: Path, monkeypatch) -> None:
    assert dagster_home(tmp_path / "artifacts") == tmp_path / ".dagster"
    assert dagster_home(tmp_path / "artifacts", tenant="acme") == tmp_path / ".dagster" / "tenants" / "acme"
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "chosen"))
    assert dagster_home(tmp_path / "artifacts", tenant="acme") == tmp_path / "chosen"


def test_a_new_home_gets_a_minimal_dagster_yaml_and_an_existing_one_is_kept(tmp_path: Path) -> None:
    home = ensure_home(tmp_path / "h")
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == DAGSTER_YAML
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    ensure_home(home)
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == "telemetry:\n  enabled: false\n"
    with open_instance(home) as instance:
        assert not instance.is_ephemeral and Path(instance.root_directory) == home


def _materializations(instance: dg.DagsterInstance, asset: str) -> list[dict]:
    records = instance.fetch_materializations(dg.AssetKey(asset), limit=10).records
    return [
        {"partition": r.partition_key, **{k: v.value for k, v in r.asset_materialization.metadata.items()}}
        for r in records
    ]


def test_build_records_a_named_run_with_metadata_and_checks(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    [report] = build_databases(["ecommerce"], SAMPLES, artifacts)
    assert report.ok, report.error

    with open_instance(tmp_path / ".dagster") as instance:  # reopened from disk, as the UI does
        [run] = instance.get_runs()
        assert run.job_name == "build_index"
        assert run.status == dg.DagsterRunStatus.SUCCESS
        assert run.tags["dagster/partition"] == "ecommerce"
        assert run.tags["schemarag/database"] == "ecommerce"
        assert instance.get_dynamic_partitions("databases") == ["ecommerce"]

        [pub] = _materializations(instance, "published_index")
        assert pub["partition"] == "ecommerce" and pub["key"] == report.key
        assert pub["chunks"] == report.chunks > 0 and pub["seconds"] >= 0
        [emb] = _materializations(instance, "chunk_embeddings")
        assert emb["vectors"] == report.chunks and emb["seconds"] >= 0
        [chunks] = _materializations(instance, "doc_chunks")
        assert chunks["chunks"] == report.chunks

        checks = {
            name: instance.event_log_storage.get_asset_check_execution_history(
                dg.AssetCheckKey(dg.AssetKey("published_index"), name), limit=5
            )
            for name, _ in CHECKS
        }
        for name, history in checks.items():
            assert [h.status.value for h in history] == ["SUCCEEDED"], name


def test_tenant_builds_go_to_the_tenants_own_instance(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    [report] = build_databases(["ecommerce"], SAMPLES, artifacts, tenant="t1")
    assert report.ok and report.tenant == "t1", report.error
    with open_instance(tmp_path / ".dagster" / "tenants" / "t1") as instance:
        [run] = instance.get_runs()
        assert run.job_name == "build_index" and run.tags["schemarag/tenant"] == "t1"
    with open_instance(tmp_path / ".dagster") as shared:
        assert shared.get_runs() == [], "a tenant's runs never show in the shared instance"
    assert not (artifacts / "_tenants" / "t1" / ".dagster").exists()
