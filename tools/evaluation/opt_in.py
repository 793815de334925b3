"""Opt-in query-side matching the evaluation can switch on (off in the shipped Calibration).

One place for ``schemarag eval --abbreviations`` / ``--compounds``, so the BIRD harness and the
warehouse run evaluate the same weights.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from schemarag.runtime.search.abbreviations import ABBREVIATION_WEIGHT

COMPOUND_WEIGHT = 1.0  # an index term two adjacent question words spell ("census tract")


def opt_in_calibration(abbreviations: bool = False, compounds: bool = False) -> dict[str, float]:
    """Calibration fields to override for the opt-in matchers asked for.

    >>> opt_in_calibration(compounds=True)
    {'compound_weight': 1.0}
    """
    out: dict[str, float] = {}
    if abbreviations:
        out["abbreviation_weight"] = ABBREVIATION_WEIGHT
    if compounds:
        out["compound_weight"] = COMPOUND_WEIGHT
    return out


def apply_opt_in(retriever: Any, overrides: dict[str, float]) -> None:
    """Set ``overrides`` on an opened retriever's calibration (nothing when empty)."""
    if overrides:
        retriever.calibration = replace(retriever.calibration, **overrides)
