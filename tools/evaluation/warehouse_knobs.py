"""Knob families ``schemarag eval --warehouse --cross-validate FAMILY`` compares.

Each candidate is a set of :class:`~schemarag.runtime.ranking.config.RankingConfig` fields to
replace in ``SHIPPED`` (:func:`ranking_config`; a ``calibration`` entry re-scores the question
instead); the first one of a family is the shipped setting, read from ``SHIPPED`` (never
retyped), so a plain run and a cross-validated one share their first column.
"""

from __future__ import annotations

from dataclasses import astuple, replace
from typing import Any

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.ranking.config import SHIPPED, RankingConfig, RouteHedge
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION

S, C = SHIPPED, DEFAULT_CALIBRATION  # every grid's first value is the shipped one, read here
SHIPPED_HEDGE = astuple(S.schema_hedge) if S.schema_hedge is not None else None


def _hedge(h: tuple[float, int, int, int] | None) -> dict[str, Any] | None:
    """A RouteHedge as a JSON-friendly dict (reports carry the candidates as they are)."""
    return None if h is None else dict(zip(("ratio", "lead", "share", "runners"), h, strict=True))


_GRIDS: dict[str, list[dict[str, Any]]] = {
    "join_paths": [{"join_paths": S.join_paths}, {"join_paths": False}],
    # the evidence an FK neighbour needs (x the best table's) to take a place out of turn
    "neighbour_floor": [{"neighbour_floor": f} for f in (S.neighbour_floor, 0.0, 0.1, 0.2)],
    # FK expansion over inferred keys (ratio of the kept table's score a neighbour needs; None:
    # declared keys only) x join-path completion (shipped: in one database; off). Completion of
    # only the first 3 / 5 kept tables was in this grid until 2026-11-27 and no fold chose it
    # (docs/ranking.md "Tried, not shipped").
    "joins": [
        {"inferred_ratio": ratio, "join_paths": paths}
        for ratio in (S.inferred_ratio, 0.5, 0.3, 0.7, 0.9)
        for paths in (S.join_paths, False)
    ],
    # places a family of near-identical tables may take (None: no limit; table_families.py) x
    # how many members the question's numbers name may come first
    "families": [
        {"family_slots": s, "family_named": n}
        for s in (S.family_slots, None, 2, 3)
        for n in (S.family_named, 4)
    ],
    # hedging between the schemas of one database (schema_hedge.py): RouteHedge variants
    # (ratio, lead, share, runners) or off
    "schemas": [
        {"schema_hedge": _hedge(h)}
        for h in (SHIPPED_HEDGE, None, (0.5, 5, 3, 2), (0.3, 5, 3, 2), (0.7, 5, 3, 2), (0.5, 10, 3, 2))
    ],
    # score factor of tables outside the leading schema (schema_hedge.schema_prior_order; 1: off),
    # with and without schema hedging after it
    "schema_prior": [
        {"schema_prior": p, "schema_hedge": _hedge(h)}
        for h in (SHIPPED_HEDGE, None)
        for p in (S.schema_prior, 1.0, 0.8, 0.6, 0.4, 0.2, 0.1)
    ],
    # all together: family places and named members x FK expansion over inferred keys x schema
    # prior x schema hedging (the shipped setting first). Join-path completion is left to
    # `joins`: no fold of the earlier grids chose it.
    "warehouse": [
        {
            "family_slots": s,
            "family_named": n,
            "inferred_ratio": ratio,
            "schema_prior": prior,
            "schema_hedge": _hedge(h),
        }
        for s in (S.family_slots, None, 2, 3)
        for n in (S.family_named, 4)
        for ratio in (S.inferred_ratio, 0.7)
        for prior in (S.schema_prior, 1.0)
        for h in (SHIPPED_HEDGE, None, (0.5, 5, 3, 2))
    ],
    # a constant added to the score of each table the question names (named_tables.py) x whether
    # named tables keep their score under the schema prior x the weight of index
    # terms the question's capitalised names abbreviate (acronyms.py; re-scores the question) x
    # whether a name word the question writes in full names too (indiv: "individual")
    "names": [
        {"name_boost": b, "named_exempt": e, "name_shortened": short, "calibration": {"acronym_weight": a}}
        for b in (S.name_boost, 0.0, 0.5, 0.7, 1.0)
        for e in (S.named_exempt, True)
        for a in (C.acronym_weight, 1.0)
        for short in (S.name_shortened, False)
    ],
    # name words through common short forms ("year" names CENSUSTRACT_2018_5YR's yr;
    # abbreviations.GENERAL) x the named-table boost x words a name of three or more may lack
    "vocabulary": [
        {"name_abbreviations": a, "name_boost": b, "name_missing": m}
        for a in (S.name_abbreviations, False)
        for b in (S.name_boost, 0.5, 0.0)
        for m in (S.name_missing, 0)
    ],
    # a table's score times its coverage of the question's words to a power (0: off;
    # ranking.evidence.table_coverage) x whether a question word names the glued name word it
    # begins ("bike" -> bikeshare; named_tables.NamePostings.extended)
    "evidence": [
        {"coverage_power": p, "name_extended": e}
        for p in (S.coverage_power, 0.0, 0.1)
        for e in (S.name_extended, False)
    ],
    # places a structural family (tables of one schema with the same columns; table_families.
    # structures_of) may take for members the question does not name (None: no limit)
    "structures": [{"structure_slots": s} for s in (S.structure_slots, None, 1, 3)],
    # sibling schemas (sibling_schemas.py): the score factor of every table of a schema whose
    # sibling the question fits better (1: off)
    "siblings": [{"sibling_prior": p} for p in dict.fromkeys((S.sibling_prior, 1.0, 0.3, 0.7))],
    # dated tables (dated_tables.py): the score factor of a same-named table covering none of the
    # question's years when another covers one (1: off)
    "years": [
        {"year_prior": p, "year_prior_wide": w}
        for p in dict.fromkeys((S.year_prior, 1.0, 0.5, 0.3, 0.1))
        for w in dict.fromkeys((S.year_prior_wide, 1.0, 0.5, 0.2, 0.1, 0.0))
    ],
    # value mentions (value_mentions.py): a mention's best table moves to just after the first `lead`
    # places when it leads the runner-up table by `margin` of its cosine (lead None: off)
    "mentions": [
        {"mention_lead": lead, "mention_margin": m}
        for lead, m in (
            (S.mention_lead, S.mention_margin),
            (None, 0.0),
            (5, 0.0),
            (5, 0.1),
            (8, 0.0),
            (8, 0.05),
            (8, 0.1),
            (3, 0.05),
        )
    ],
    # the chunk score's blend (scoring.Calibration, chosen on BIRD): weight of dense similarity
    # x the floor lexical evidence alone keeps; the question is re-scored per pair
    "calibration": [
        {"calibration": {"w_dense": w, "lexical_alone": a}}
        for w in (C.w_dense, 0.4, 0.5, 0.7, 0.8)
        for a in (C.lexical_alone, 0.5, 0.8)
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


def ranking_config(knobs: dict[str, Any]) -> RankingConfig:
    """A candidate as a :class:`RankingConfig`: ``SHIPPED`` with its fields replaced (a schema
    hedge dict becomes a ``RouteHedge``; ``calibration`` is a scoring, not a ranking knob)."""
    fields = {k: v for k, v in knobs.items() if k != "calibration"}
    if fields.get("schema_hedge") is not None:
        fields["schema_hedge"] = RouteHedge(**fields["schema_hedge"])
    return replace(SHIPPED, **fields)
