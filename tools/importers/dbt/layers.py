"""Which layer of a dbt project a relation belongs to: who should query it.

dbt's own project-structure guide names three layers (staging -> intermediate -> marts), and
most projects add reports (or "reporting") on top; sources are the raw tables underneath.
A node's layer is read, most telling first, from:

1. its kind: a source table is ``source``; a seed ``seed``; a snapshot ``snapshot``;
2. ``access``: ``public`` models are the consumer interface (``marts``), ``private`` ones are
   building blocks (``intermediate``) unless a folder/tag says otherwise;
3. its folders (``models/marts/finance/...``), then its tags (``tags: [staging]``);
4. its name's prefix (``stg_``, ``int_``, ``fct_``/``dim_``, ``rpt_``), dbt's naming convention;
5. else ``model``: a model the project builds with no layer signal (small projects).

These words are dbt's documented conventions, not a list tuned to any data set.

Example:
    >>> layer_of("model", ["shop", "marts", "core", "orders"], set(), "", "orders")
    'marts'
    >>> layer_of("model", ["shopify_source", "stg_shopify__order"], set(), "", "stg_shopify__order")
    'staging'
    >>> layer_of("model", ["shop", "int_orders"], set(), "public", "int_orders")
    'marts'
"""

from __future__ import annotations

LAYERS = ("marts", "reports", "model", "seed", "snapshot", "intermediate", "staging", "source")
_WORDS = {
    "staging": "staging",
    "stage": "staging",
    "stg": "staging",
    "base": "staging",
    "tmp": "staging",
    "intermediate": "intermediate",
    "int": "intermediate",
    "marts": "marts",
    "mart": "marts",
    "core": "marts",
    "reports": "reports",
    "report": "reports",
    "reporting": "reports",
}
_PREFIXES = (
    ("stg_", "staging"),
    ("base_", "staging"),
    ("int_", "intermediate"),
    ("fct_", "marts"),
    ("fact_", "marts"),
    ("dim_", "marts"),
    ("mart_", "marts"),
    ("rpt_", "reports"),
    ("report_", "reports"),
)


def _from_words(words: list[str]) -> str:
    for word in words:
        layer = _WORDS.get(word.lower())
        if layer:
            return layer
    return ""


def layer_of(kind: str, fqn: list[str], tags: set[str], access: str, name: str) -> str:
    """The layer of one node (see the module docstring for the order of evidence)."""
    if kind in ("source", "seed", "snapshot"):
        return kind
    folders = list(reversed(fqn[1:-1]))  # the nearest folder speaks first: marts/staging_like/x
    found = _from_words(folders) or _from_words(sorted(tags))
    if not found:
        lowered = name.lower()
        found = next((layer for prefix, layer in _PREFIXES if lowered.startswith(prefix)), "")
    if access == "public" and found not in ("marts", "reports"):
        return "marts"
    if access == "private" and not found:
        return "intermediate"
    return found or "model"
