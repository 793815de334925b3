"""Query-side matchers the evaluation switches against the shipped Calibration.

One place for ``schemarag eval --abbreviations`` (opt-in) and ``--no-compounds`` (ablation), so
the BIRD harness and the warehouse run evaluate the same weights.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from schemarag.runtime.search.abbreviations import ABBREVIATION_WEIGHT


def opt_in_calibration(abbreviations: bool = False, compounds: bool = True) -> dict[str, float]:
    """Calibration fields to override: abbreviations on (off when shipped), compound words off
    (on when shipped, ``Calibration.compound_weight``).

    >>> opt_in_calibration(abbreviations=True, compounds=False)
    {'abbreviation_weight': 0.8, 'compound_weight': 0.0}
    """
    out: dict[str, float] = {}
    if abbreviations:
        out["abbreviation_weight"] = ABBREVIATION_WEIGHT
    if not compounds:
        out["compound_weight"] = 0.0
    return out


def apply_opt_in(retriever: Any, overrides: dict[str, float]) -> None:
    """Set ``overrides`` on an opened retriever's calibration (nothing when empty)."""
    if overrides:
        retriever.calibration = replace(retriever.calibration, **overrides)
