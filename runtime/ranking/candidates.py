"""The one structure every ranking stage reads and writes, and the question's own request.

A stage (:mod:`.pipeline`) has one signature, ``stage(c: Candidates, config: RankingConfig)``:
it reads what earlier stages left in ``c`` and sets its own fields. Keeping the whole state in
one value makes each stage testable alone on a few synthetic tables, and the pipeline's order
the only thing that says which stage sees what.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from schemarag.runtime.ranking.config import AdaptiveBudget, ColumnPolicy
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION, Calibration
from schemarag.runtime.search.value_mentions import MentionHit


@dataclass(frozen=True)
class RankingRequest:
    """What one question asks: at most ``budget`` tables, shown under ``policy`` (None: the
    config's default focus), optionally an adaptive budget; ``mentions`` are its value mentions
    (the retriever embeds them); ``fk_expand`` False is the evaluation's ablation without FK
    neighbours; ``calibration`` the scoring's (routing and coverage read the same postings)."""

    question: str
    budget: int
    policy: ColumnPolicy | None = None
    adaptive: AdaptiveBudget | None = None
    mentions: Sequence[MentionHit] = ()
    fk_expand: bool = True
    calibration: Calibration = DEFAULT_CALIBRATION
    cap_to_default: bool = True


@dataclass
class Candidates:
    """A question's tables on their way through the stages (indices are ``art.table_names``'s).

    ``scores`` order the tables (evidence, then coverage and the name boost); ``calibrated`` are
    the evidence scores in [0, 1] a result reports. ``order`` is the routed table order,
    ``ranked`` its names, ``queue`` the order the budget stage takes tables from (after the
    family, structure, twin and mention passes), ``kept`` the tables taken, ``ranking`` what
    the last stages make of them.
    """

    art: Any
    rel: np.ndarray
    ask: RankingRequest
    single: bool = True  # one source database (not a union)
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    calibrated: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    named: np.ndarray | None = None  # bool per table: the question names it
    keep_score: np.ndarray | None = None  # bool per table: exempt from the schema prior
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    margin: float = 0.0  # runner-up database's routing score over the winner's (0: one database)
    ranked: list[str] = field(default_factory=list)
    queue: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    ranking: TableRanking | None = None  # the result, from the columns stage on

    @classmethod
    def start(cls, art: Any, rel: np.ndarray, ask: RankingRequest) -> Candidates:
        return cls(art, rel, ask, single=len(art.table_sources[1]) <= 1)

    @property
    def question(self) -> str:
        return self.ask.question

    @property
    def named_set(self) -> set[str]:
        """Names of the tables the question names (empty when no stage looked)."""
        if self.named is None:
            return set()
        names = self.art.table_names
        return {names[i] for i in np.flatnonzero(self.named).tolist()}

    def score_of(self) -> dict[str, float]:
        """Ordering score per table name."""
        return dict(zip(self.art.table_names, self.scores.tolist(), strict=True))
