"""The HTTP API of a real server process: endpoints, field names, limits and error statuses."""

from __future__ import annotations

import httpx

from schemarag.runtime.artifact.format import CURRENT

CHUNK_FIELDS = {"chunk_id", "table", "chunk_type", "column", "score", "title", "source_url", "text"}


def test_health_ready_and_openapi(unkeyed) -> None:
    assert httpx.get(f"{unkeyed.base}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{unkeyed.base}/readyz").json()
    assert ready["ready"] is True
    assert {d["database"] for d in ready["databases"]} >= {"shop", "shop_a"}
    spec = httpx.get(f"{unkeyed.base}/openapi.json").json()
    assert {"/v1/retrieve", "/v1/schema", "/v1/validate", "/v1/generate", "/v1/databases"} <= set(
        spec["paths"]
    )
    assert "question" in spec["components"]["schemas"]["RetrieveBody"]["properties"]


def test_databases_lists_version_and_tables(unkeyed) -> None:
    rows = httpx.get(f"{unkeyed.base}/v1/databases").json()["databases"]
    by_name = {r["database"]: r for r in rows}
    assert set(by_name) == {"shop", "shop_a", "shop_b", "shop_c"}  # no tenant's database
    key = (unkeyed.artifacts / "shop" / CURRENT).read_text().strip()
    assert by_name["shop"]["artifact_key"] == key and by_name["shop"]["tables"] == 2


def test_retrieve_has_the_cli_json_fields(unkeyed) -> None:
    r = httpx.post(
        f"{unkeyed.base}/v1/retrieve",
        json={"database": "shop", "question": "customers in the gold loyalty tier", "top_k": 3},
        headers={"X-Request-ID": "test-req-1"},
    )
    assert r.status_code == 200 and r.headers["x-request-id"] == "test-req-1"
    body = r.json()
    assert body["chunks"] and set(body["chunks"][0]) == CHUNK_FIELDS
    assert body["chunks"][0]["table"] == "customers"
    meta = body["metadata"]
    assert meta["chunks_returned"] == len(body["chunks"]) <= 3
    assert meta["artifact_key"] == (unkeyed.artifacts / "shop" / CURRENT).read_text().strip()
    assert meta["timings_ms"]["total"] > 0
    assert body["tables"][0] == "customers" and "orders" in body["tables"] + body["expanded_tables"]


def test_schema_for_question_and_for_tables(unkeyed) -> None:
    by_q = httpx.post(
        f"{unkeyed.base}/v1/schema", json={"database": "shop", "question": "order totals per customer"}
    ).json()
    assert "CREATE TABLE orders" in by_q["schema"] and by_q["metadata"]["token_estimate"] > 0
    by_t = httpx.post(f"{unkeyed.base}/v1/schema", json={"database": "shop", "tables": ["orders"]}).json()
    assert by_t["metadata"]["tables_included"] == ["orders"]
    assert by_t["metadata"]["expanded_tables"] == ["customers"]  # the FK neighbour comes along
    assert "CREATE TABLE customers" in by_t["schema"]
    small = httpx.post(
        f"{unkeyed.base}/v1/schema", json={"database": "shop", "tables": ["orders"], "token_budget": 60}
    ).json()
    assert "CREATE TABLE customers" not in small["schema"]  # the neighbour is dropped first
    unknown = httpx.post(f"{unkeyed.base}/v1/schema", json={"database": "shop", "tables": ["nope"]})
    assert unknown.status_code == 422 and "'nope'" in unknown.json()["error"]


def test_schema_focus_ranks_tables_and_compact_caps_the_size(unkeyed) -> None:
    url = f"{unkeyed.base}/v1/schema"
    question = {"database": "shop", "question": "order totals per customer"}
    default = httpx.post(url, json={**question, "focus": "default"}).json()
    compact = httpx.post(url, json={**question, "focus": "compact", "table_budget": 2}).json()
    for body in (default, compact):  # every ranked table is shown, as DDL or a line of names
        ranked = [t["table"] for t in body["metadata"]["ranking"]["tables"]]
        assert body["metadata"]["tables_shown"] == ranked and "orders" in ranked
        assert all(
            f"CREATE TABLE {t}" in body["schema"] or f"-- table {t}:" in body["schema"] for t in ranked
        )
    assert default["metadata"]["ranking"]["focus"] == "default"
    cap = compact["metadata"]["ranking"]["token_budget"]
    assert compact["metadata"]["ranking"]["focus"] == "compact" and cap > 0
    assert compact["metadata"]["token_estimate"] <= max(cap, default["metadata"]["token_estimate"])
    assert compact["metadata"]["token_estimate"] < default["metadata"]["token_estimate"]
    adaptive = httpx.post(url, json={**question, "adaptive": True, "table_budget": 2}).json()
    assert adaptive["metadata"]["ranking"]["adaptive"] is True
    assert 1 <= len(adaptive["metadata"]["tables_shown"]) <= 2
    with_tables = httpx.post(url, json={"database": "shop", "tables": ["orders"], "adaptive": True})
    assert with_tables.status_code == 422 and with_tables.json()["field"] == "tables"
    with_tables = httpx.post(url, json={"database": "shop", "tables": ["orders"], "focus": "compact"})
    assert with_tables.status_code == 422 and with_tables.json()["field"] == "tables"
    typo = httpx.post(url, json={**question, "focus": "compakt"})
    assert typo.status_code == 422 and "focus" in typo.json()["error"]
    too_many = httpx.post(url, json={**question, "table_budget": 10_000})
    assert too_many.status_code == 422 and too_many.json()["field"] == "table_budget"


def test_validate_gives_verdict_and_reasons(unkeyed) -> None:
    ok = httpx.post(f"{unkeyed.base}/v1/validate", json={"database": "shop", "sql": "SELECT id FROM orders"})
    assert ok.json()["valid"] is True
    bad = httpx.post(f"{unkeyed.base}/v1/validate", json={"database": "shop", "sql": "DELETE FROM orders"})
    assert bad.json()["valid"] is False and "read-only" in bad.json()["errors"][0]
    hidden = httpx.post(
        f"{unkeyed.base}/v1/validate",
        json={"database": "shop", "sql": "SELECT id FROM orders /*!, version() */"},
    )
    assert hidden.json()["valid"] is False and "executable comment" in hidden.json()["errors"][0]
    unchecked = httpx.post(
        f"{unkeyed.base}/v1/validate", json={"database": "shop", "sql": "SELECT id FROM orders WHERE id = $1"}
    ).json()
    assert (unchecked["valid"], unchecked["errors"], unchecked["bind_checked"]) == (None, [], False)
    assert "Values were not provided" in unchecked["unchecked_reason"]
    assert set(unchecked) == {"database", "artifact_key", "valid", "errors", "warnings", "tables",
                              "bind_checked", "unchecked_reason"}  # fmt: skip


def test_generate_without_llm_is_503_naming_the_setting(unkeyed) -> None:
    r = httpx.post(f"{unkeyed.base}/v1/generate", json={"database": "shop", "question": "how many orders?"})
    assert r.status_code == 503 and "SCHEMARAG_LLM_BASE_URL" in r.json()["error"]


def test_error_statuses(unkeyed) -> None:
    url = f"{unkeyed.base}/v1/retrieve"
    missing = httpx.post(url, json={"database": "nope", "question": "x"})
    assert missing.status_code == 404 and "'nope'" in missing.json()["error"]
    traversal = httpx.post(url, json={"database": "../shop", "question": "x"})
    assert traversal.status_code == 404
    long_q = httpx.post(url, json={"database": "shop", "question": "orders " * 700})
    assert long_q.status_code in (413, 422)  # over the body limit (4096 bytes here) or the question limit
    huge = httpx.post(url, content=b'{"database": "shop", "question": "' + b"x" * 10_000 + b'"}',
                      headers={"content-type": "application/json"})  # fmt: skip
    assert huge.status_code == 413 and "4096" in huge.json()["error"]
    typo = httpx.post(url, json={"database": "shop", "qestion": "x"})
    assert typo.status_code == 422 and "qestion" in typo.json()["error"]
    blank = httpx.post(url, json={"database": "shop", "question": "   "})
    assert blank.status_code == 422 and blank.json()["field"] == "question"
    k = httpx.post(url, json={"database": "shop", "question": "orders", "top_k": 0})
    assert k.status_code == 422 and "top_k" in k.json()["error"]


def test_question_limit_is_422(keyed) -> None:
    r = httpx.post(
        f"{keyed.base}/v1/schema", json={"database": "shop", "question": "o" * 4001}, headers=keyed.headers()
    )  # 4 KB: within the 64 KiB body limit, over the 4,000-character question limit
    assert r.status_code == 422 and "4000" in r.json()["error"] and r.json()["field"] == "question"


def test_metrics_and_access_log(unkeyed) -> None:
    httpx.post(f"{unkeyed.base}/v1/retrieve", json={"database": "shop", "question": "secret question words"})
    text = httpx.get(f"{unkeyed.base}/metrics").text
    assert 'schemarag_http_requests_total{endpoint="/v1/retrieve",method="POST",status="200"}' in text
    assert 'schemarag_http_request_duration_seconds_bucket{endpoint="/v1/retrieve"' in text
    assert 'schemarag_index_version_info{artifact_key="' in text and 'database="shop"' in text
    assert 'schemarag_query_cache_lookups_total{result="miss"}' in text
    log = unkeyed.log.read_text()
    assert '"path":"/v1/retrieve"' in log and '"status":200' in log
    assert "secret question words" not in log  # no question text at INFO by default


def test_every_route_answers_in_snake_case_with_the_cli_keys(unkeyed) -> None:
    """One output convention: the same key sets as ``retrieve --json`` / ``validate --json``."""
    from json_shape import not_snake_case

    q = {"database": "shop", "question": "customers in the gold loyalty tier"}
    found = httpx.post(f"{unkeyed.base}/v1/retrieve", json=q).json()
    assert set(found) == {"database", "tables", "expanded_tables", "ranking", "chunks", "metadata"}
    assert found["ranking"]["focus"] == "default" and found["tables"][0] == "customers"  # the default
    schema = httpx.post(f"{unkeyed.base}/v1/schema", json=q).json()
    assert set(schema) == {"database", "schema", "metadata"}
    assert {"tables_shown", "ranking", "token_estimate", "token_budget"} <= set(schema["metadata"])
    checked = httpx.post(f"{unkeyed.base}/v1/validate", json={"database": "shop", "sql": "SELECT 1"}).json()
    assert {"database", "artifact_key", "valid", "errors", "bind_checked", "unchecked_reason"} <= set(checked)
    listed = httpx.get(f"{unkeyed.base}/v1/databases").json()
    for doc in (found, schema, checked, listed):
        assert not_snake_case(doc) == []


def test_api_docs_pages_load_their_assets_from_this_server(keyed) -> None:
    """/docs and /redoc work offline: every script and stylesheet they load is served here, and
    they need no API key (the data routes still do)."""
    import re

    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{keyed.base}{page}").text
        assets = re.findall(r"""(?:src|href)=["']([^"']+\.(?:js|css|png))["']""", html)
        assert assets, html[:500]
        for url in assets:
            assert url.startswith("/docs-assets/"), f"{page} loads {url} from elsewhere"
            got = httpx.get(f"{keyed.base}{url}")
            assert got.status_code == 200 and len(got.content) > 1000, url
    assert httpx.get(f"{keyed.base}/docs-assets/nope.js").status_code == 404
    assert (
        httpx.post(f"{keyed.base}/v1/retrieve", json={"database": "shop", "question": "x"}).status_code == 401
    )
