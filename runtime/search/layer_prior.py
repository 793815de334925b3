"""The dbt layer prior: marts and reports before staging models and raw sources.

A dbt project holds the same facts several times: the raw source table, its staging view, maybe
an intermediate model, and the mart analysts are meant to query. All of them match a question's
words about equally well, and a staging model often matches best (its columns keep the source's
names). A focused schema should offer the consumer layer first and the layers underneath only as
fallbacks, when no mart covers the question.

The layer of each table is decided when the project is imported (``Table.layer``, from its
folder, tags, ``access`` and name: ``schemarag.tools.importers.dbt.layers``) and stored in the
index's schema, so nothing is parsed per request. Here each layer gets a weight that multiplies
the table's evidence score (``ranking.evidence.table_scores``, in [0, 1]): a staging view at 0.65
still wins over a mart whose evidence is under 65 % of its own, i.e. when no mart really covers
the question. Tables without a layer (every non-dbt database) are left alone, so the prior is a
no-op outside dbt-sourced indexes.

One setting changes it, ``SCHEMARAG_LAYER_PRIOR``:

* ``consumer_first`` (default): the weights of :data:`CONSUMER_FIRST`;
* ``off``: every layer weighs 1 (pure evidence);
* ``staging=0.8,source=0.4``: ``consumer_first`` with these layers' weights replaced.

The vector of weights is computed once per opened index version and setting, not per request.

Example:
    >>> parse_setting("off")
    {}
    >>> parse_setting("staging=0.8, source=0.4")["staging"]
    0.8
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.errors import ConfigError

# Documented default (docs/importing.md, "How dbt layers rank"): the consumer layer at full
# weight; building blocks discounted by how far they sit from what analysts should query.
# Checked (not fitted) on tests/fixtures/dbt_rank_questions.json, questions written for it.
CONSUMER_FIRST: dict[str, float] = {
    "marts": 1.0,
    "reports": 1.0,
    "model": 1.0,  # a built model with no layer signal (small projects): treated as consumer
    "seed": 0.9,
    "snapshot": 0.85,
    "intermediate": 0.8,
    "staging": 0.65,
    "source": 0.5,
}
DEFAULT_SETTING = "consumer_first"
VARIABLE = "SCHEMARAG_LAYER_PRIOR"

_cache: weakref.WeakKeyDictionary[IndexArtifact, dict[str, np.ndarray | None]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def parse_setting(value: str | None) -> dict[str, float]:
    """Layer -> weight for a setting value (empty: the prior is off)."""
    text = (value or DEFAULT_SETTING).strip()
    if text == "off":
        return {}
    if text == DEFAULT_SETTING:
        return dict(CONSUMER_FIRST)
    weights = dict(CONSUMER_FIRST)
    for item in text.split(","):
        layer, sep, raw = item.partition("=")
        layer = layer.strip().lower()
        try:
            weight = float(raw)
        except ValueError:
            weight = -1.0
        if not sep or layer not in CONSUMER_FIRST or not 0.0 < weight <= 1.0:
            raise ConfigError(
                f"{VARIABLE}={value!r}: {item.strip()!r} is not layer=weight; use 'consumer_first', 'off' or "
                f"e.g. 'staging=0.8,source=0.4' (layers: {', '.join(CONSUMER_FIRST)}; weights in (0, 1])"
            )
        weights[layer] = weight
    return weights


def has_layers(art: Any) -> bool:
    """The index was imported from a dbt project (its tables carry a ``layer``): its schemas
    are one for the schema prior and the sibling prior, and the layer prior orders its copies."""
    return any(getattr(art.schema.table(t), "layer", None) for t in art.table_names)


def layer_weights(art: IndexArtifact, setting: str | None = None) -> np.ndarray | None:
    """Per table of ``art`` (``art.table_names`` order), its layer's weight; None when no table
    has a layer or the prior is off (so callers skip the multiplication)."""
    key = setting or DEFAULT_SETTING
    with _lock:
        per_art = _cache.setdefault(art, {})
        if key in per_art:
            return per_art[key]
    weights = parse_setting(key)
    out: np.ndarray | None = None
    layers = [
        (art.schema.table(t).layer if art.schema.table(t) is not None else None) for t in art.table_names
    ]
    if weights and any(layers):
        out = np.array([weights.get(layer or "", 1.0) for layer in layers], dtype=np.float32)
    with _lock:
        per_art[key] = out
    return out


def apply_layer_prior(
    art: IndexArtifact,
    scores: np.ndarray,
    setting: str | None = None,
    env: Mapping[str, str] | None = None,
) -> np.ndarray:
    """``scores`` (per table) times the layer weights the setting gives (unchanged without layers)."""
    weights = _configured_weights(art, setting, env)
    return scores if weights is None else scores * weights


def consumer_layer(
    art: IndexArtifact, setting: str | None = None, env: Mapping[str, str] | None = None
) -> np.ndarray:
    """Bool per table: at full layer weight (a mart or report, or any table of an index without
    layers or with the prior off). The named-table boost (``ranking.evidence.name_boost``) lifts
    only these, since a dbt project repeats one name in every layer."""
    weights = _configured_weights(art, setting, env)
    return np.ones(len(art.table_names), dtype=bool) if weights is None else weights >= 1.0


def _configured_weights(
    art: IndexArtifact, setting: str | None, env: Mapping[str, str] | None
) -> np.ndarray | None:
    """:func:`layer_weights` under ``setting`` (``RankingConfig.layer_prior``), else
    ``SCHEMARAG_LAYER_PRIOR`` (the process environment, or ``env``)."""
    from schemarag.runtime.core.config import runtime_settings

    return layer_weights(art, setting or runtime_settings(env).schemarag_layer_prior)
