"""Stages 17-19: what each kept table shows, its shard hint, and the compact focus's size cap.

* :func:`columns`: tables scoring at least ``table_ratio`` of the best are *strong*; each keeps
  its best columns (``columns_by_rank``: more for better-ranked tables), every column scoring
  ``column_ratio`` of the best column anywhere, and columns the question names. Weak tables
  keep only join and label columns. Join columns (PK, FKs, FK targets, and ``*_id``/``*_code``
  names shared with another table) and label columns (``*name``, ``title``) are always kept,
  without their description; only focused columns carry one. A weak table with neither keeps
  its best-scoring column, so no kept table renders as an empty ``CREATE TABLE x ( );``. The
  other columns of a strong table (of every kept table with ``rest_tables="all"``) are listed
  by name only, so a column the ranking missed is still in the prompt at a few tokens.
  ``context_share`` caps the whole focused schema at a share of the full one (``format_ranking``
  thins the lowest-ranked tables).
  A column's *role* (:func:`column_role`: time, measure, key, or descriptive, from its name and
  type) meets what the question asks (:class:`QuestionAsks`: an aggregate, a period, an entity
  it names): a strong table also keeps every time column when the question asks for a period,
  its best measure when it asks for an aggregate, and the keys of what it names; those columns
  lead the table's focused list, descriptive labels close it (issue 40, item 5). With a query
  history, the columns it reads come first and a strong table keeps its most-used ones (issue 38).
* :func:`shard_hints`: a collapsed shard family the question's dates point into says which
  members (:mod:`~schemarag.runtime.search.shard_hints`).
* :func:`compact_cap`: a capped focus exists to be *smaller*: its cap is also bounded by the
  size of the default focus for the same tables, so ``compact`` is never the larger prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.artifact.naming import join_like
from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.ranking.candidates import Candidates
from schemarag.runtime.ranking.config import ColumnPolicy, RankingConfig, focus_name
from schemarag.runtime.search.per_artifact import per_artifact
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
    """``(columns, described, compact)`` per table: what to show as DDL (the columns a reader
    needs first, see :meth:`_TableFocus.lead_first`), what of that to describe, and the other
    columns to list by name only (both in schema order)."""
    strong_set = set(_strong_tables(art, tables, table_score, policy.table_ratio))
    per_table = art.table_column_chunks
    col_scores = {t: {c: float(rel[idx].max()) for c, idx in per_table.get(t, ())} for t in tables}
    best_col = max((v for t in strong_set for v in col_scores[t].values()), default=0.0)
    asks = QuestionAsks.of(question)
    used = history_columns(art, tables)
    joined = history_join_columns(art, tables) if policy.history_keys else {}
    shown: dict[str, list[str]] = {}
    described: dict[str, list[str]] = {}
    compact: dict[str, list[str]] = {}
    rank = 0
    for t in tables:
        keep: int | None = None  # best-scoring columns a strong table keeps (None: a weak table)
        if t in strong_set:
            keep = policy.columns_by_rank[min(rank, len(policy.columns_by_rank) - 1)]
            rank += 1
        focus = _TableFocus(art, t, col_scores[t], asks, used.get(t, []), joined.get(t, set()))
        rich = focus.rich(policy.column_ratio * best_col, keep, policy.history_weak)
        ddl = art.ddl[t]
        shown[t] = focus.lead_first([c for c in ddl.columns if c in rich or c in focus.keys])
        described[t] = [c for c in ddl.columns if c in rich]
        if policy.rest_tables == "all" or (policy.rest_tables == "strong" and t in strong_set):
            compact[t] = [c for c in ddl.columns if c not in rich and c not in focus.keys]
    return shown, described, compact


# Item 5 of issue 40: what a question asks of a column's *role*. General English only (how people
# ask for an aggregate or a period), never a dataset's vocabulary.
def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


MEASURE_WORDS = _word_set(
    "total sum average avg mean highest lowest maximum minimum max min most least largest smallest "
    "biggest greatest higher lower more less fewer exceed exceeds exceeding ratio percentage percent "
    "proportion much"
)
TIME_WORDS = _word_set(
    "date dates year years month months week weeks day days daily weekly monthly yearly annual "
    "annually quarter quarterly hour hours when recent recently latest earliest oldest newest since "
    "until ago period january february march april june july august september october november "
    "december"
)
_YEAR_OR_DATE = re.compile(r"\b(?:1[89]|20)\d\d\b|\b\d{1,4}[/-]\d{1,2}\b")
# name words of a column that holds a point in time, or an amount (when its type does not say)
TIME_NAME_WORDS = _word_set("date time timestamp datetime year month day week quarter hour dt")
MEASURE_NAME_WORDS = _word_set(
    "amount price cost total sum count quantity qty revenue balance fee salary spend value"
)
# an identifier's name words ("number" and "no" are left out: number_of_orders is a measure)
KEY_NAME_WORDS = frozenset({"id", "code", "key", "uuid"})
_NAME_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_NUMERIC_TYPE = re.compile(
    r"^\s*(?:u?(?:tiny|small|medium|big)?int(?:eger)?\d*|decimal|numeric|number|bignumeric|"
    r"float\d*|double|real|money|smallmoney)\b",
    re.IGNORECASE,
)
_TIME_TYPE = re.compile(r"^\s*(?:date|datetime\d*|timestamp\w*|time\w*|interval|year)\b", re.IGNORECASE)


@dataclass(frozen=True)
class QuestionAsks:
    """What a question asks of columns: its words (normalised and BM25 tokens), and whether it
    asks for an aggregate (a measure) or a period (a time column)."""

    text: str  # the question as ``_norm`` writes it (for names the question spells out)
    tokens: frozenset[str]  # the question's BM25 tokens (for names the question uses word by word)
    measure: bool
    time: bool

    @classmethod
    def of(cls, question: str) -> QuestionAsks:
        """
        >>> a = QuestionAsks.of("Total revenue by month")
        >>> a.measure, a.time, QuestionAsks.of("Which customers placed orders in 2012?").time
        (True, True, True)
        """
        words = set(_WORDS.split(question.lower()))
        time = bool(words & TIME_WORDS) or bool(_YEAR_OR_DATE.search(question))
        return cls(_norm(question), frozenset(tokenize(question)), bool(words & MEASURE_WORDS), time)


@lru_cache(maxsize=1 << 16)
def column_role(name: str, type_text: str) -> str:
    """``"time"``, ``"measure"``, ``"key"`` or ``""`` (descriptive), from the column's name and
    type alone: a time type or a time word in the name is a time column; an id- or code-like name
    a key; a numeric type, or an amount word in the name, a measure.

    >>> [column_role(n, t) for n, t in (("created_timestamp", "TEXT"), ("total_price", "NUMERIC"),
    ...     ("customer_id", "INTEGER"), ("billing_city", "TEXT"), ("OpenDate", "DATE"))]
    ['time', 'measure', 'key', '', 'time']
    """
    words = {w.lower() for w in _NAME_WORDS.findall(name)}
    if (
        _TIME_TYPE.match(type_text)
        or words & TIME_NAME_WORDS
        or (len(words) > 1 and name.lower().endswith("_at"))
    ):
        return "time"
    if join_like(name) or words & KEY_NAME_WORDS:
        return "key"
    if _NUMERIC_TYPE.match(type_text) or words & MEASURE_NAME_WORDS:
        return "measure"
    return ""


def history_columns(art: IndexArtifact, tables: list[str]) -> dict[str, list[str]]:
    """Per table of ``tables``, the columns its query history reads, most runs first (issue 38);
    empty without a history, so a version built without one ranks exactly as before."""
    by_table = _history_columns_by_table(art)
    return {t: by_table[t] for t in tables if t in by_table}


def history_join_columns(art: IndexArtifact, tables: list[str]) -> dict[str, set[str]]:
    """Per table of ``tables``, its columns the query history joins on with another of
    ``tables``: the keys a key-less warehouse's SQL needs to join what was kept (issue 38);
    empty without a history."""
    partners = _history_join_partners(art)
    if not partners:
        return {}
    kept = set(tables)
    out: dict[str, set[str]] = {}
    for t in tables:
        for other, cols in partners.get(t, {}).items():
            if other in kept and other != t:
                out.setdefault(t, set()).update(cols)
    return out


@per_artifact
def _history_join_partners(art: IndexArtifact) -> dict[str, dict[str, set[str]]]:
    """Per table, per table it is logged joining with, its own join columns: once per opened
    version (a request only looks up its kept tables)."""
    history = art.history
    if not history.present or not history.joins.shape[0]:
        return {}
    names, ddl = art.table_names, art.ddl
    out: dict[str, dict[str, set[str]]] = {}
    for lt, lc, rt, rc in np.asarray(history.joins)[:, :4].tolist():
        left, right = names[lt], names[rt]
        out.setdefault(left, {}).setdefault(right, set()).add(ddl[left].columns[lc])
        out.setdefault(right, {}).setdefault(left, set()).add(ddl[right].columns[rc])
    return out


@per_artifact
def _history_columns_by_table(art: IndexArtifact) -> dict[str, list[str]]:
    """Every table's history columns, most runs first then schema order: once per opened
    version (a request only picks its kept tables; sorting them per request cost 0.36 ms of a
    5 ms search on a 10,000-statement history)."""
    history = art.history
    if not history.present or not history.columns.shape[0]:
        return {}
    rows = np.asarray(history.columns)  # table, column position, runs, statements; sorted by table
    order = np.lexsort((rows[:, 1], -rows[:, 2], rows[:, 0]))  # per table: most runs, then schema order
    out: dict[str, list[str]] = {}
    names = art.table_names
    for t, c in rows[order, :2].tolist():
        table = names[t]
        out.setdefault(table, []).append(art.ddl[table].columns[c])
    return out


class _TableFocus:
    """One kept table's columns as a question sees them: which it names, which are keys (declared,
    implicit, or ``joined``: logged joins with another kept table), and which play the role
    (measure, time, key) the question points at."""

    def __init__(
        self,
        art: IndexArtifact,
        table: str,
        scores: dict[str, float],
        asks: QuestionAsks,
        used: list[str],
        joined: set[str],
    ) -> None:
        self.scores, self.asks, self.used = scores, asks, used
        self.ddl = art.ddl[table]
        name_tokens = art.column_name_tokens
        self.named = {c for c in scores if len(c) > 2 and _norm(c) in asks.text}
        self.named |= {c for c in scores if name_tokens.get(c) and name_tokens[c] <= asks.tokens}
        keys = set(self.ddl.key_columns) | art.implicit_join_columns.get(table, set()) | joined
        self.labels = {c for c in self.ddl.columns if label_like(c)}
        self.keys = keys | self.labels  # always shown (labels: what a question naming an entity reads)
        schema_table = art.schema.table(table)
        types = {c.name: c.type for c in schema_table.columns} if schema_table is not None else {}
        self.roles = {c: column_role(c, types.get(c, "")) for c in self.ddl.columns}
        self.pointed = [c for c in self.ddl.columns if self._points_at(c, name_tokens.get(c, frozenset()))]

    def _points_at(self, column: str, tokens: frozenset[str]) -> bool:
        """The question asks for this column's role: a measure or time column when it asks for an
        aggregate or a period, a key when it names what the key identifies (customers: customer_id)."""
        role = self.roles[column]
        if role == "key":
            return bool(tokens & (self.asks.tokens - KEY_NAME_WORDS))
        return (role == "measure" and self.asks.measure) or (role == "time" and self.asks.time)

    def rich(self, floor: float, keep: int | None, weak_used: int = 0) -> set[str]:
        """Columns shown as DDL with their description: the named ones; for a strong table
        (``keep`` set) also its ``keep`` best-scoring, every column scoring ``floor`` or more,
        its ``keep`` most-used in the history, and the columns of a role the question points at:
        the keys it names, every time column when it asks for a period (a question rarely says
        which date: created, shipped, updated), and when it asks for an aggregate its
        best-scoring measure unless one is kept already (a question usually names the amount).
        A weak table shows its ``weak_used`` most-used columns in the history besides its keys
        (the lookup value analysts filter on, which a coded name does not mark as a label); one
        without a key, label or history column keeps its best-scoring one."""
        rich = set(self.named)
        cs = self.scores
        if keep is None:  # a weak table: its keys and labels; without any, still its best column
            rich |= set([c for c in self.used if c not in self.keys][:weak_used])
            if rich or self.keys & set(self.ddl.columns):
                return rich
            return set(sorted(cs, key=lambda c: (-cs[c], c))[:1] or self.ddl.columns[:1])
        rich |= set(sorted(cs, key=lambda c: (-cs[c], c))[:keep]) | {c for c, v in cs.items() if v >= floor}
        rich |= set(self.used[:keep])
        rich |= {c for c in self.pointed if self.roles[c] in ("key", "time")}
        measures = [c for c in self.pointed if self.roles[c] == "measure"]
        if measures and not any(c in rich for c in measures):
            rich.add(max(measures, key=lambda c: cs.get(c, -1.0)))  # ties: the first in the schema
        return rich

    def lead_first(self, columns: list[str]) -> list[str]:
        """``columns`` (schema order) reordered for a reader: the history's columns (most runs
        first), then the focused columns the question points at (measures, time columns, keys),
        the other columns, and the descriptive labels last. The DDL itself keeps the schema's
        order (a table's column order is part of its definition)."""
        shown = set(columns)
        lead = [c for c in self.used if c in shown]
        lead += [c for c in self.pointed if c in shown and c not in lead]
        rest = [c for c in columns if c not in lead]
        return lead + [c for c in rest if c not in self.labels] + [c for c in rest if c in self.labels]
