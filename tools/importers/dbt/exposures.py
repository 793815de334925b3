"""Exposures, semantic models and metrics as documentation of the tables they read.

None of these is a table, but each says what a table is *for*: a dashboard built on
``fct_orders``, a semantic model's entities/dimensions/measures over it, a metric computed from
those measures. Their text is appended to the doc of each table they depend on (``## Exposures``,
``## Semantic model``, ``## Metrics``), so the chunker indexes it with that table and a question
phrased the way the dashboard or metric is ("weekly active customers") finds the table.

Example:
    >>> rel = RelationSpec(name="analytics.orders", kind="model", node="orders")
    >>> out = extra_sections(
    ...     [{"name": "sales", "type": "dashboard", "depends_on": ["ref('orders')"],
    ...       "description": "Daily sales."}],
    ...     [], [], {"orders": rel}, lambda e: e.split("'")[1])
    >>> print(out["analytics.orders"])
    ## Exposures
    - **sales** (dashboard): Daily sales.
    <BLANKLINE>
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemarag.tools.importers.dbt.specs import RelationSpec


def _one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def _names(items: Any) -> str:
    if not isinstance(items, list):
        return ""
    out = []
    for item in items:
        if isinstance(item, dict) and item.get("name"):
            desc = _one_line(item.get("description"))
            out.append(f"`{item['name']}`" + (f" ({desc})" if desc else ""))
    return ", ".join(out)


def _exposure_line(exp: dict[str, Any]) -> str:
    bits = [str(exp.get("type") or "")]
    if exp.get("maturity"):
        bits.append(f"maturity {exp['maturity']}")
    owner = exp.get("owner")
    if isinstance(owner, dict) and (owner.get("name") or owner.get("email")):
        bits.append(f"owner {owner.get('name') or owner.get('email')}")
    label = exp.get("label") or exp["name"]
    line = f"- **{label}** ({', '.join(b for b in bits if b)})"
    if exp.get("description"):
        line += f": {_one_line(exp['description'])}"
    if exp.get("url"):
        line += f" <{exp['url']}>"
    return line


def _measure_of(metric: dict[str, Any]) -> str:
    params = metric.get("type_params") if isinstance(metric.get("type_params"), dict) else {}
    measure = params.get("measure")
    if isinstance(measure, dict):
        measure = measure.get("name")
    return str(measure or "")


def extra_sections(
    exposures: list[dict[str, Any]],
    semantic_models: list[dict[str, Any]],
    metrics: list[dict[str, Any]],
    by_node: dict[str, RelationSpec],
    resolve: Callable[[str], str | None],
) -> dict[str, str]:
    """Markdown to append per relation name; ``resolve`` maps ``ref('x')``/``source(..)`` to a node."""

    def table_of(expr: Any) -> RelationSpec | None:
        node = resolve(str(expr)) if expr else None
        rel = by_node.get((node or "").lower())
        return rel if rel is not None and rel.materialized != "ephemeral" else None

    parts: dict[str, dict[str, list[str]]] = {}

    def add(rel: RelationSpec, heading: str, text: str) -> None:
        parts.setdefault(rel.name, {}).setdefault(heading, []).append(text)

    for exp in exposures:
        for dep in exp.get("depends_on") or []:
            rel = table_of(dep)
            if rel is not None:
                add(rel, "Exposures", _exposure_line(exp))
    measure_home: dict[str, RelationSpec] = {}
    for sem in semantic_models:
        rel = table_of(sem.get("model"))
        if rel is None:
            continue
        lines = [
            f"`{sem['name']}`" + (f": {_one_line(sem['description'])}" if sem.get("description") else "")
        ]
        for key in ("entities", "dimensions", "measures"):
            listed = _names(sem.get(key))
            if listed:
                lines.append(f"- **{key.capitalize()}:** {listed}")
        add(rel, "Semantic model", "\n".join(lines))
        for measure in sem.get("measures") or []:
            if isinstance(measure, dict) and measure.get("name"):
                measure_home[str(measure["name"])] = rel
    for metric in metrics:
        rel = measure_home.get(_measure_of(metric)) or table_of(metric.get("model"))
        if rel is None:
            continue
        label = metric.get("label") or metric["name"]
        kind = metric.get("type") or metric.get("calculation_method") or "metric"
        line = f"- **{label}** (`{metric['name']}`, {kind})"
        if metric.get("description"):
            line += f": {_one_line(metric['description'])}"
        add(rel, "Metrics", line)
    out: dict[str, str] = {}
    for name, headings in parts.items():
        out[name] = "".join(f"## {h}\n" + "\n".join(lines) + "\n" for h, lines in headings.items())
    return out
