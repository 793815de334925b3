"""Knob families ``schemarag eval --warehouse --cross-validate FAMILY`` compares.

Each candidate is a set of keyword arguments of
:func:`~schemarag.runtime.search.table_ranking.rank_tables_from_scores`; the first one of a
family is the shipped setting, so a plain run and a cross-validated one share their first column.
Kept free of heavy imports: the eval command's argument parser reads the family names.
"""

from __future__ import annotations

from typing import Any

from schemarag.runtime.core.errors import ConfigError


def _hedge(h: tuple[float, int, int, int] | None) -> dict[str, Any] | None:
    """A RouteHedge as a JSON-friendly dict (reports carry the candidates as they are)."""
    return None if h is None else dict(zip(("ratio", "lead", "share", "runners"), h, strict=True))


_GRIDS: dict[str, list[dict[str, Any]]] = {
    "join_paths": [{"join_paths": True}, {"join_paths": False}],
    # FK expansion over inferred keys (ratio of the kept table's score a neighbour needs; None:
    # declared keys only) x join-path completion (all kept tables, off, the first 3 / 5)
    "joins": [
        {"inferred_ratio": ratio, "join_paths": top != 0, "join_top": top or None}
        for ratio in (None, 0.5, 0.3, 0.7, 0.9)
        for top in (None, 0, 3, 5)
    ],
    # places a family of near-identical tables may take (None: no limit; table_families.py) x
    # how many members the question's numbers name may come first
    "families": [{"family_slots": s, "family_named": n} for s in (1, None, 2, 3) for n in (8, 4)],
    # hedging between the schemas of one database (schema_hedge.py): RouteHedge variants
    # (ratio, lead, share, runners) or off
    "schemas": [
        {"schema_hedge": _hedge(h)}
        for h in ((0.5, 3, 2, 3), None, (0.5, 5, 3, 2), (0.3, 5, 3, 2), (0.7, 5, 3, 2), (0.5, 10, 3, 2))
    ],
    # score factor of tables outside the leading schema (schema_hedge.schema_prior_order; 1: off),
    # with and without schema hedging after it
    "schema_prior": [
        {"schema_prior": p, "schema_hedge": _hedge(h)}
        for h in ((0.5, 3, 2, 3), None)
        for p in (0.3, 1.0, 0.8, 0.6, 0.4, 0.2, 0.1)
    ],
    # all together: family places and named members x FK expansion over inferred keys x schema
    # prior x schema hedging (the shipped setting first: slots 1, named 8, no inferred-key expansion,
    # schema prior 0.3, schema hedge (0.5, 3, 2, 3)). Join-path completion is left to
    # `joins`: no fold of the earlier grids chose it.
    "warehouse": [
        {
            "family_slots": s,
            "family_named": n,
            "inferred_ratio": ratio,
            "schema_prior": prior,
            "schema_hedge": _hedge(h),
        }
        for s in (1, None, 2, 3)
        for n in (8, 4)
        for ratio in (None, 0.7)
        for prior in (0.3, 1.0)
        for h in ((0.5, 3, 2, 3), None, (0.5, 5, 3, 2))
    ],
    # a constant added to the score of each table the question names (named_tables.py) x which
    # tables keep their score under the schema prior (none, named tables) x the weight of index
    # terms the question's capitalised names abbreviate (acronyms.py; re-scores the question) x
    # whether a name word the question writes in full names too (indiv: "individual")
    "names": [
        {"name_boost": b, "named_exempt": e, "name_shortened": short, "calibration": {"acronym_weight": a}}
        for b in (0.3, 0.0, 0.5, 0.7, 1.0)
        for e in ("none", "tables")
        for a in (0.0, 1.0)
        for short in (True, False)
    ],
    # name words through common short forms ("year" names CENSUSTRACT_2018_5YR's yr;
    # abbreviations.GENERAL) x the named-table boost x words a name of three or more may lack
    "vocabulary": [
        {"name_abbreviations": a, "name_boost": b, "name_missing": m}
        for a in (True, False)
        for b in (0.3, 0.5, 0.0)
        for m in (1, 0)
    ],
    # a table's score times its coverage of the question's words to a power (0: off;
    # table_ranking.table_coverage) x whether a question word names the glued name word it
    # begins ("bike" -> bikeshare; named_tables.NamePostings.extended)
    "evidence": [{"coverage_power": p, "name_extended": e} for p in (0.2, 0.0, 0.1) for e in (True, False)],
    # places a structural family (tables of one schema with the same columns; table_families.
    # structures_of) may take for members the question does not name (None: no limit)
    "structures": [{"structure_slots": s} for s in (2, None, 1, 3)],
    # value mentions (value_mentions.py): a mention's best table moves to just after the first `lead`
    # places when it leads the runner-up table by `margin` of its cosine (lead None: off)
    "mentions": [
        {"mention_lead": lead, "mention_margin": m}
        for lead, m in ((5, 0.05), (None, 0.0), (5, 0.0), (5, 0.1), (8, 0.0), (8, 0.05), (8, 0.1), (3, 0.05))
    ],
    # the chunk score's blend (scoring.Calibration, chosen on BIRD): weight of dense similarity
    # x the floor lexical evidence alone keeps; the question is re-scored per pair
    "calibration": [
        {"calibration": {"w_dense": w, "lexical_alone": a}}
        for w in (0.6, 0.4, 0.5, 0.7, 0.8)
        for a in (0.65, 0.5, 0.8)
    ],
}
WAREHOUSE_FAMILIES: tuple[str, ...] = tuple(_GRIDS)


def knob_grid(family: str | None) -> list[dict[str, Any]]:
    """The candidates of ``family`` (None: only the shipped setting).

    >>> knob_grid(None)
    [{}]
    """
    if family is None:
        return [{}]
    if family not in _GRIDS:
        raise ConfigError(
            f"--cross-validate {family!r} has no warehouse grid; use one of {', '.join(WAREHOUSE_FAMILIES)}"
        )
    return [dict(c) for c in _GRIDS[family]]


def ranking_kwargs(knobs: dict[str, Any]) -> dict[str, Any]:
    """A candidate as keyword arguments of ``rank_tables_from_scores`` (a schema hedge dict
    becomes a :class:`~schemarag.runtime.search.table_ranking.RouteHedge`)."""
    knobs = {k: v for k, v in knobs.items() if k != "calibration"}  # a scoring, not a ranking knob
    hedge = knobs.get("schema_hedge")
    if hedge is None:
        return knobs
    from schemarag.runtime.search.table_ranking import RouteHedge

    return {**knobs, "schema_hedge": RouteHedge(**hedge)}
