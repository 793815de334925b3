"""From chunk relevance to a budgeted table list: aggregation, routing, FK expansion.

* **Table evidence**: a table's score is its best chunk plus a little of its next two
  (several chunks agreeing beat one lucky match), so ``orders`` outranks a table that merely
  mentions orders once.
* **Routing**: in a union index (tables whose ``Table.database`` says which source database
  they come from), source databases are ranked by their best tables times the square root
  (``ROUTE_COVERAGE_POWER``) of their *term coverage*, and the winning database's tables come
  first: a question is about one database, and a focused schema mixing two is rarely
  answerable. Coverage is the share of the question's words found anywhere in a database,
  each word weighted by how few databases use it: one distractor table matching one word
  strongly loses to the database that holds all of the question's rarer words. (On BirdUnion
  nearly every table miss at 10 was a routing miss: the right database's tables ranked in its
  own top 10 for 100 of the 105 misses.) **Hedging** (``RouteHedge``): when up to two
  runner-up databases score at least half the winner's, the winner's best five tables come
  first, then each runner-up's best three, then the winner's other tables: an uncertain
  routing no longer spends a whole budget on one large wrong database.
* **Schema hedging** (``schema_hedge``): the same rule between the schemas of one database
  (BigQuery datasets, Snowflake schemas; :mod:`.schema_hedge`), softly: the first ``lead``
  places stay in score order, then close runner-up schemas' best tables, so one large dataset's
  near-matches do not take every place. Before it, the **schema prior** (``schema_prior``)
  ranks tables outside the leading schema at that share of their score, as routing puts the
  routed database first: the leading dataset's lookup before other datasets' near-matches.
* **Named tables** (``name_boost``): a table whose name's every word is in the question
  ("planet features points", "zip codes", "concepts"; :mod:`.named_tables`) gets a constant
  added to its score, so it is not lost among hundreds of tables sharing the question's other
  words (fifty ``PLACES_<STATE>`` tables, every ACS table with an income column).
* **Coverage** (``coverage_power``): tables are ordered by their score times their coverage
  of the question's words (:func:`table_coverage`: routing's term coverage per table, words
  weighted by how few tables hold them) to a small power, so a table holding several of the
  question's rarer words comes before one matching a single word strongly. Not in a union:
  routing already weighs each database's coverage, and inside the routed database table
  coverage cost BirdUnion held-out questions. The reported scores stay calibrated.
* **Adaptive budget** (``AdaptiveBudget``): stop adding tables once the next table's
  calibrated score falls below ``confidence`` times the best (the budget stays the ceiling),
  but not before ``min_tables``, and in a union only when routing is sure (the runner-up
  database scores below ``sure_margin`` times the winner's). A question that asks for several
  tables (:mod:`.join_signal`: tables of the routed database it names, "for each", "per",
  "and their" ...) raises that floor by ``join_floor`` tables per sign: widened, not cut.
* **Join paths** (``join_paths``): a kept table not connected to the better-ranked kept tables
  brings the tables on its cheapest join path to them (at most JOIN_PATH_HOPS hops, declared
  edges cheaper than inferred ones: :mod:`.join_graph`), inserted right after it, so budget goes
  to connectivity before the lowest-ranked lexical matches; ``join_top`` limits this to the
  first kept tables. On by default in a single-database index (``JOIN_PATHS``), not in a union.
* **Families** (``family_slots``): tables equal but for their numbers (``GSOD2014`` ..
  ``GSOD2023``, ``DAY._20230118``; :mod:`.table_families`) take at most that many places,
  the members the question's year/date names first; tables equal but for whitespace (one
  relation exported twice) take one place (``table_families.twins_last``). A *structural*
  family (``structure_slots``: tables of one schema with the same columns, ``co_daily_summary``
  .. ``voc_daily_summary``) takes at most that many places for the members the question does
  not name (``table_families.structure_order``); not in a union.
* **Value mentions** (``mention_lead``): question words no chunk holds that look like values
  ("California", "psoriasis"), embedded alone, find their table by its best chunk's cosine
  (:mod:`.value_mentions`; the retriever computes them); a clear one moves its table to just
  after the first ``mention_lead`` places. Not in a union.
* **Column focus**: tables scoring at least ``table_ratio`` of the best are *strong*; each
  keeps its best columns (``columns_by_rank``: more for better-ranked tables), every column
  scoring ``column_ratio`` of the best column anywhere, and columns the question names. Weak
  tables keep only join and label columns. Join columns (PK, FKs, FK targets, and ``*_id``/
  ``*Id``/``*_code`` names shared with another table: joined on even where no FK is declared)
  and label columns (``*name``, ``title``) are always kept, without their
  description; only focused columns carry one. The other columns of a strong table (of every
  kept table with ``rest_tables="all"``) are listed by name only (``compact``), so a column
  the ranking missed is still in the prompt at a few tokens. A column counts as named when
  the question contains its name, or every word of it (stemmed). ``context_share`` caps the
  whole focused schema at a share of the full one: ``format_ranking`` then thins the
  lowest-ranked tables to a line of names (``formatting.DETAIL_LEVELS``).
* **FK expansion** under the budget: after each table, its FK neighbours with comparable
  evidence are pulled forward, so join partners arrive with the table that needs them:
  declared neighbours first (score >= NEIGHBOUR_RATIO of the table's), then neighbours over an
  inferred key (score >= ``inferred_ratio`` of it; None: never), so an inferred edge never
  outranks a declared one. A lookup table joined to a kept fact table comes with it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from schemarag.runtime.artifact.reader import IndexArtifact
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import did_you_mean
from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.search.group_scores import group_scores
from schemarag.runtime.search.join_graph import DECLARED_COST, cheapest_path, join_edges
from schemarag.runtime.search.join_signal import join_signal
from schemarag.runtime.search.layer_prior import apply_layer_prior, consumer_layer
from schemarag.runtime.search.named_tables import in_named_schema, named_tables
from schemarag.runtime.search.query_terms import query_terms
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.schema_hedge import hedge_order, schema_prior_order, table_schemas
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION, Calibration
from schemarag.runtime.search.table_families import (
    family_order,
    structure_order,
    table_families,
    table_structures,
    table_twins,
    twins_last,
)
from schemarag.runtime.search.value_mentions import MentionHit, move_mentions

SECOND_WEIGHT = 0.3
NEIGHBOUR_RATIO = 0.5
JOIN_PATH_HOPS = 3
# Exponent of term coverage in a source database's routing score (0 = table evidence alone).
# Chosen by leave-one-database-out on BIRD dev over BirdUnion (`schemarag eval --cross-validate
# routing`): all 11 folds pick 0.5.
ROUTE_COVERAGE_POWER = 0.5
# Places a family of near-identical tables (GSOD2014 .. GSOD2023: table_families.py) may take
# in the budget; None: no limit (every member ranks on its own). Chosen by leave-one-database-out
# on Spider 2.0-lite (`schemarag eval --warehouse ... --cross-validate families`): all 49
# Snowflake folds pick 1 (nontrivial CR@20 0.722 -> 0.819); SQLite has no such families.
# Members beyond the family's places follow every other table (table_families.family_order), so
# a budget the rest of the database does not fill still shows them.
FAMILY_SLOTS: int | None = 1
# Members of a family the question's numbers name that may come first ("2018" names four
# quarterly tables; "from 2011 to 2018" the two years it compares, each in 1yr and 5yr).
# Chosen by leave-one-database-out on Spider 2.0-lite, all three engines, 158 databases
# (`schemarag eval --warehouse ... --cross-validate warehouse`, 2026-11-26, indexes built with
# each text embedded alone): 157 of 158 folds pick family_slots 1, family_named 8,
# inferred_ratio None, SCHEMA_PRIOR 0.3 and SCHEMA_HEDGE below (the other: family_named 4).
FAMILY_NAMED = 8
# Score ratio an inferred-key neighbour needs to follow a kept table (FK expansion); None: never.
# Earlier grids (without schema hedging) chose 0.7 in every fold; with families, schema hedging,
# compound words and the schema prior the folds choose None (above; without the schema prior
# they chose 0.7 in 153 of 158, within a question or two of None at every budget). The keys
# still mark the DDL and make the join graph that join-path completion (`join_paths`) walks.
INFERRED_NEIGHBOUR_RATIO: float | None = None
# Join-path completion (complete_join_paths): True / False everywhere; None: in a single-database
# index, not in a union (routing picks the database there, and the BIRD folds never chose it).
# Chosen by leave-one-database-out on Spider 2.0-lite (`schemarag eval --warehouse ...
# --cross-validate joins`, 2026-11-27, seventh round, with structural families and value
# mentions): 156 of 158 folds pick completion of every kept table without inferred-key expansion;
# held out CR@5/10/20 0.737/0.903/0.963 against 0.742/0.899/0.962 without (docs/ranking.md
# "Using them at query time"). Earlier rounds' folds did not choose it.
JOIN_PATHS: bool | None = None


def table_scores(art: IndexArtifact, rel: np.ndarray) -> np.ndarray:
    """Per table: best chunk + SECOND_WEIGHT * mean of the next two, rescaled to [0, 1]."""
    n_tables = len(art.table_names)
    ct = art.chunk_table
    mask = ct >= 0
    idx, vals = ct[mask], rel[mask]
    order = np.lexsort((-vals, idx))  # by table, then descending score
    idx, vals = idx[order], vals[order]
    tables = np.arange(n_tables)
    starts = np.searchsorted(idx, tables, side="left")
    ends = np.searchsorted(idx, tables, side="right")
    padded = np.concatenate([vals, np.zeros(3, dtype=vals.dtype)])
    out = np.zeros(n_tables, dtype=np.float32)
    for k, weight in ((0, 1.0), (1, SECOND_WEIGHT / 2), (2, SECOND_WEIGHT / 2)):
        present = (starts + k) < ends
        out += np.where(present, padded[np.minimum(starts + k, len(vals))], 0.0).astype(np.float32) * weight
    return out / np.float32(1.0 + SECOND_WEIGHT)


def source_coverage(
    art: IndexArtifact, question: str, cal: Calibration = DEFAULT_CALIBRATION
) -> np.ndarray | None:
    """Per source database of a union: the share of the question's indexed words found in any
    of its chunks, each word weighted by its inverse *source* frequency (BM25's idf over
    databases instead of chunks). ``None`` for a single-source index or no indexed word.

    Reads the postings the build stored (no per-request scanning of docs): linear in the
    postings of the question's words, like BM25 scoring itself. Compound words
    (``Calibration.compound_weight``) and acronyms (``acronym_weight``) count in the chunk
    scores but not here: coverage is about
    the question's own words, and a database that glues two of them (``zipcode``) covers them
    no better than one that keeps them apart (on BirdUnion counting them moved two questions to
    the wrong database).
    """
    n_src = len(art.table_sources[1])
    if n_src <= 1 or not question:
        return None
    return _coverage(art, question, cal, art.chunk_sources, n_src)


def _coverage(
    art: IndexArtifact, question: str, cal: Calibration, chunk_group: np.ndarray, n_groups: int
) -> np.ndarray | None:
    """Per group (a chunk's source database or table, ``chunk_group``; -1: none): the idf-over-
    groups weighted share of the question's indexed words found in any of its chunks (compound
    words and acronyms left out); ``None`` when no question word is indexed."""
    qt = query_terms(art, question, replace(cal, compound_weight=0.0, acronym_weight=0.0))
    group = np.asarray(chunk_group) + 1  # 0 = chunk in no group
    cov = np.zeros(n_groups, dtype=np.float64)
    total = 0.0
    for tid, weight in zip(qt.term_ids, qt.weights, strict=True):
        start, end = int(art.bm25_indptr[tid]), int(art.bm25_indptr[tid + 1])
        present = np.bincount(group[art.bm25_indices[start:end]], minlength=n_groups + 1)[1:] > 0
        n = int(present.sum())
        if n == 0:
            continue
        w = weight * math.log(1.0 + (n_groups - n + 0.5) / (n + 0.5))
        cov[present] += w
        total += w
    return cov / total if total > 0 else None


def table_coverage(
    art: IndexArtifact, question: str, cal: Calibration = DEFAULT_CALIBRATION
) -> np.ndarray | None:
    """Per table: the share of the question's indexed words found in any of its chunks, each
    word weighted by its inverse *table* frequency: :func:`source_coverage` one level down. A
    table matching one question word strongly in one chunk scores as high as one matching
    several of the question's rarer words across its columns; coverage tells them apart.
    ``None`` for an empty question or no indexed word. Linear in the postings of the question's
    words."""
    if not question:
        return None
    return _coverage(art, question, cal, art.chunk_table, len(art.table_names))


@dataclass(frozen=True)
class RouteHedge:
    """Hedged routing: when runner-up databases score close to the winner, they get a few places.

    If up to ``runners`` runner-up sources have a routing score of at least ``ratio`` times the
    winner's, the order is: the winner's best ``lead`` tables, each such runner-up's best
    ``share`` tables (in routing order), the winner's other tables, then the rest by score. A
    clear winner keeps every place, as without hedging; an uncertain one no longer fills a
    whole budget with a large wrong database's tables.
    """

    ratio: float = 0.5
    lead: int = 5
    share: int = 3
    runners: int = 2


# Chosen by leave-one-database-out on BIRD dev over BirdUnion (`schemarag eval --cross-validate
# hedging`, README "Retrieval quality on BIRD"); None turns hedging off.
ROUTE_HEDGE: RouteHedge | None = RouteHedge(ratio=0.5, lead=5, share=3, runners=2)
# The same hedge between the schemas of one database (schema_hedge.py); None: off.
# Chosen by leave-one-database-out on Spider 2.0-lite, all three engines, 158 databases
# (`schemarag eval --warehouse ... --cross-validate warehouse`, 2026-11-26): every fold picks it
# (with the schema prior, family_slots 1 and inferred_ratio None, above).
SCHEMA_HEDGE: RouteHedge | None = RouteHedge(ratio=0.5, lead=3, share=2, runners=3)
# Score factor of tables outside the leading schema of a single-source index before hedging
# (schema_hedge.schema_prior_order); 1.0: off. Chosen by leave-one-database-out on Spider
# 2.0-lite, 158 databases (`schemarag eval --warehouse ... --cross-validate schema_prior`,
# grid 1.0 / 0.8 / 0.6 / 0.4 / 0.3 / 0.2 / 0.1 x schema hedge on/off, 2026-11-26): 156 of 158
# folds pick 0.3 with SCHEMA_HEDGE (held out CR@10 0.861 -> 0.870), and 157 of 158 in the
# `warehouse` grid (above).
SCHEMA_PRIOR = 0.3
# Added to the score of a table the question names (every word of its name is in the question;
# named_tables.py), which tables keep their score under the schema prior besides the leading
# schema's ("none", "tables": named tables, "schemas": also a named schema's tables), and whether
# a name word the question writes in full names too (``indiv``: "individual"). Chosen by
# leave-one-database-out on Spider 2.0-lite, 158 databases (`schemarag eval --warehouse ...
# --cross-validate names`, 2026-11-26; boost 0 / 0.3 / 0.5 / 0.7 / 1.0 x exemption none / tables
# x acronym weight 0 / 1 x shortened words off / on): 150 of 158 folds pick 0.3, no exemption,
# acronym weight 0, shortened words on (7 pick 0.5). Held out nontrivial CR@20 0.888, against
# 0.856 with the boost off; BirdUnion CR@15 unchanged (docs/ranking.md "Named tables").
NAME_BOOST = 0.3
NAMED_EXEMPT = "none"
NAME_SHORTENED = True
# A common short form of a question word names too ("year" -> the yr of CENSUSTRACT_2018_5YR;
# abbreviations.GENERAL), and a name of three words or more may lack one of them
# (RNASEQ_HG38_GDC_R35 for "RNA sequencing hg38 r35"). Chosen by leave-one-database-out on
# Spider 2.0-lite, 158 databases (`schemarag eval --warehouse ... --cross-validate vocabulary`,
# 2026-11-26; short forms on / off x boost 0.3 / 0.5 / 0 x missing words 0 / 1): all 158 folds
# pick both with the boost 0.3. Held out nontrivial CR@20 0.893 -> 0.904 (docs/ranking.md).
NAME_ABBREVIATIONS = True
NAME_MISSING = 1
# A question word names the glued name word it begins ("bike" names BIKESHARE_TRIPS' bikeshare;
# named_tables.NamePostings.extended), and tables are ordered by their score times their
# coverage of the question's words to the power TABLE_COVERAGE (table_coverage; 0: off; not in
# a union, which routes by its databases' coverage instead). Chosen by
# leave-one-database-out on Spider 2.0-lite, 158 databases (`schemarag eval --warehouse ...
# --cross-validate evidence`, 2026-11-27; coverage 0.2 / 0 / 0.1 x glued words on / off): all 158
# folds pick both, held out CR@5 0.720 -> 0.744 (docs/ranking.md "Coverage and glued words").
NAME_EXTENDED = True
TABLE_COVERAGE = 0.2
# Value mentions (value_mentions.py: question words the schema does not know, embedded alone, find
# their table): a mention's best table, when it leads the runner-up by MENTION_MARGIN of its
# cosine, moves to just after the first MENTION_LEAD places; None: off. Not in a union. Chosen
# by leave-one-database-out on Spider 2.0-lite, 158 databases (`schemarag eval --warehouse ...
# --cross-validate mentions`, 2026-11-27, with structural families; lead 5 / off / 8 / 3 x
# margin 0 / 0.05 / 0.1): 157 of 158 folds pick lead 5, margin 0.05; held out CR@10 0.896 ->
# 0.899, CR@5 and CR@20 unchanged (docs/ranking.md "Value mentions").
MENTION_LEAD: int | None = 5
MENTION_MARGIN = 0.05
# The coverage factor of a table holding none of the question's words: 0.05 ** 0.2 = 0.55.
COVERAGE_FLOOR = 0.05
# Places a structural family (three or more tables of one schema with the same column names:
# co_daily_summary .. voc_daily_summary; table_families.structures_of) may take for the members
# the question does not name (named members keep their place; the rest follow every other
# table); None: no limit. Not in a union. Chosen by leave-one-database-out on Spider 2.0-lite,
# 158 databases (`schemarag eval --warehouse ... --cross-validate structures`, 2026-11-27; 2 /
# None / 1 / 3): all 158 folds pick 2, held out nontrivial CR@20 0.893 -> 0.904, CR@10 0.890 ->
# 0.896 (docs/ranking.md "Families").
STRUCTURE_SLOTS: int | None = 2


@dataclass(frozen=True)
class AdaptiveBudget:
    """A per-question number of tables (the table budget stays the ceiling).

    Ranked tables scoring below ``confidence`` times the best are not taken, but never before
    ``min_tables`` are kept, and in a union only when routing is sure: the runner-up database
    scores below ``sure_margin`` times the winner's (``None``: always). An uncertain question
    keeps the whole budget; a clear one stops early. A question that needs several tables
    (:func:`~.join_signal.join_signal`: each named table beyond the first, each join cue) keeps
    at least ``join_floor`` more per sign (0: no widening), the budget still the ceiling.
    """

    confidence: float
    min_tables: int = 1
    sure_margin: float | None = None
    join_floor: int = 0


# Chosen by leave-one-database-out on BIRD dev over BirdUnion (`schemarag eval --cross-validate
# adaptive`, objective: max CR at <= 8 tables kept on average; README "Retrieval quality on BIRD").
ADAPTIVE_BUDGET = AdaptiveBudget(confidence=0.5, min_tables=5, sure_margin=0.7)


def adaptive_knobs(adaptive: AdaptiveBudget | None) -> dict[str, object]:
    """``confidence``, ``min_tables``, ``sure_margin``, ``join_floor`` as evaluation reports
    name them (``confidence`` None: a fixed budget)."""
    if adaptive is None:
        return {"confidence": None, "min_tables": 1, "sure_margin": None, "join_floor": 0}
    return asdict(adaptive)


def route(
    art: IndexArtifact,
    scores: np.ndarray,
    coverage: np.ndarray | None = None,
    coverage_power: float = ROUTE_COVERAGE_POWER,
    hedge: RouteHedge | None = ROUTE_HEDGE,
) -> tuple[np.ndarray, float]:
    """``(order, margin)``: table indices best first (in a union, the best source database's
    tables lead) and the runner-up database's routing score over the winner's (0 for a
    single-source index): how unsure the routing is.

    A source's score is its best table plus half its second, times ``coverage ** power``
    (:func:`source_coverage`) when given; ``hedge`` (:class:`RouteHedge`) gives close
    runner-up sources a few places after the winner's best tables."""
    names = art.table_names
    by_score = np.lexsort((np.arange(len(names)), -scores))
    src_ids, src_names = art.table_sources
    if len(src_names) <= 1:
        return by_score, 0.0
    # best + half the second-best table score per source, among the leading tables
    ordered_src = src_ids[by_score]
    lead_n = min(len(ordered_src), 4 * len(src_names) + 64)
    src_score = group_scores(ordered_src[:lead_n], scores[by_score[:lead_n]], len(src_names))
    if coverage is not None and coverage_power > 0:
        src_score = src_score * np.maximum(coverage, 1e-6) ** coverage_power
    src_order = np.lexsort((-np.arange(len(src_names)), -src_score))
    top_src = int(src_order[0])
    top_score = float(src_score[top_src])
    margin = float(src_score[int(src_order[1])]) / top_score if top_score > 0 else 1.0
    lead = by_score[ordered_src == top_src]
    taken = ordered_src == top_src
    runners: list[np.ndarray] = []
    if hedge is not None and hedge.runners > 0:
        for s in src_order[1 : 1 + hedge.runners].tolist():
            if src_score[s] < hedge.ratio * src_score[top_src] or src_score[s] <= 0:
                break
            positions = np.flatnonzero(ordered_src == s)[: hedge.share]
            runners.append(by_score[positions])
            taken[positions] = True
    if runners:
        k = hedge.lead if hedge is not None else 0
        lead = np.concatenate([lead[:k], *runners, lead[k:]])
    return np.concatenate([lead, by_score[~taken]]), margin


def rank_tables_from_scores(
    art: IndexArtifact,
    rel: np.ndarray,
    budget: int,
    fk_expand: bool = True,
    question: str | None = None,
    policy: ColumnPolicy | None = None,
    adaptive: AdaptiveBudget | None = None,
    join_paths: bool | None = JOIN_PATHS,
    route_coverage: float = ROUTE_COVERAGE_POWER,
    calibration: Calibration = DEFAULT_CALIBRATION,
    route_hedge: RouteHedge | None = ROUTE_HEDGE,
    inferred_ratio: float | None = INFERRED_NEIGHBOUR_RATIO,
    join_top: int | None = None,
    family_slots: int | None = FAMILY_SLOTS,
    family_named: int = FAMILY_NAMED,
    schema_hedge: RouteHedge | None = SCHEMA_HEDGE,
    schema_prior: float = SCHEMA_PRIOR,
    name_boost: float = NAME_BOOST,
    named_exempt: str = NAMED_EXEMPT,
    name_shortened: bool = NAME_SHORTENED,
    name_abbreviations: bool = NAME_ABBREVIATIONS,
    name_missing: int = NAME_MISSING,
    name_extended: bool = NAME_EXTENDED,
    coverage_power: float = TABLE_COVERAGE,
    structure_slots: int | None = STRUCTURE_SLOTS,
    mentions: Sequence[MentionHit] | None = None,
    mention_lead: int | None = MENTION_LEAD,
    mention_margin: float = MENTION_MARGIN,
) -> TableRanking:
    """The focused schema's tables (at most ``budget``) and, per table, what it shows.

    ``adaptive`` (:class:`AdaptiveBudget`) makes the number of tables adaptive: ranked tables
    scoring below ``confidence * best`` are not taken (FK neighbours still follow the tables
    they join), once ``min_tables`` (plus ``join_floor`` per sign of a join in the question;
    ``TableRanking.widened`` says which) are kept and, in a union, only if the routing margin
    is below ``sure_margin``.
    ``route_coverage``: the exponent of term coverage in union routing (0 turns it off);
    ``route_hedge``: places for close runner-up databases (None turns it off).
    ``inferred_ratio``: FK expansion over inferred keys (None: declared keys only);
    ``join_paths``: join-path completion (:func:`complete_join_paths`; None: in a single-database
    index only); ``join_top``: only for the first that many kept tables (None: all).
    ``family_slots``: places a table family may take, the members the question's numbers name
    first (:mod:`.table_families`; None: no limit); ``family_named``: at most that many named
    members come first. ``schema_hedge``: in a single-source index of several schemas, close
    runner-up schemas' best tables follow the first places (:mod:`.schema_hedge`; None: off).
    ``name_boost``: added to the score of each table the question names (:mod:`.named_tables`;
    0: off); ``named_exempt``: which tables keep their score under the schema prior besides the
    leading schema's: ``"none"``, ``"tables"`` (named tables) or ``"schemas"`` (named tables and
    the tables of a named schema); ``name_shortened``: a name word the question writes in full
    also names (``indiv`` for "individual", ``rnaseq`` for "RNA sequencing");
    ``name_abbreviations``: so does a common short form of a question word (``yr`` for "year");
    ``name_missing``: words a name of more than twice as many may lack and still be named;
    ``name_extended``: a question word also names the glued name word it begins (``bikeshare``
    for "bike"); ``coverage_power``: tables of a single-database index are ordered by their
    score times :func:`table_coverage` to this power (0: off; a union routes by coverage instead).
    ``structure_slots``: in a single-database index, places a structural family (tables of one
    schema with the same columns: ``table_families.structures_of``) may take for members the
    question does not name; the rest follow every other table (None: no limit).
    ``mentions``: the question's value mentions and their best tables
    (:func:`~.value_mentions.mention_hits`; the retriever computes them); in a single-database index
    each whose table leads the runner-up by ``mention_margin`` moves to just after the first
    ``mention_lead`` places (None: off).
    """
    policy = policy or DEFAULT_COLUMN_POLICY
    names = art.table_names
    scores = apply_layer_prior(art, table_scores(art, rel))  # dbt: marts before staging/sources
    calibrated = scores  # TableRanking.scores reports these: in [0, 1], the same on every question
    # coverage, schema hedging, structures and mentions order the tables of one database; a union
    # routes between databases instead
    single = len(art.table_sources[1]) <= 1
    # coverage orders the tables of a single database (a union routes by its databases' coverage
    # instead); the reported scores stay calibrated
    if coverage_power > 0 and question and single:
        cov = table_coverage(art, question, calibration)
        if cov is not None:
            scores = scores * (np.maximum(cov, COVERAGE_FLOOR) ** coverage_power).astype(np.float32)
    named = None
    named_set: set[str] = set()  # tables the question names: they keep their place in a structure
    if question and (name_boost > 0 or named_exempt != "none" or structure_slots is not None):
        named = named_tables(art, question, name_shortened, name_abbreviations, name_missing, name_extended)
        named_set = {names[i] for i in np.flatnonzero(named).tolist()}
        if name_boost > 0:
            # in a dbt project a name repeats in every layer (raw.customers, stg_customers,
            # customers): only the consumer layer's table is lifted, as the layer prior wants
            scores = scores + np.float32(name_boost) * (named & consumer_layer(art))
        if named_exempt == "schemas":
            named = named | in_named_schema(art, question)
        elif named_exempt != "tables":
            named = None
    coverage = source_coverage(art, question or "", calibration) if route_coverage > 0 else None
    order, margin = route(art, scores, coverage, route_coverage, route_hedge)
    if (schema_hedge is not None or schema_prior < 1.0) and single:
        schema_ids, schemas = table_schemas(art)
        order = schema_prior_order(order, scores, schema_ids, len(schemas), schema_prior, named)
        if schema_hedge is not None:
            order = hedge_order(order, scores, schema_ids, len(schemas), **asdict(schema_hedge))
    ranked = [names[i] for i in order.tolist()]
    # the order's scores (a named table's boost included: a neighbour follows a named table only
    # with comparable evidence, which on BirdUnion kept CR@8 at 0.942 against 0.934 without it)
    score_of = {names[i]: float(scores[i]) for i in range(len(names))}
    evidence_of = score_of if calibrated is scores else dict(zip(names, calibrated.tolist(), strict=True))
    sure = adaptive is not None and (adaptive.sure_margin is None or margin < adaptive.sure_margin)
    floor = adaptive.confidence * score_of[ranked[0]] if adaptive is not None and ranked and sure else -1.0
    least = max(1, adaptive.min_tables) if adaptive is not None else 1
    widened = None
    if adaptive is not None and adaptive.join_floor > 0 and floor > 0:  # the cut applies: widen it
        signal = join_signal(art, question or "", art.table_source.get(ranked[0]) if ranked else None)
        if signal.need > 0:
            least = min(budget, least + adaptive.join_floor * signal.need)
            widened = {**signal.to_dict(), "min_tables": least}
    kept: list[str] = []
    candidates = ranked
    if family_slots is not None:
        candidates = family_order(ranked, table_families(art), question or "", family_slots, family_named)
    if structure_slots is not None and single:
        candidates = structure_order(candidates, table_structures(art), named_set, structure_slots)
    candidates = twins_last(candidates, table_twins(art))
    if mentions and mention_lead is not None and single:
        picks = [names[h.table] for h in mentions if h.clear(mention_margin)]
        candidates = move_mentions(candidates, picks, mention_lead)
    for t in candidates:
        if len(kept) >= budget or (len(kept) >= least and score_of[t] < floor):
            break
        if t in kept:
            continue
        kept.append(t)
        if not fk_expand:
            continue
        edges = join_edges(art).get(t, {})
        declared = [n for n, c in edges.items() if c <= DECLARED_COST]
        inferred = [n for n, c in edges.items() if c > DECLARED_COST] if inferred_ratio is not None else []
        for group, ratio in ((declared, NEIGHBOUR_RATIO), (inferred, inferred_ratio or 0.0)):
            for n in sorted(group, key=lambda n: (-score_of[n], n)):
                if len(kept) >= budget:
                    break
                if n not in kept and score_of[n] >= ratio * score_of[t] and score_of[n] > 0:
                    kept.append(n)
    if join_paths or (join_paths is None and single):
        kept = complete_join_paths(join_edges(art), kept, budget, join_top)
    # the name boost orders tables; the scores reported (and column focus) stay the calibrated ones
    scores_kept = {t: evidence_of[t] for t in kept}
    columns, described, compact = select_columns(art, rel, kept, scores_kept, question or "", policy)
    return TableRanking(
        tables=kept,
        columns=columns,
        scores=scores_kept,
        ranked=ranked,
        described=described,
        compact=compact,
        token_budget=share_budget(art, kept, policy.context_share),
        widened=widened,
    )


def share_budget(art: IndexArtifact, tables: list[str], share: float | None) -> int | None:
    """Tokens allowed by ``share`` of the full schema of the databases ``tables`` come from
    (their union source, or the whole index): a ratio that means the same on a 7-table
    database and in a 600-table union. Lengths were summed once per opened version."""
    if share is None:
        return None
    of = art.table_source
    chars = sum(int(art.source_schema_chars[i]) for i in {of[t] for t in tables if t in of})
    return max(1, int(share * chars / 4))  # ~4 characters per token, as estimate_tokens


def complete_join_paths(
    graph: dict[str, dict[str, float]], kept: list[str], budget: int, top: int | None = None
) -> list[str]:
    """``kept`` plus, after each table (of the first ``top``) not yet joined to the ones before
    it, the tables on its cheapest join path to them in ``graph`` (:func:`~.join_graph.join_edges`;
    :func:`~.join_graph.cheapest_path`, at most JOIN_PATH_HOPS edges); tables past ``budget``
    fall off the end (lowest ranked first)."""
    if not kept:
        return kept
    out = [kept[0]]
    component = {kept[0]}
    limit = len(kept) if top is None else top
    for i, t in enumerate(kept[1:], start=1):
        if t in component:
            continue
        touching = bool(graph.get(t, {}).keys() & component)
        bridge = [] if touching or i >= limit else cheapest_path(graph, t, component, JOIN_PATH_HOPS)
        out.append(t)
        component.add(t)
        for b in bridge:
            if b not in component:
                out.append(b)
                component.add(b)
    if len(out) > budget:  # bridges take the places of the lowest-ranked tables they displaced
        must = set(out[:budget])
        out = [t for t in out if t in must]
    return out


@dataclass(frozen=True)
class ColumnPolicy:
    """How much of each kept table the focused schema shows (see the module docstring)."""

    # Defaults: the uncapped policy that `eval --cross-validate columns` chose before the size
    # cap existed. Under a 0.30 context-ratio cap the folds choose COMPACT_COLUMN_POLICY (below);
    # it stays opt-in because it trades the types and descriptions of lower-ranked tables for
    # size, which retrieval metrics cannot price (README "Retrieval quality on BIRD").
    table_ratio: float = 0.5
    columns_by_rank: tuple[int, ...] = (3, 2, 1)
    column_ratio: float = 0.7
    rest_tables: str = "strong"  # whose other columns are listed by name: "strong", "all" or "none"
    # Size cap of the focused schema as a share of the full schema of the kept tables'
    # databases: past it, format_ranking thins the lowest-ranked tables to names (see
    # formatting.DETAIL_LEVELS). None: no cap beyond a caller's token budget.
    context_share: float | None = None


DEFAULT_COLUMN_POLICY = ColumnPolicy()
# What leave-one-database-out chose on BIRD dev (11 of 11 folds) for "max column SRR at a
# context ratio <= 0.30": more columns per strong table, names of every kept table's other
# columns, and the whole focused schema capped at 30 % of the full one.
COMPACT_COLUMN_POLICY = ColumnPolicy(
    table_ratio=0.3, columns_by_rank=(6, 3, 1), column_ratio=0.55, rest_tables="all", context_share=0.3
)
# The column policies a caller can name (``Retriever.search(focus=...)``, ``--focus``, the
# ``focus`` field of POST /v1/schema): "default" shows focused columns as DDL with descriptions
# and no size cap; "compact" is COMPACT_COLUMN_POLICY, at most 30 % of the full schema.
FOCUS_POLICIES: dict[str, ColumnPolicy] = {"default": DEFAULT_COLUMN_POLICY, "compact": COMPACT_COLUMN_POLICY}
# Tables kept when a caller names a focus but no table budget: the budget COMPACT_COLUMN_POLICY
# was chosen and measured at (README "Retrieval quality on BIRD").
DEFAULT_FOCUS_TABLE_BUDGET = 15


def resolve_focus(focus: str | ColumnPolicy | None) -> ColumnPolicy | None:
    """The :class:`ColumnPolicy` a focus name stands for (a policy passes through).

    >>> resolve_focus("compact").context_share
    0.3
    >>> resolve_focus("compakt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    schemarag.runtime.core.errors.ConfigError: focus 'compakt' is not one of ...; did you mean 'compact'?
    """
    if focus is None or isinstance(focus, ColumnPolicy):
        return focus
    policy = FOCUS_POLICIES.get(str(focus).lower())
    if policy is None:
        names = ", ".join(FOCUS_POLICIES)
        raise ConfigError(f"focus {focus!r} is not one of {names}{did_you_mean(str(focus), FOCUS_POLICIES)}")
    return policy


@dataclass(frozen=True)
class TableFocus:
    """What a caller asked of the table ranking (``Retriever.search``'s ``table_budget``,
    ``focus`` and ``adaptive``), carried as one value through the serving layers."""

    table_budget: int | None = None
    focus: str | None = None
    adaptive: bool = False

    @property
    def requested(self) -> bool:
        """Whether any of the three asks for the budgeted table ranking."""
        return self.table_budget is not None or self.focus is not None or self.adaptive

    def search_kwargs(self) -> dict[str, object]:
        return {"table_budget": self.table_budget, "focus": self.focus, "adaptive": self.adaptive}


def focus_name(policy: ColumnPolicy | None) -> str | None:
    """The name under which ``policy`` is in :data:`FOCUS_POLICIES` ("custom" otherwise)."""
    if policy is None:
        return None
    return next((k for k, v in FOCUS_POLICIES.items() if v == policy), "custom")


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
    low = column.lower()
    return low.endswith(LABEL_WORDS)


def select_columns(
    art: IndexArtifact,
    rel: np.ndarray,
    tables: list[str],
    table_score: dict[str, float],
    question: str,
    policy: ColumnPolicy = DEFAULT_COLUMN_POLICY,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, list[str]]]:
    """``(columns, described, compact)`` per table, in schema order: what to show as DDL, what
    of that to describe, and the other columns to list by name only."""
    top = max((table_score[t] for t in tables), default=0.0)
    strong = [t for t in tables if table_score[t] >= policy.table_ratio * top and top > 0]
    strong_set = set(strong)
    for t in tables:  # a bridge between two strong tables is part of the join path
        if t not in strong_set and len(art.schema.neighbours(t) & strong_set) >= 2:
            strong.append(t)
            strong_set.add(t)
    per_table = art.table_column_chunks
    col_scores = {t: {c: float(rel[idx].max()) for c, idx in per_table.get(t, ())} for t in tables}
    best_col = max((v for t in strong for v in col_scores[t].values()), default=0.0)
    asked = _norm(question)
    asked_tokens = set(tokenize(question))
    name_tokens = art.column_name_tokens
    columns: dict[str, list[str]] = {}
    described: dict[str, list[str]] = {}
    compact: dict[str, list[str]] = {}
    rank = 0
    for t in tables:
        cs = col_scores[t]
        named = {c for c in cs if len(c) > 2 and _norm(c) in asked}
        named |= {c for c in cs if name_tokens.get(c) and name_tokens[c] <= asked_tokens}
        if t in strong_set:
            n = policy.columns_by_rank[min(rank, len(policy.columns_by_rank) - 1)]
            rank += 1
            ordered = sorted(cs, key=lambda c: (-cs[c], c))
            rich = (
                set(ordered[:n]) | {c for c, v in cs.items() if v >= policy.column_ratio * best_col} | named
            )
        else:
            rich = named
        ddl = art.ddl[t]
        labels = {c for c in ddl.columns if label_like(c)}
        keys = set(ddl.key_columns) | art.implicit_join_columns.get(t, set()) | labels
        columns[t] = [c for c in ddl.columns if c in rich or c in keys]
        described[t] = [c for c in ddl.columns if c in rich]
        if policy.rest_tables == "all" or (policy.rest_tables == "strong" and t in strong_set):
            compact[t] = [c for c in ddl.columns if c not in rich and c not in keys]
    return columns, described, compact
