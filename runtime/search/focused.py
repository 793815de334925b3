"""The one retrieval every surface serves by default, and that ``schemarag eval --focus`` measures.

``retrieve``, ``generate``, ``Retriever.search``, ``POST /v1/retrieve``/``/v1/schema`` and the MCP
tools all return the *table ranking*: at most :data:`DEFAULT_TABLE_BUDGET` tables ranked from all
evidence, foreign-key neighbours taken when the ranking scores them (not every neighbour of every
hit), each table showing its focused columns. That is the selection the README's quality figures
are measured on. The top chunks stay in every result as the evidence behind it.

:func:`focused_ranking` is the single place a focus is turned into a ranking, so the serving
surfaces and the evaluation cannot drift apart. It adds one rule of its own: the ``compact``
focus exists to be *smaller*; its cap (30 % of the full schema) is therefore also bounded by the
size of the ``default`` focus for the same tables, so ``compact`` is never the larger prompt.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.shard_hints import shard_hints
from schemarag.runtime.search.table_ranking import (
    DEFAULT_COLUMN_POLICY,
    DEFAULT_FOCUS_TABLE_BUDGET,
    AdaptiveBudget,
    ColumnPolicy,
    focus_name,
    rank_tables_from_scores,
    select_columns,
)

# Tables a focused schema holds unless the caller says otherwise: the budget every figure of the
# README's quality section is measured at.
DEFAULT_TABLE_BUDGET = DEFAULT_FOCUS_TABLE_BUDGET


def focused_ranking(
    art: Any,
    rel: np.ndarray,
    budget: int,
    question: str,
    policy: ColumnPolicy | None = None,
    adaptive: AdaptiveBudget | None = None,
    **ranking_knobs: Any,
) -> TableRanking:
    """The budgeted table ranking for ``question`` from chunk relevances ``rel``, its focus named,
    and a capped focus held to the size of the default one (see the module docstring).

    ``ranking_knobs`` go to :func:`rank_tables_from_scores` (the evaluation's cross-validated
    knobs; the serving surfaces pass only ``calibration``)."""
    ranking = rank_tables_from_scores(
        art, rel, budget, question=question, policy=policy, adaptive=adaptive, **ranking_knobs
    )
    ranking.focus = focus_name(policy or DEFAULT_COLUMN_POLICY)
    ranking.adaptive = adaptive is not None
    ranking.shard_hints = shard_hints(art.schema, ranking.tables, question)
    if ranking.token_budget is not None and (policy or DEFAULT_COLUMN_POLICY) != DEFAULT_COLUMN_POLICY:
        default_size = _default_focus_tokens(art, rel, ranking, question)
        ranking.token_budget = min(ranking.token_budget, default_size)
    return ranking


def _default_focus_tokens(art: Any, rel: np.ndarray, ranking: TableRanking, question: str) -> int:
    """Tokens of the default focus's schema text over the same tables (no docs, no cap)."""
    from schemarag.runtime.formatting import format_ranking

    scores = {t: ranking.scores[t] for t in ranking.tables}
    columns, described, compact = select_columns(
        art, rel, list(ranking.tables), scores, question, DEFAULT_COLUMN_POLICY
    )
    default = TableRanking(
        tables=list(ranking.tables),
        columns=columns,
        scores=scores,
        described=described,
        compact=compact,
        shard_hints=ranking.shard_hints,
    )
    return estimate_tokens(format_ranking(art.schema, default, art.ddl))


def neighbour_picks(ranking: TableRanking) -> list[str]:
    """Kept tables that entered out of score order, as a foreign-key neighbour (or join-path
    table) of a better-ranked kept table: the FK neighbours the ranking chose.

    >>> r = TableRanking(tables=["a", "c", "b"], ranked=["a", "b", "c"])
    >>> neighbour_picks(r)  # c was taken with a before b's turn
    ['c']
    """
    picked: list[str] = []
    seen: set[str] = set()
    order = iter(ranking.ranked)
    upcoming = next(order, None)
    for table in ranking.tables:
        while upcoming is not None and upcoming in seen:
            upcoming = next(order, None)
        if table == upcoming:
            upcoming = next(order, None)
        else:
            picked.append(table)
        seen.add(table)
    return picked
