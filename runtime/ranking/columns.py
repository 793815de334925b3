"""Stages 12-14: what each kept table shows, its shard hint, and the compact focus's size cap.

* :func:`columns`: tables scoring at least ``table_ratio`` of the best are *strong*; each keeps
  its best columns (``columns_by_rank``: more for better-ranked tables), every column scoring
  ``column_ratio`` of the best column anywhere, and columns the question names. Weak tables
  keep only join and label columns. Join columns (PK, FKs, FK targets, and ``*_id``/``*_code``
  names shared with another table) and label columns (``*name``, ``title``) are always kept,
  without their description; only focused columns carry one. The other columns of a strong
  table (of every kept table with ``rest_tables="all"``) are listed by name only, so a column
  the ranking missed is still in the prompt at a few tokens. ``context_share`` caps the whole
  focused schema at a share of the full one (``format_ranking`` thins the lowest-ranked tables).
* :func:`shard_hints`: a collapsed shard family the question's dates point into says which
  members (:mod:`~schemarag.runtime.search.shard_hints`).
* :func:`compact_cap`: a capped focus exists to be *smaller*: its cap is also bounded by the
  size of the default focus for the same tables, so ``compact`` is never the larger prompt.
"""

from __future__ import annotations

import re

import numpy as np

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import ColumnPolicy, RankingConfig, focus_name
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.shard_hints import shard_hints as hints_for


def columns(c: Candidates, config: RankingConfig) -> None:
    """``c.ranking``: the kept tables with their calibrated scores and the columns each shows."""
    policy = c.ask.policy or config.default_columns
    evidence = dict(zip(c.art.table_names, c.calibrated.tolist(), strict=True))
    scores = {t: evidence[t] for t in c.kept}
    shown, described, compact = select_columns(c.art, c.rel, c.kept, scores, c.question, policy)
    c.ranking = TableRanking(
        tables=c.kept,
        columns=shown,
        scores=scores,
        ranked=c.ranked,
        described=described,
        compact=compact,
        token_budget=share_budget(c.art, c.kept, policy.context_share),
        focus=focus_name(policy, config),
        adaptive=c.ask.adaptive is not None,
    )


def shard_hints(c: Candidates, config: RankingConfig) -> None:
    """The shard members the question's dates name, per collapsed family kept."""
    assert c.ranking is not None
    c.ranking.shard_hints = hints_for(c.art.schema, c.ranking.tables, c.question)


def compact_cap(c: Candidates, config: RankingConfig) -> None:
    """A capped focus other than the default is held to the default focus's size."""
    ranking = c.ranking
    assert ranking is not None
    policy = c.ask.policy or config.default_columns
    if ranking.token_budget is None or policy == config.default_columns or not c.ask.cap_to_default:
        return
    ranking.token_budget = min(ranking.token_budget, _default_focus_tokens(c, config))


def _default_focus_tokens(c: Candidates, config: RankingConfig) -> int:
    """Tokens of the default focus's schema text over the same tables (no docs, no cap)."""
    from schemarag.runtime.formatting import format_ranking

    ranking = c.ranking
    assert ranking is not None
    scores = {t: ranking.scores[t] for t in ranking.tables}
    tables = list(ranking.tables)
    shown, described, compact = select_columns(
        c.art, c.rel, tables, scores, c.question, config.default_columns
    )
    default = TableRanking(
        tables=tables,
        columns=shown,
        scores=scores,
        described=described,
        compact=compact,
        shard_hints=ranking.shard_hints,
    )
    return estimate_tokens(format_ranking(c.art.schema, default, c.art.ddl))


def share_budget(art: IndexArtifact, tables: list[str], share: float | None) -> int | None:
    """Tokens allowed by ``share`` of the full schema of the databases ``tables`` come from
    (their union source, or the whole index): a ratio that means the same on a 7-table
    database and in a 600-table union. Lengths were summed once per opened version."""
    if share is None:
        return None
    of = art.table_source
    chars = sum(int(art.source_schema_chars[i]) for i in {of[t] for t in tables if t in of})
    return max(1, int(share * chars / 4))  # ~4 characters per token, as estimate_tokens


_WORDS = re.compile(r"[^a-z0-9]+")


def _norm(text: str) -> str:
    return " " + _WORDS.sub(" ", text.lower()).strip() + " "


LABEL_WORDS = ("name", "title", "label")  # general English for "what a thing is called"


def label_like(column: str) -> bool:
    """Human-readable labels: a name ending in a general-English label word (``name``,
    ``full_name``, ``surname``, ``title``, ``label``): what a question naming an entity
    ("Lewis Hamilton", "the set Coldsnap") filters or shows.

    >>> [c for c in ("surname", "Title", "name_id", "status") if label_like(c)]
    ['surname', 'Title']
    """
    return column.lower().endswith(LABEL_WORDS)


def _strong_tables(
    art: IndexArtifact, tables: list[str], table_score: dict[str, float], ratio: float
) -> list[str]:
    """Tables scoring at least ``ratio`` of the best, plus any bridge between two of them (a
    bridge between two strong tables is part of the join path), in ``tables`` order then bridges."""
    top = max((table_score[t] for t in tables), default=0.0)
    strong = [t for t in tables if table_score[t] >= ratio * top and top > 0]
    strong_set = set(strong)
    for t in tables:
        if t not in strong_set and len(art.schema.neighbours(t) & strong_set) >= 2:
            strong.append(t)
            strong_set.add(t)
    return strong


def select_columns(
    art: IndexArtifact,
    rel: np.ndarray,
    tables: list[str],
    table_score: dict[str, float],
    question: str,
    policy: ColumnPolicy,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, list[str]]]:
    """``(columns, described, compact)`` per table, in schema order: what to show as DDL, what
    of that to describe, and the other columns to list by name only."""
    strong_set = set(_strong_tables(art, tables, table_score, policy.table_ratio))
    per_table = art.table_column_chunks
    col_scores = {t: {c: float(rel[idx].max()) for c, idx in per_table.get(t, ())} for t in tables}
    best_col = max((v for t in strong_set for v in col_scores[t].values()), default=0.0)
    asked = _norm(question)
    asked_tokens = set(tokenize(question))
    name_tokens = art.column_name_tokens
    shown: dict[str, list[str]] = {}
    described: dict[str, list[str]] = {}
    compact: dict[str, list[str]] = {}
    rank = 0
    for t in tables:
        cs = col_scores[t]
        named = {c for c in cs if len(c) > 2 and _norm(c) in asked}
        named |= {c for c in cs if name_tokens.get(c) and name_tokens[c] <= asked_tokens}
        rich = named
        if t in strong_set:
            n = policy.columns_by_rank[min(rank, len(policy.columns_by_rank) - 1)]
            rank += 1
            ordered = sorted(cs, key=lambda c: (-cs[c], c))
            rich = (
                set(ordered[:n]) | {c for c, v in cs.items() if v >= policy.column_ratio * best_col} | named
            )
        ddl = art.ddl[t]
        keys = set(ddl.key_columns) | art.implicit_join_columns.get(t, set())
        keys |= {c for c in ddl.columns if label_like(c)}
        shown[t] = [c for c in ddl.columns if c in rich or c in keys]
        described[t] = [c for c in ddl.columns if c in rich]
        if policy.rest_tables == "all" or (policy.rest_tables == "strong" and t in strong_set):
            compact[t] = [c for c in ddl.columns if c not in rich and c not in keys]
    return shown, described, compact
