"""Keys and tenants over HTTP and MCP: a key sees its own namespace only, both ways round."""

from __future__ import annotations

import subprocess
import sys

import httpx

from schemarag.app.serve.keys import KeyStore, digest


def _dbs(server, tenant) -> set[str]:
    r = httpx.get(f"{server.base}/v1/databases", headers=server.headers(tenant))
    assert r.status_code == 200
    return {d["database"] for d in r.json()["databases"]}


def test_each_key_lists_its_own_databases(keyed) -> None:
    assert _dbs(keyed, "acme") == {"acme_crm"}
    assert _dbs(keyed, "globex") == {"globex_hr"}
    assert _dbs(keyed, None) == {"shop", "shop_a", "shop_b", "shop_c"}


def test_missing_or_unknown_key_is_401(keyed) -> None:
    url = f"{keyed.base}/v1/retrieve"
    body = {"database": "acme_crm", "question": "pipeline stage of leads"}
    assert httpx.post(url, json=body).status_code == 401
    wrong = httpx.post(url, json=body, headers={"Authorization": "Bearer sr_not-a-key"})
    assert wrong.status_code == 401 and wrong.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(f"{keyed.base}/healthz").status_code == 200  # liveness needs no key
    assert httpx.post(url, json=body, headers={"X-API-Key": "sr_acme-test-key"}).status_code == 200


def _same_404(keyed, tenant: str, foreign: str) -> None:
    """Another tenant's database answers exactly like one that does not exist (name aside)."""
    for path, extra in (("/v1/retrieve", {"question": "leads"}), ("/v1/schema", {"question": "leads"}),
                        ("/v1/validate", {"sql": "SELECT 1"})):  # fmt: skip
        theirs = httpx.post(f"{keyed.base}{path}", json={"database": foreign, **extra},
                            headers=keyed.headers(tenant))  # fmt: skip
        ghost = httpx.post(f"{keyed.base}{path}", json={"database": "no_such_db", **extra},
                           headers=keyed.headers(tenant))  # fmt: skip
        assert theirs.status_code == ghost.status_code == 404
        assert theirs.json()["error"].replace(foreign, "X") == ghost.json()["error"].replace(
            "no_such_db", "X"
        )
        assert set(theirs.headers) == set(ghost.headers)


def test_tenants_are_isolated_both_ways(keyed) -> None:
    _same_404(keyed, "acme", "globex_hr")
    _same_404(keyed, "globex", "acme_crm")
    _same_404(keyed, "acme", "shop")  # the default namespace is not a tenant's either
    _same_404(keyed, None, "acme_crm")  # nor a tenant's database the operator's key
    ok = httpx.post(f"{keyed.base}/v1/retrieve", json={"database": "globex_hr", "question": "salary band"},
                    headers=keyed.headers("globex"))  # fmt: skip
    assert ok.status_code == 200 and ok.json()["chunks"][0]["table"] == "salaries"


def test_metrics_not_for_tenant_keys(keyed) -> None:
    assert httpx.get(f"{keyed.base}/metrics", headers=keyed.headers("acme")).status_code == 401
    assert httpx.get(f"{keyed.base}/metrics", headers=keyed.headers(None)).status_code == 200


def test_unkeyed_server_refuses_public_bind(serve_artifacts) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "schemarag", "serve", "--artifacts", str(serve_artifacts), "--host", "::"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 2
    assert "no API keys" in out.stderr and "loopback" in out.stderr


def test_keys_file_and_constant_time_lookup(tmp_path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(
        f'[[keys]]\ntenant = "acme"\nsha256 = "{digest("k1")}"\n[[keys]]\nsha256 = "{digest("k2")}"\n'
    )
    store = KeyStore.load_file(path)
    assert store.tenant_for("k1").tenant == "acme" and store.tenant_for("k2").tenant is None
    assert store.tenant_for("k3") is None and store.tenant_for(None) is None
    assert "k1" not in path.read_text()  # only digests at rest
    path.write_text('[[keys]]\ntenant = "../etc"\nsha256 = "' + "0" * 64 + '"\n')
    try:
        KeyStore.load_file(path)
    except Exception as exc:
        assert "keys[0]" in str(exc) and "../etc" in str(exc)
    else:
        raise AssertionError("a tenant name with '..' must be rejected")
