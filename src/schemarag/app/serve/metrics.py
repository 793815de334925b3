"""Prometheus metrics (``GET /metrics``) with the official client.

Per endpoint (the route template, never the raw path, so label sets stay bounded): request
counts by status and a latency histogram; the index version each database is served at; query
embedding cache lookups by outcome (hit ratio = hits / all lookups); requests in flight and
requests refused for being over the concurrency limit.

With ``--workers N`` each worker is its own process: ``schemarag serve`` then points
``PROMETHEUS_MULTIPROC_DIR`` at a fresh folder before the workers start, and ``/metrics``
aggregates every worker's files (the client's documented multiprocess mode).
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)

disable_created_metrics()  # the *_created series double the output and say nothing a scraper needs

MULTIPROC = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))

# ms-scale search: buckets from 1 ms to 10 s
_BUCKETS = (0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 10)

REQUESTS = Counter(
    "schemarag_http_requests_total", "HTTP requests by endpoint and status", ["endpoint", "method", "status"]
)
LATENCY = Histogram(
    "schemarag_http_request_duration_seconds",
    "Time from request start to the last response byte, by endpoint",
    ["endpoint"],
    buckets=_BUCKETS,
)
INFLIGHT = Gauge("schemarag_http_requests_in_flight", "Requests being served", multiprocess_mode="livesum")
REJECTED = Counter(
    "schemarag_http_rejected_total", "Requests refused with 503 (concurrency limit)", ["reason"]
)
INDEX_VERSION = Gauge(
    "schemarag_index_version_info",
    "1 for the index version (artifact key) served per database",
    ["tenant", "database", "artifact_key"],
    multiprocess_mode="liveall",
)
CACHE_LOOKUPS = Counter(
    "schemarag_query_cache_lookups_total", "Query-embedding cache lookups by result", ["result"]
)

_served: dict[tuple[str, str], str] = {}


def note_index(tenant: str | None, database: str, key: str) -> None:
    """Record that ``database`` is served at version ``key`` (the previous version drops to 0)."""
    ident = (tenant or "", database)
    old = _served.get(ident)
    if old == key:
        return
    if old is not None:
        INDEX_VERSION.labels(ident[0], database, old).set(0)
    INDEX_VERSION.labels(ident[0], database, key).set(1)
    _served[ident] = key


def note_cache(hits: int, misses: int) -> None:
    if hits:
        CACHE_LOOKUPS.labels("hit").inc(hits)
    if misses:
        CACHE_LOOKUPS.labels("miss").inc(misses)


def render() -> tuple[bytes, str]:
    """The exposition text of this process (or of every worker, in multiprocess mode)."""
    if MULTIPROC:
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    from prometheus_client import REGISTRY

    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
