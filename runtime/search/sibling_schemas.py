"""Sibling schemas: one database's schemas holding copies of the same tables, told apart by name.

Warehouses keep the same tables under sibling schemas: one dataset per chain
(``CRYPTO_ETHEREUM`` / ``CRYPTO_ETHEREUM_CLASSIC``, ``CRYPTO_BITCOIN`` / ``CRYPTO_BITCOIN_CASH``),
per environment (``analytics`` / ``analytics_dev``), per release. Their chunks hold the same
words, so the chunk score cannot tell ``CRYPTO_ETHEREUM.TRANSACTIONS`` from
``CRYPTO_ETHEREUM_CLASSIC.TRANSACTIONS``; whichever schema leads by a hair (the classic chain's
``BALANCES``, which the other has not, matches "balance") becomes the leading schema, and the
schema prior then pushes the right copies down. What tells them apart is the schema name: a
question about "Ethereum" names every word of ``CRYPTO_ETHEREUM`` but ``crypto`` and leaves
``classic`` unnamed as well; one about "Ethereum Classic" names both.

A *sibling group* is the tables of two or more schemas of one database with the same table
name (case and whitespace aside) and at least ``overlap`` of their columns in common, between
schemas that share such tables for at least ``overlap`` of the smaller schema's tables (a lookup
copied into one dataset makes no siblings). A schema's *fit* to a question is the number of its
name's words (:func:`~.named_tables.name_words`, as the name boost reads table names) the
question holds minus the number it does not. In the ranking (:func:`sibling_prior`, the
``sibling_prior`` stage before routing) every table of a schema that fits worse than another
schema of one of its groups scores ``sibling_prior`` of its score, its tables without a copy
included, so the leading schema is chosen among the schemas the question fits best. A word the
question lacks counts against a schema, so of ``analytics`` and ``analytics_dev`` the plain name
leads unless the question says "dev"; schemas whose names differ only by numbers, or by as many
unnamed words (``noaa_historic_severe_storms`` / ``noaa_preliminary_severe_storms``), fit alike
and keep their scores.

The groups are read from the index's table names and columns once per opened version
(weak-keyed cache); per request the cost is one set lookup per word of the grouped schemas'
names, and nothing at all in an index without sibling schemas (all but 8 of Spider 2.0-lite's
158 databases, every BIRD database).

Example:
    >>> cols = ["hash", "block_number", "from_address", "value"]
    >>> sib = siblings_of({"CRYPTO_ETHEREUM_CLASSIC.TRANSACTIONS": cols,
    ...                    "CRYPTO_ETHEREUM.TRANSACTIONS": cols, "CRYPTO_ETHEREUM_CLASSIC.BALANCES": cols})
    >>> sorted(sib)
    ['CRYPTO_ETHEREUM.TRANSACTIONS', 'CRYPTO_ETHEREUM_CLASSIC.TRANSACTIONS']
    >>> groups = SiblingGroups([*sib, "CRYPTO_ETHEREUM_CLASSIC.BALANCES"], sib)
    >>> groups.outfitted("largest Ethereum balances"), groups.outfitted("Ethereum Classic balances")
    (['CRYPTO_ETHEREUM_CLASSIC'], ['CRYPTO_ETHEREUM'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.search.layer_prior import has_layers
from schemarag.runtime.search.named_tables import name_words, question_words
from schemarag.runtime.search.per_artifact import per_artifact
from schemarag.runtime.search.table_families import SPACE, alike_columns


def siblings_of(
    columns: Mapping[str, Sequence[str]], overlap: float = SHIPPED.family_column_overlap
) -> dict[str, str]:
    """``{table: group key}`` for tables with a sibling: a table of the same name (case and
    whitespace aside) sharing at least ``overlap`` of its columns (Jaccard) in a *sibling
    schema*, one that shares such tables for at least ``overlap`` of the smaller schema's tables
    (a lookup copied into one dataset, ``NWS_FORECAST_REGIONS`` in a storms schema beside
    ``GEO_US_BOUNDARIES``, makes no siblings of the two). Tables of one name are clustered by
    their columns, each joining the first cluster whose first member it is alike (``BLOCKS`` of
    two Bitcoin forks is one group, the ``BLOCKS`` of another chain with other columns another).
    Unqualified tables (one schema) have none. Linear in the tables, times the clusters of a
    name and the schemas of a group (a handful each)."""
    by_name: dict[str, list[str]] = {}
    size: dict[str, int] = {}
    for table in columns:
        schema, dot, leaf = table.rpartition(".")
        if dot:
            by_name.setdefault(SPACE.sub("", leaf.lower()), []).append(table)
            size[schema] = size.get(schema, 0) + 1
    groups: dict[str, list[str]] = {}
    shared: dict[tuple[str, str], int] = {}
    for name, members in by_name.items():
        if len(members) < 2:
            continue
        clusters: list[tuple[set[str], list[str]]] = []
        for m in members:
            cols = {c.lower() for c in columns[m]}
            home = next((c for first, c in clusters if alike_columns(first, cols, overlap)), None)
            if home is None:
                clusters.append((cols, [m]))
            else:
                home.append(m)
        for i, (_, group) in enumerate(clusters):
            schemas = sorted({m.rpartition(".")[0] for m in group})
            if len(schemas) >= 2:
                groups[f"{name}#{i}"] = group
                for a, b in combinations(schemas, 2):
                    shared[a, b] = shared.get((a, b), 0) + 1
    kin = {pair for pair, n in shared.items() if n >= overlap * min(size[pair[0]], size[pair[1]])}
    out: dict[str, str] = {}
    for key, group in groups.items():
        schemas = {m.rpartition(".")[0] for m in group}
        related = {s for a, b in combinations(sorted(schemas), 2) if (a, b) in kin for s in (a, b)}
        if len(related) >= 2:
            out.update({m: key for m in group if m.rpartition(".")[0] in related})
    return out


@per_artifact
def table_siblings(art: Any, overlap: float = SHIPPED.family_column_overlap) -> dict[str, str]:
    """:func:`siblings_of` the artifact's tables, once per opened artifact and rule."""
    return siblings_of({t: d.columns for t, d in art.ddl.items()}, overlap)


def schema_fit(schema: str, words: set[str]) -> int:
    """Words of ``schema``'s name (its last part) that ``words`` holds minus those it does not.

    >>> q = question_words("balances of Ethereum Classic addresses")
    >>> schema_fit("CRYPTO_ETHEREUM_CLASSIC", q), schema_fit("CRYPTO_ETHEREUM", q)
    (1, 0)
    """
    return _fit(name_words(schema), words)


def _fit(own: frozenset[str], words: set[str]) -> int:
    """:func:`schema_fit` from the schema name's words (read once per opened version)."""
    named = len(own & words)
    return named - (len(own) - named)


@per_artifact
def sibling_groups(art: Any, overlap: float = SHIPPED.family_column_overlap) -> SiblingGroups:
    """:class:`SiblingGroups` of the artifact's tables, once per opened artifact and rule. A dbt
    index (tables with a ``layer``) has none: its schemas are one (as
    :func:`~.schema_hedge.table_schemas` reads them), and the layer prior, not the schema's
    name, orders a relation's copies across layers."""
    if has_layers(art):
        return SiblingGroups([], {})
    return SiblingGroups(list(art.table_names), table_siblings(art, overlap))


class SiblingGroups:
    """The schemas sibling groups join, each one's tables (indices of ``names``) and its name's
    words, for the prior: per request only the question is tokenized, once."""

    def __init__(self, names: Sequence[str], siblings: Mapping[str, str]) -> None:
        groups: dict[str, set[str]] = {}
        for table, key in siblings.items():
            groups.setdefault(key, set()).add(table.rpartition(".")[0])
        self.groups = [sorted(g) for g in groups.values()]
        wanted = {s for g in self.groups for s in g}
        tables: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            schema = name.rpartition(".")[0]
            if schema in wanted:
                tables.setdefault(schema, []).append(i)
        self.tables = {s: np.asarray(ids, dtype=np.int64) for s, ids in tables.items()}
        self.name_words = {s: name_words(s) for s in self.tables}  # not re-tokenized per request

    def outfitted(self, question: str) -> list[str]:
        """Schemas with a sibling the question fits better (:func:`schema_fit`): the copies of
        ``CRYPTO_ETHEREUM_CLASSIC`` for a question about "Ethereum", and that schema's own tables.

        >>> names = ["ETH.TX", "ETH_CLASSIC.TX", "ETH_CLASSIC.BALANCES"]
        >>> g = SiblingGroups(names, {"ETH.TX": "tx", "ETH_CLASSIC.TX": "tx"})
        >>> g.outfitted("ETH transactions"), g.outfitted("ETH Classic transactions")
        (['ETH_CLASSIC'], ['ETH'])
        """
        if not self.groups:
            return []
        words = question_words(question)
        fit = {s: _fit(own, words) for s, own in self.name_words.items()}
        out: set[str] = set()
        for group in self.groups:
            best = max(fit[s] for s in group)
            out.update(s for s in group if fit[s] < best)
        return sorted(out)


def sibling_prior(scores: np.ndarray, groups: SiblingGroups, question: str, prior: float) -> np.ndarray:
    """``scores`` with every table of an outfitted schema (:meth:`SiblingGroups.outfitted`)
    times ``prior``: the leading schema is then chosen among the schemas the question fits, and
    a table only the worse-fitting sibling has (``CRYPTO_ETHEREUM_CLASSIC.BALANCES``) does not
    lead an Ethereum question either. ``prior`` 1: unchanged."""
    if prior >= 1.0:
        return scores
    out = scores.copy()
    for schema in groups.outfitted(question):
        out[groups.tables[schema]] *= np.float32(prior)
    return out
