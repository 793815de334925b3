"""The path of a question's chunk scores to its focused tables: one pipeline of named stages.

Read top to bottom, :data:`STAGES` is the whole ranking. Each stage is a function
``stage(c: Candidates, config: RankingConfig) -> None`` over one
:class:`~.candidates.Candidates` (a module of its own says why it exists and what it reads):

1. ``evidence``     table scores from chunk relevance, times the dbt layer prior      (evidence)
2. ``coverage``     score x coverage of the question's words, in one database         (evidence)
3. ``name_boost``   a table the question names gets a constant added                  (evidence)
4. ``popularity``   tables the query history uses a little forward (no history: off)  (history)
5. ``co_usage``     tables the history reads with the best matches move up            (history)
6. ``examples``     the past queries most like the question lift the tables they read (history)
7. ``sibling_prior`` of two sibling schemas (CRYPTO_ETHEREUM / CRYPTO_ETHEREUM_CLASSIC),
                    the one the question's words fit worse scores less                (routing)
8. ``year_prior``   of same-named tables of different years (vehicle_2015 / _2016), those
                    covering none of the question's years score less; so, less, do
                    other tables of other years when one covers the question's        (routing)
9. ``routing``      a union's best source database first, close runner-ups hedged     (routing)
10. ``schema_order`` one database's leading schema first, runner-up schemas hedged    (routing)
11. ``families``    numbered families (GSOD2014 .. GSOD2023) take few places          (reorder)
12. ``structures``  tables with the same columns take few places                      (reorder)
13. ``twins``       a table exported twice takes one place                            (reorder)
14. ``mentions``    a value the question names brings its table forward               (reorder)
15. ``budget``      tables up to the budget, FK neighbours and tables the history
                    reads with them after the table they join                         (budget)
16. ``join_paths``  bridge tables that connect the kept ones (logged joins included)  (budget)
17. ``columns``     what each kept table shows                                        (columns)
18. ``shard_hints`` the shards a question's dates point into                          (columns)
19. ``compact_cap`` a capped focus never larger than the default one                  (columns)

:func:`rank` is the only entry: the retriever (every serving surface), ``eval``, its
cross-validation and the warehouse grids all call it, with :data:`~.config.SHIPPED` or a
``dataclasses.replace`` of it, so what is measured is what is served.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.ranking import budget as budget_stages
from schemarag.runtime.ranking import columns as column_stages
from schemarag.runtime.ranking import evidence as evidence_stages
from schemarag.runtime.ranking import history as history_stages
from schemarag.runtime.ranking import reorder, routing
from schemarag.runtime.ranking.candidates import Candidates, RankingRequest
from schemarag.runtime.ranking.config import SHIPPED, RankingConfig
from schemarag.runtime.search.results import TableRanking

Stage = Callable[[Candidates, RankingConfig], None]

STAGES: tuple[tuple[str, Stage], ...] = (
    ("evidence", evidence_stages.evidence),
    ("coverage", evidence_stages.coverage),
    ("name_boost", evidence_stages.name_boost),
    ("popularity", history_stages.popularity),
    ("co_usage", history_stages.co_usage_prior),
    ("examples", history_stages.example_evidence),
    ("sibling_prior", routing.sibling_prior),
    ("year_prior", routing.year_prior),
    ("routing", routing.routing),
    ("schema_order", routing.schema_order),
    ("families", reorder.families),
    ("structures", reorder.structures),
    ("twins", reorder.twins),
    ("mentions", reorder.mentions),
    ("budget", budget_stages.budget),
    ("join_paths", budget_stages.join_paths),
    ("columns", column_stages.columns),
    ("shard_hints", column_stages.shard_hints),
    ("compact_cap", column_stages.compact_cap),
)


def rank(
    art: IndexArtifact, rel: np.ndarray, ask: RankingRequest, config: RankingConfig = SHIPPED
) -> TableRanking:
    """The focused schema's tables for ``ask`` (at most ``ask.budget``) from the chunk
    relevances ``rel`` of one index version ``art``, and what each table shows."""
    c = Candidates.start(art, rel, ask)
    for _, stage in STAGES:
        stage(c, config)
    assert c.ranking is not None
    return c.ranking


def kept_by_budget(
    art: IndexArtifact,
    rel: np.ndarray,
    ask: RankingRequest,
    budgets: list[int],
    config: RankingConfig = SHIPPED,
) -> dict[int, list[str]]:
    """The tables :func:`rank` keeps at each of ``budgets`` (``ask.budget`` is ignored), for a
    knob grid: the stages before ``budget`` do not read the budget, so they run once, and the
    column stages, which keep no other table, not at all. Equal to ``rank(...).tables`` per budget
    (``tests/runtime/ranking/test_stages.py``)."""
    c = Candidates.start(art, rel, ask)
    names = [n for n, _ in STAGES]
    first_budget, first_column = names.index("budget"), names.index("columns")
    for _, stage in STAGES[:first_budget]:
        stage(c, config)
    out: dict[int, list[str]] = {}
    for b in budgets:
        one = replace(c, ask=replace(ask, budget=b))
        for _, stage in STAGES[first_budget:first_column]:
            stage(one, config)
        out[b] = list(one.kept)
    return out


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
