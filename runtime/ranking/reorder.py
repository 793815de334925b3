"""Stages 11-14: passes over the routed order that give crowded groups fewer places.

* :func:`families`: tables equal but for their numbers (``GSOD2014`` .. ``GSOD2023``,
  ``events_20230118``; :mod:`~schemarag.runtime.search.table_families`) take at most
  ``family_slots`` places, the members the question's years or dates name first.
* :func:`structures`: a *structural* family (three or more tables of one schema with the same
  columns: ``co_daily_summary`` .. ``voc_daily_summary``) takes at most ``structure_slots``
  places for the members the question does not name. Not in a union.
* :func:`twins`: tables equal but for whitespace (one relation exported twice) take one place.
* :func:`mentions`: a value the question names that no chunk holds ("California",
  "psoriasis"), embedded alone, moves its best table to just after the first ``mention_lead``
  places when it leads the runner-up clearly (:mod:`~schemarag.runtime.search.value_mentions`).
  Not in a union.

Members and tables past their places are not dropped: they follow every other table, so a
budget the rest of the database does not fill still shows them.
"""

from __future__ import annotations

from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import RankingConfig
from schemarag.runtime.search.table_families import (
    family_order,
    structure_order,
    table_families,
    table_structures,
    table_twins,
    twins_last,
)
from schemarag.runtime.search.value_mentions import move_mentions


def families(c: Candidates, config: RankingConfig) -> None:
    """Numbered families take at most ``family_slots`` places (None: no limit)."""
    names = c.art.table_names
    c.ranked = [names[i] for i in c.order.tolist()]
    c.queue = c.ranked
    if config.family_slots is not None:
        families = table_families(c.art, config.family_min_members, config.family_column_overlap)
        c.queue = family_order(
            c.ranked, families, c.question, config.family_slots, config.family_named, config.year_span_max
        )


def structures(c: Candidates, config: RankingConfig) -> None:
    """Structural families take at most ``structure_slots`` places for unnamed members."""
    if config.structure_slots is not None and c.single:
        structures = table_structures(
            c.art, config.family_min_members, config.structure_min_columns, config.family_column_overlap
        )
        c.queue = structure_order(c.queue, structures, c.named_set, config.structure_slots)


def twins(c: Candidates, config: RankingConfig) -> None:
    """A whitespace twin follows every other table (no knob: one relation, one place)."""
    c.queue = twins_last(c.queue, table_twins(c.art))


def mentions(c: Candidates, config: RankingConfig) -> None:
    """Clear value mentions move their tables to just after the first ``mention_lead`` places."""
    if not c.ask.mentions or config.mention_lead is None or not c.single:
        return
    names = c.art.table_names
    picks = [names[h.table] for h in c.ask.mentions if h.clear(config.mention_margin)]
    c.queue = move_mentions(c.queue, picks, config.mention_lead)
