"""Leave-one-database-out (LODO) knob selection: the cross-validated figure ``eval`` reports.

A knob (column policy, score calibration, adaptive-budget confidence, join-path completion)
tuned on the questions it is scored on flatters the result. Here every question is scored
once per candidate setting, then for each database ``d`` the candidate that maximises the
objective on the *other* databases' questions is applied to ``d``'s questions; the held-out
records of all databases make the reported figure. The candidate that wins on all databases
is reported as the value to ship (it was never scored held-out, so its own figure is not).

Scoring is split so the grid is cheap: the query embedding, cosines and lexical coverage of
each question window are computed once (:func:`collect`); a candidate only re-fuses them with
its calibration and re-ranks (:func:`records_for`), exactly as the retriever and the
formatter would at query time.

Example (objective ``columns``: best column SRR among settings whose context ratio is at
most 0.30, else the smallest ratio):
    >>> pick = objective("columns", max_ratio=0.3, max_tables=8.0)
    >>> pick({"column_srr": 0.97, "context_ratio": 0.28}) > pick({"column_srr": 0.99, "context_ratio": 0.4})
    True
"""

from __future__ import annotations

import itertools
import logging
import pickle
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.ranking.candidates import RankingRequest
from schemarag.runtime.ranking.config import (
    DEFAULT_COLUMN_POLICY,
    SHIPPED,
    AdaptiveBudget,
    ColumnPolicy,
    RankingConfig,
    RouteHedge,
    adaptive_knobs,
)
from schemarag.runtime.ranking.pipeline import rank as rank_tables
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION, Calibration
from schemarag.tools.evaluation.metrics import aggregate

log = logging.getLogger(__name__)

# Bumped when :class:`Scored` changes shape: a cache of another format is rescored, not misread.
CACHE_FORMAT = 2  # 2: value-mention hits per question
FAMILIES = ("columns", "tables", "adaptive", "routing", "hedging", "neighbours")
# ColumnPolicy.context_share candidates (size cap as a share of the full schema)
CONTEXT_SHARES = (0.2, 0.25, 0.3)


@dataclass(frozen=True)
class Knobs:
    """One candidate setting of every query-time knob: the chunk scoring's calibration, the
    column policy and adaptive budget a request would ask for, and the ranking config (a
    ``replace`` of SHIPPED, never retyped values)."""

    calibration: Calibration = DEFAULT_CALIBRATION
    policy: ColumnPolicy = DEFAULT_COLUMN_POLICY
    adaptive: AdaptiveBudget | None = None
    ranking: RankingConfig = SHIPPED

    @property
    def confidence(self) -> float | None:
        return self.adaptive.confidence if self.adaptive is not None else None

    def describe(self) -> dict[str, Any]:
        cal, pol = self.calibration, self.policy
        return {
            "cos_floor": cal.cos_floor,
            "cos_full": cal.cos_full,
            "w_dense": cal.w_dense,
            "lexical_alone": cal.lexical_alone,
            "table_ratio": pol.table_ratio,
            "columns_by_rank": list(pol.columns_by_rank),
            "column_ratio": pol.column_ratio,
            "rest_tables": pol.rest_tables,
            "context_share": pol.context_share,
            **adaptive_knobs(self.adaptive),
            "join_paths": self.ranking.join_paths,
            "neighbour_floor": self.ranking.neighbour_floor,
            "route_coverage": self.ranking.route_coverage,
            "route_hedge": None if self.ranking.route_hedge is None else asdict(self.ranking.route_hedge),
        }


def grid(family: str, base: Knobs | None = None, small: bool = False) -> list[Knobs]:
    """Candidates for one knob family; the other knobs stay at ``base``. ``small``: a fixed
    subset for slow machines (names-only lists on every kept table, one column ratio)."""
    base = base or Knobs()
    if family == "columns":  # what each kept table shows, how many weak tables stay, and the size cap
        return [
            replace(
                base,
                policy=ColumnPolicy(tr, cbr, cr, rest, share),
                adaptive=AdaptiveBudget(conf) if conf is not None else None,
            )
            for tr, cbr, cr, rest, share, conf in itertools.product(
                (0.3, 0.5),
                ((6, 3, 1), (3, 2, 1)),
                (0.55,) if small else (0.55, 0.7),
                ("all",) if small else ("strong", "all"),
                (None, *CONTEXT_SHARES),
                (None, 0.6),
            )
        ]
    if family == "tables":  # cos_floor around the model's own (0.1, 0.15, 0.2 for MiniLM-L6)
        floor = base.calibration.cos_floor
        cals = [
            replace(base.calibration, cos_floor=round(floor + d, 3), w_dense=w, lexical_alone=la)
            for d, w, la in itertools.product((-0.05, 0.0, 0.05), (0.4, 0.6), (0.5, 0.65, 0.8))
        ]
        return [
            replace(base, calibration=c, ranking=replace(base.ranking, join_paths=j))
            for c in cals
            for j in (False, True)
        ]
    if family == "routing":  # weight of term coverage in union routing (0 = table evidence only)
        return [
            replace(base, ranking=replace(base.ranking, route_coverage=p))
            for p in (0.0, 0.25, 0.5, 0.75, 1.0)
        ]
    if family == "hedging":  # places for close runner-up databases in union routing (None = off)
        hedges = [RouteHedge(*p) for p in itertools.product((0.5, 0.6, 0.7), (5, 6), (3, 4), (1, 2, 3))]
        return [replace(base, ranking=replace(base.ranking, route_hedge=h)) for h in (None, *hedges)]
    if family == "neighbours":  # the evidence an FK neighbour needs to take a place out of turn
        return [
            replace(base, ranking=replace(base.ranking, neighbour_floor=f))
            for f in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3)
        ]
    if family == "adaptive":  # confidence cut x floor of tables x routing margin
        levels = (0.4, 0.6) if small else (0.4, 0.5, 0.6, 0.7)
        floors = (1, 5) if small else (1, 3, 4, 5, 6)
        margins = (None, 0.6) if small else (None, 0.6, 0.7, 0.8)
        return [
            replace(base, adaptive=AdaptiveBudget(c, m, g))
            for c, m, g in itertools.product(levels, floors, margins)
        ]
    raise ConfigError(f"unknown knob family {family!r}; use one of {', '.join(FAMILIES)}")


def objective(family: str, max_ratio: float, max_tables: float) -> Callable[[dict[str, Any]], tuple]:
    """A sort key over aggregate metrics (larger is better) for a knob family."""

    def columns(m: dict[str, Any]) -> tuple:  # ties on SRR go to more columns shown as DDL
        ok = m["context_ratio"] <= max_ratio
        return (ok, m["column_srr"] if ok else -m["context_ratio"], m.get("column_srr_ddl", 0.0))

    def tables(m: dict[str, Any]) -> tuple:
        cr = m.get("complete_recall") or {}
        return (float(np.mean(list(cr.values()))) if cr else 0.0,)

    def adaptive(m: dict[str, Any]) -> tuple:
        ok = m["mean_tables_kept"] <= max_tables
        top = str(m["metrics_budget"])
        return (ok, m["complete_recall"][top] if ok else -m["mean_tables_kept"])

    by_family = {
        "columns": columns,
        "tables": tables,
        "adaptive": adaptive,
        "routing": tables,
        "hedging": tables,
    }
    return {**by_family, "neighbours": tables}[family]


@dataclass
class Scored:
    """One question's knob-independent scoring: per window (cosines, lexical, named chunks)."""

    db_id: str
    source: str
    text: str
    gold_tables: list[str]
    gold_columns: dict[str, list[str]]
    windows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)
    # the question's value mentions and their tables, as serving ranks with them (empty for a union)
    hits: list[Any] = field(default_factory=list)


def relevance(scored: Scored, cal: Calibration) -> np.ndarray:
    """The retriever's hybrid relevance of every chunk under ``cal`` (best window per chunk)."""
    from schemarag.runtime.search.scoring import boost_mentions, dense_normalised, fuse

    best: np.ndarray | None = None
    for cos, lex, named in scored.windows:
        rel = fuse(dense_normalised(cos, cal), lex, cal)
        if named.size:
            boost_mentions(rel, named, cal)
        best = rel if best is None else np.maximum(best, rel)
    assert best is not None
    return best


def lodo(
    per_knob: Sequence[Sequence[dict[str, Any]]],
    dbs: Sequence[str],
    budgets: Sequence[int],
    key: Callable[[dict[str, Any]], tuple],
    agg: Callable[[Sequence[dict[str, Any]], Sequence[int]], dict[str, Any]] = aggregate,
) -> tuple[list[dict[str, Any]], dict[str, int], int]:
    """``(held-out records, chosen candidate per held-out db, candidate chosen on all dbs)``.

    ``per_knob[k][i]`` is question ``i``'s record under candidate ``k``; ``dbs[i]`` its
    database. Ties go to the earlier candidate.

    >>> recs = [[{"x": 1}, {"x": 0}], [{"x": 0}, {"x": 1}]]   # candidate 0 wins on a, 1 on b
    >>> count = lambda rs, b: {"x": sum(r["x"] for r in rs)}
    >>> held, chosen, overall = lodo(recs, ["a", "b"], [1], lambda m: (m["x"],), count)
    >>> chosen   # a is scored with the winner on b, and b with the winner on a
    {'a': 1, 'b': 0}
    >>> [r["x"] for r in held]   # so both held-out questions miss
    [0, 0]
    """

    def best(rows: list[int]) -> int:
        keys = [key(agg([recs[i] for i in rows], budgets)) for recs in per_knob]
        return max(range(len(keys)), key=lambda k: (keys[k], -k))

    index: dict[str, list[int]] = {}
    for i, d in enumerate(dbs):
        index.setdefault(d, []).append(i)
    chosen: dict[str, int] = {}
    held: list[dict[str, Any]] = [{} for _ in dbs]
    for d, rows in index.items():
        train = [i for i, other in enumerate(dbs) if other != d]
        chosen[d] = best(train) if train else 0
        for i in rows:
            held[i] = per_knob[chosen[d]][i]
    return held, chosen, best(list(range(len(dbs))))


def collect(questions: Sequence[Any], sources: dict[str, Any], config: Any) -> list[Scored]:
    """Knob-independent scoring of every question (``sources``: the harness's datasources,
    filled on demand with ``open_source(name)``)."""
    from schemarag.runtime.core.text_tokens import identifier_mentions
    from schemarag.runtime.search.query_terms import lexical_coverage, query_terms
    from schemarag.runtime.search.retriever import question_windows
    from schemarag.tools.evaluation.gold import gold_from_sql
    from schemarag.tools.evaluation.harness import _open, _view

    out: list[Scored] = []
    for n, q in enumerate(questions, start=1):
        name = config.union or q.db_id
        if name not in sources:
            sources[name] = _open(name, config)
        source = sources[name]
        art = source.retriever.artifact
        gold = gold_from_sql(q.sql, _view(source, q.db_id, bool(config.union)), source.db.dialect)
        text = q.text(config.with_evidence)
        windows = question_windows(text)
        vecs = source.retriever.embedder.query_embed(list(windows))
        item = Scored(q.db_id, name, text, gold.tables, gold.columns)
        for w, vec in zip(windows, vecs, strict=True):
            cos = np.asarray(art.embeddings @ vec, dtype=np.float32)
            lex = lexical_coverage(art, query_terms(art, w, source.retriever.calibration))
            named = [art.column_chunks[m] for m in identifier_mentions(w) if m in art.column_chunks]
            item.windows.append((cos, lex, np.concatenate(named) if named else np.zeros(0, dtype=np.int64)))
        item.hits = list(source.retriever.mention_hits(text, art))
        out.append(item)
        if config.progress and (n % config.progress_every == 0 or n == len(questions)):
            config.progress(n, len(questions))
    return out


def load_or_collect(
    path: Path | None, questions: Sequence[Any], sources: dict[str, Any], config: Any
) -> list[Scored]:
    """:func:`collect`, cached in ``path`` (a pickle this tool wrote: the embeddings of a question
    set are the slow part, and a new grid needs none of them recomputed). The cache records the
    index version of every source and the question texts; a rebuilt index or another question
    set recomputes it instead of scoring stale cosines."""
    from schemarag.tools.evaluation.harness import _open

    stamp = {"format": CACHE_FORMAT, "questions": [q.text(config.with_evidence) for q in questions]}
    if path is not None and path.is_file():
        with open(path, "rb") as fh:
            cached = pickle.load(fh)  # our own cache file, written below (never a download)
        if isinstance(cached, dict) and all(cached.get(k) == v for k, v in stamp.items()):
            for name in cached["keys"]:
                sources.setdefault(name, _open(name, config))
            if all(sources[n].retriever.artifact.key == k for n, k in cached["keys"].items()):
                return cached["scored"]
        log.info("%s: stale or foreign score cache (index rebuilt or other questions); rescoring", path)
    scored = collect(questions, sources, config)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        keys = {s.source: sources[s.source].retriever.artifact.key for s in scored}
        with open(path, "wb") as fh:
            pickle.dump({**stamp, "keys": keys, "scored": scored}, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return scored


def records_for(
    scored: Sequence[Scored],
    sources: dict[str, Any],
    knobs: Knobs,
    budgets: Sequence[int],
    rels: Iterable[np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """Per question, the harness record (kept tables per budget, shown columns, tokens) under
    ``knobs``; ``rels``: each question's :func:`relevance` under ``knobs.calibration`` when the
    caller has it already (computed here otherwise)."""
    from schemarag.runtime.artifact.chunk_model import estimate_tokens
    from schemarag.runtime.formatting import focused_parts
    from schemarag.tools.evaluation.harness import shown_columns

    top = max(budgets)
    out = []
    if rels is None:  # one question's at a time: a grid over a union's questions holds no list of them
        rels = (relevance(item, knobs.calibration) for item in scored)
    for item, rel in zip(scored, rels, strict=True):
        source = sources[item.source]
        art = source.retriever.artifact

        def rank(budget: int, art=art, rel=rel, item=item):
            ask = RankingRequest(
                item.text,
                budget,
                knobs.policy,
                knobs.adaptive,
                item.hits,
                True,
                knobs.calibration,
                cap_to_default=False,
            )
            return rank_tables(art, rel, ask, knobs.ranking)

        ranking = rank(top)
        levels, parts = focused_parts(source.db, ranking, source.ddl)
        kept = {b: list(rank(b).tables) for b in budgets if b != top}
        kept[top] = list(ranking.tables)
        out.append(
            {
                "kept_by_budget": kept,
                "kept_columns": shown_columns(source, ranking, levels),
                "ddl_columns": shown_columns(source, ranking, levels, ddl_only=True),
                "focused_tokens": estimate_tokens("\n\n".join(parts.values())),
                "full_tokens": source.full_tokens,
                "latency_ms": 0.0,  # not timed here; the plain eval times the shipped setting
                "gold_tables": item.gold_tables,
                "gold_columns": item.gold_columns,
            }
        )
    return out


def cross_validate(
    scored: Sequence[Scored],
    sources: dict[str, Any],
    family: str,
    budgets: Sequence[int],
    max_ratio: float = 0.30,
    max_tables: float = 8.0,
    base: Knobs | None = None,
    small: bool = False,
) -> dict[str, Any]:
    """The LODO figure for one knob family, the knob each fold chose, and the one to ship.
    ``base`` defaults to the shipped knobs with the indexes' model's calibration."""
    if base is None and sources:
        base = Knobs(calibration=next(iter(sources.values())).retriever.calibration)
    candidates = grid(family, base, small)
    key = objective(family, max_ratio, max_tables)
    per_knob = []
    for k, knobs in enumerate(candidates, start=1):
        per_knob.append(records_for(scored, sources, knobs, budgets))
        log.info("knob candidate %d/%d scored", k, len(candidates))
    dbs = [s.db_id for s in scored]
    held, chosen, overall = lodo(per_knob, dbs, budgets, key)
    in_sample = aggregate(per_knob[overall], budgets)
    return {
        "family": family,
        "protocol": "leave-one-database-out: each database scored with the knob chosen on the others",
        "objective": {
            "columns": f"max column SRR s.t. context ratio <= {max_ratio}",
            "tables": "max mean CR over the budgets",
            "routing": "max mean CR over the budgets",
            "hedging": "max mean CR over the budgets",
            "neighbours": "max mean CR over the budgets",
            "adaptive": f"max CR@{max(budgets)} s.t. mean tables kept <= {max_tables}",
        }[family],
        "candidates": len(candidates),
        "cross_validated": aggregate(held, budgets),
        "chosen_per_held_out_db": {d: candidates[k].describe() for d, k in sorted(chosen.items())},
        "chosen_on_all": candidates[overall].describe(),
        "in_sample_of_chosen_on_all": in_sample,
        "in_sample_per_candidate": [
            {"knobs": c.describe(), **_recall_and_size(aggregate(recs, budgets))}
            for c, recs in zip(candidates, per_knob, strict=True)
        ],
    }


def _recall_and_size(m: dict[str, Any]) -> dict[str, Any]:
    """What a reader compares candidates by: CR per budget, tables kept, context ratio."""
    return {k: m.get(k) for k in ("complete_recall", "mean_tables_kept", "context_ratio", "column_srr")}
