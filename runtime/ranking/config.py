"""Every knob of the table ranking in one frozen value, and where each shipped value came from.

:class:`RankingConfig` holds every number (and switch) that changes which tables a question
gets, in which order, and what each shows; :data:`SHIPPED` is the instance every surface
serves. The evaluation compares candidates as ``dataclasses.replace(SHIPPED, ...)``, so a grid
never retypes a shipped value and a served ranking is exactly an evaluated one.

:data:`PROVENANCE` says, per field, how its value was chosen: the data set, the command, what
the folds chose and when, or ``unmeasured`` (a value set by reasoning that no experiment has
checked). ``tests/runtime/ranking/test_ranking_config.py`` fails when a field has no entry.

Adding a signal: a stage in :mod:`.pipeline`, its fields here, a :data:`PROVENANCE` entry for
each, and a test of the stage on small synthetic candidates (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import did_you_mean
from schemarag.runtime.search.scoring import Calibration


@dataclass(frozen=True)
class RouteHedge:
    """Places for close runner-up groups (source databases of a union, or schemas of one database).

    If up to ``runners`` runner-up groups score at least ``ratio`` times the winner's, the order
    is: the winner's best ``lead`` tables, each such runner-up's best ``share`` tables, then the
    rest. A clear winner keeps every place; an uncertain one no longer fills a whole budget.
    """

    ratio: float = 0.5
    lead: int = 5
    share: int = 3
    runners: int = 2


@dataclass(frozen=True)
class AdaptiveBudget:
    """A per-question number of tables (the table budget stays the ceiling).

    Ranked tables scoring below ``confidence`` times the best are not taken, but never before
    ``min_tables`` are kept, and in a union only when routing is sure: the runner-up database
    scores below ``sure_margin`` times the winner's (``None``: always).
    """

    confidence: float
    min_tables: int = 1
    sure_margin: float | None = None


@dataclass(frozen=True)
class ColumnPolicy:
    """How much of each kept table the focused schema shows (:mod:`.columns`)."""

    table_ratio: float = 0.5  # tables scoring >= this x the best are strong (keep their best columns)
    columns_by_rank: tuple[int, ...] = (3, 2, 1)  # best columns a strong table keeps, by its rank
    column_ratio: float = 0.7  # columns scoring >= this x the best column anywhere are kept
    rest_tables: str = "strong"  # whose other columns are listed by name: "strong", "all" or "none"
    # Size cap of the focused schema as a share of the full schema of the kept tables'
    # databases: past it, format_ranking thins the lowest-ranked tables to names. None: no cap.
    context_share: float | None = None
    # With a query history (inert without one): the columns a kept table is logged joining on
    # with another kept table are shown as keys are (history_keys), and a weak table also shows
    # its history_weak most-used columns (a key-less warehouse's join keys and lookup values)
    history_keys: bool = True
    history_weak: int = 1


@dataclass(frozen=True)
class RankingConfig:
    """Every ranking knob, grouped by the stage that reads it (:mod:`.pipeline`, top to bottom)."""

    # chunk scoring (scoring.py: the dense/lexical blend and its floors); None: the index
    # model's own (search/index_model.py: a static model's cosines sit higher)
    calibration: Calibration | None = None
    # evidence: a table's score is its best chunk plus second_weight of its next two (halved each)
    second_weight: float = 0.3
    # dbt layer weights (layer_prior.py); None: $SCHEMARAG_LAYER_PRIOR, else consumer_first
    layer_prior: str | None = None
    # coverage: score x max(coverage, coverage_floor) ** coverage_power in one database (0: off)
    coverage_power: float = 0.2
    coverage_floor: float = 0.05
    # named tables (named_tables.py): boost added to a table the question names, and how names match
    name_boost: float = 0.3
    named_exempt: bool = False  # named tables keep their score under the schema prior
    name_shortened: bool = True
    name_abbreviations: bool = True
    name_missing: int = 1
    name_extended: bool = True
    name_min_prefix: int = 4  # a name word this long may be the beginning of a question word
    name_min_extension: int = 3  # letters a glued name word adds to the question word it begins
    name_labels: bool = True  # a table's label (Table.label, a dictionary's short text) names it too
    # routing (a union): a source's score is its best table + route_second_weight x its second,
    # among the first route_lead_per_source x sources + route_lead_extra tables, times
    # term coverage ** route_coverage; close runner-ups get route_hedge's places
    route_coverage: float = 0.5
    route_second_weight: float = 0.5
    route_lead_per_source: int = 4
    route_lead_extra: int = 64
    route_hedge: RouteHedge | None = RouteHedge(ratio=0.5, lead=5, share=3, runners=2)
    # schemas of one database: tables outside the leading schema at schema_prior of their score,
    # then close runner-up schemas' best tables after the first places (schema_hedge.py)
    schema_prior: float = 0.3
    schema_hedge: RouteHedge | None = RouteHedge(ratio=0.5, lead=3, share=2, runners=3)
    # families (table_families.py): places a numbered family / a structural family may take
    family_slots: int | None = 1
    family_named: int = 8
    structure_slots: int | None = 2
    # sibling schemas (sibling_schemas.py): score factor of every table of a schema whose sibling
    # the question's words fit better (CRYPTO_ETHEREUM_CLASSIC for "Ethereum"; 1: off)
    sibling_prior: float = 0.5
    # dated tables (dated_tables.py): score factor of a table of one year (vehicle_2016) or year
    # range (accident_* of 2016..2019) when the question names a year a same-named table covers
    # and it does not (1: off); year_prior_wide: the same for any other table whose name or shard
    # range gives years (icoads_core_2005_2017 for "weather in 2019"), when some table of the
    # database covers a year the question names (1: off)
    year_prior: float = 0.2
    year_prior_wide: float = 0.3
    # what a family is: at least family_min_members tables equal but for their numbers sharing
    # family_column_overlap of their columns, or with the same structure_min_columns+ columns;
    # a year span "from 2011 to 2020" names its years up to year_span_max of them
    family_min_members: int = 3
    family_column_overlap: float = 0.5
    structure_min_columns: int = 4
    year_span_max: int = 30
    # value mentions (value_mentions.py): a clear mention's table moves after the first places
    mention_lead: int | None = 5
    mention_margin: float = 0.05
    mention_rare_pieces: int = 2  # an unknown lowercase word the model splits this much is a value
    # budget: FK neighbours follow a kept table with this share of its score (declared keys;
    # inferred keys at inferred_ratio, None: never); join-path completion (None: one database only)
    neighbour_ratio: float = 0.5
    # a neighbour pulled forward needs its own evidence >= neighbour_floor x the best table's (0: any)
    neighbour_floor: float = 0.15
    inferred_ratio: float | None = None
    join_paths: bool | None = None
    join_path_hops: int = 3
    # join graph costs (join_graph.py): a declared key costs 1, an inferred one
    # 1 + inferred_edge_base + inferred_edge_penalty x (1 - confidence)
    inferred_edge_base: float = 0.2
    inferred_edge_penalty: float = 1.0
    # query history (history.py; a version without one: every value below is inert):
    # popularity prior weight (0: off); co-usage completion (a table following a kept one that
    # >= history_co_share of its statements also read, with >= history_co_ratio of its evidence;
    # None: off); logged joins in the join graph at DECLARED_COST + history_join_extra (None: not
    # used), and join-path completion over them in a union too (history_join_paths)
    history_popularity: float = 0.0
    history_co_weight: float = 1.0  # co-usage prior: score + weight x max(score(a) x P(t | a)), 0: off
    history_co_top: int = 3  # ... over the question's best history_co_top tables a
    history_co_prior: float = 2.0  # P(t | a) = together / (statements of a + prior): 0 plain shares
    history_co_share: float | None = 0.5
    history_co_ratio: float = 0.0
    history_join_extra: float | None = 0.1
    history_join_paths: bool = False
    # example chunks as evidence: the history_example_top past queries most like the question
    # (BM25 over their text) lift the tables they read by history_example_weight x the best
    # table's score x their similarity relative to the best example (0: off)
    history_example_weight: float = 0.2
    history_example_top: int = 1
    # what `adaptive=True` means, the table budget a caller gets by default, and the focuses
    adaptive: AdaptiveBudget = AdaptiveBudget(confidence=0.5, min_tables=5, sure_margin=0.7)
    table_budget: int = 15
    default_columns: ColumnPolicy = ColumnPolicy()
    compact_columns: ColumnPolicy = ColumnPolicy(
        table_ratio=0.3, columns_by_rank=(6, 3, 1), column_ratio=0.55, rest_tables="all", context_share=0.3
    )


SHIPPED = RankingConfig()


@dataclass(frozen=True)
class Provenance:
    """How one shipped value was chosen: on which data, by which command, what the folds chose, when.

    ``data`` "unmeasured" marks a value no experiment checked (``note`` says why it is set so).
    """

    data: str
    command: str = ""
    folds: str = ""
    date: str = ""
    note: str = ""


WAREHOUSE = "Spider 2.0-lite, 158 databases, leave-one-database-out"
BIRD_UNION = "BIRD dev over BirdUnion, 11 databases, leave-one-database-out"
BIRD_PER_DB = "BIRD dev per database, 11 databases, leave-one-database-out"


def _warehouse(grid: str, folds: str, date: str, note: str = "") -> Provenance:
    command = f"schemarag eval --warehouse DIR --cross-validate {grid}"
    return Provenance(WAREHOUSE, command, folds, date, note)


def _history(folds: str) -> Provenance:
    """A history knob: chosen on the 5-fold query-history evaluation (SQL only) of four sets,
    each leave-one-database-out, and pooled with equal weight per set."""
    return Provenance(
        "query-history folds (5, SQL only): BirdUnion, BIRD dev per database, per database with every "
        "FK removed, Spider 2.0-lite (75 databases with a history); 58 settings (history_grid), pooled "
        "over the four sets with equal weight",
        "schemarag eval --query-log-folds 5 --out F (--union bird_union | --per-db | --warehouse DIR "
        "--gold-sql DIR); python -m schemarag.tools.evaluation.history_pool F...",
        folds,
        "2026-11-28",
    )


def _unmeasured(note: str) -> Provenance:
    return Provenance("unmeasured", note=note)


PROVENANCE: dict[str, Provenance] = {
    "calibration": Provenance(
        "BIRD dev per database and BirdUnion, leave-one-database-out",
        "schemarag eval --cross-validate tables (w_dense, lexical_alone, cos_floor); "
        "README 'Relevance score'",
        "cos_floor / cos_full: percentiles of off-topic and paraphrase cosines per model",
        "2026-11-23",
        note="compound_weight 1: Spider 2.0-lite nontrivial CR@20 0.845 -> 0.861 held out; "
        "abbreviation and acronym weights 0 (no fold chose them); typo_long_word 8 unmeasured",
    ),
    "second_weight": _unmeasured("two more agreeing chunks beat one lucky match; never gridded"),
    "layer_prior": Provenance(
        "checked, not fitted, on tests/fixtures/dbt_rank_questions.json",
        "pytest tests/runtime/search/test_layer_prior.py",
        note="consumer_first weights: layer_prior.CONSUMER_FIRST; docs/importing.md",
    ),
    "coverage_power": _warehouse(
        "evidence", "158 of 158 pick 0.2 (held out CR@5 0.720 -> 0.744)", "2026-11-27"
    ),
    "coverage_floor": _unmeasured("a table holding none of the question's words keeps 0.05 ** 0.2 = 0.55"),
    "name_boost": _warehouse("names", "150 of 158 pick 0.3 (7 pick 0.5)", "2026-11-26"),
    "named_exempt": _warehouse("names", "no exemption chosen on all 158", "2026-11-26"),
    "name_shortened": _warehouse("names", "on, chosen on all 158", "2026-11-26"),
    "name_abbreviations": _warehouse("vocabulary", "158 of 158 pick on", "2026-11-26"),
    "name_missing": _warehouse("vocabulary", "158 of 158 pick 1", "2026-11-26"),
    "name_extended": _warehouse("evidence", "158 of 158 pick on", "2026-11-27"),
    "name_labels": Provenance(
        "BIRD with coded names (tools/evaluation/coded_names.py): per database and the 597-table union, "
        "every FK removed, query-history folds (5, SQL only); BIRD dev per database as is",
        "make eval-history-coded; schemarag eval --query-log-folds 5 --per-db (BIRD dev)",
        "coded per database CR@5 0.931 -> 0.944 held out (0.875 -> 0.905 without a history), coded union "
        "0.889 -> 0.887 held out (0.815 -> 0.822 without); BIRD dev per database, key-less and BirdUnion "
        "unchanged for all 58 history settings; Spider 2.0-lite exports carry no label (unchanged)",
        "2026-11-28",
        note="on or off, no value gridded: a label only adds names where an importer found one",
    ),
    "route_coverage": Provenance(
        BIRD_UNION,
        "schemarag eval --union bird_union --cross-validate routing",
        "11 of 11 pick 0.5",
        "2026-11-24",
    ),
    "route_second_weight": _unmeasured("a database's second table counts half its best; never gridded"),
    "route_lead_per_source": _unmeasured(
        "routing reads the leading tables only (cost); enough for 80 databases"
    ),
    "route_lead_extra": _unmeasured("as route_lead_per_source"),
    "route_hedge": Provenance(
        BIRD_UNION,
        "schemarag eval --union bird_union_schema --cross-validate hedging",
        "6 of 11 folds and the all-11 choice (schema only)",
        "2026-11-24",
    ),
    "schema_prior": _warehouse(
        "schema_prior", "156 of 158 pick 0.3; 157 of 158 in `warehouse`", "2026-11-26"
    ),
    "schema_hedge": _warehouse("warehouse", "157 of 158 pick (0.5, 3, 2, 3)", "2026-11-26"),
    "family_slots": _warehouse("warehouse", "157 of 158 pick 1", "2026-11-26"),
    "family_named": _warehouse("warehouse", "157 of 158 pick 8 (one: 4)", "2026-11-26"),
    "structure_slots": _warehouse("structures", "158 of 158 pick 2", "2026-11-27"),
    "sibling_prior": _warehouse(
        "siblings",
        "all 158 folds pick 0.5 when CRYPTO is among them; held out CRYPTO keeps 1 (off): it is the only "
        "database of the 8 with sibling schemas whose ranking moves, so the held-out figure equals off "
        "(CR@5/10/20 0.737 / 0.903 / 0.965) and the gain is CRYPTO's in sample (0.742 / 0.903 / 0.967)",
        "2026-11-28",
        note="0.3 ties with 0.5; 0.5 is the milder. Shipped on in-sample evidence because no database "
        "loses: docs/ranking.md 'Sibling schemas'",
    ),
    "year_prior": _warehouse(
        "years",
        "grid year_prior x year_prior_wide (5 x 6; 0.3 / 1 first in the first run, off / 0.3 the "
        "earlier shipped): 158 of 158 folds pick 0.2 with year_prior_wide 0.3; 0.2 and 0.1 tie, 0.2 "
        "is the milder. Held out CR@5/10/20 0.748 / 0.910 / 0.971, nontrivial 0.688 / 0.844 / 0.930 "
        "(the earlier 0.3 alone: 0.744 / 0.905 / 0.969 and 0.684 / 0.834 / 0.925)",
        "2026-11-28",
        note="BIRD has no table with a year in its name (figures unchanged by construction): "
        "docs/ranking.md 'Dated tables'",
    ),
    "year_prior_wide": _warehouse(
        "years",
        "158 of 158 folds pick 0.3 with year_prior 0.2; 0.3 .. 0 tie, 0.3 is the mildest; 0.5 keeps "
        "one question fewer at B = 10, off (1) one fewer at B = 5, three at B = 10, one at B = 20. No "
        "question lost at any budget against the earlier shipped setting (gains bq047, bq040 at "
        "B = 5; bq031, bq051, sf_bq043 at B = 10; bq031 at B = 20)",
        "2026-11-28",
        note="docs/ranking.md 'Dated tables'",
    ),
    "mention_lead": _warehouse("mentions", "157 of 158 pick 5", "2026-11-27"),
    "mention_margin": _warehouse("mentions", "157 of 158 pick 0.05", "2026-11-27"),
    "mention_rare_pieces": _unmeasured(
        "a word MiniLM's vocabulary splits is rare (psoriasis); set on reading"
    ),
    "family_min_members": _unmeasured("two tables with a number are a pair, three a series (GSOD2014 ..)"),
    "family_column_overlap": _unmeasured(
        "members must share half their columns (address_1 / address_2 that differ are no family)"
    ),
    "structure_min_columns": _unmeasured(
        "fewer shared columns (id, name, code) say nothing about what a table holds"
    ),
    "year_span_max": _unmeasured("a span longer than 30 years names no member in particular"),
    "name_min_prefix": _unmeasured(
        "four letters (indiv, stat) before a name word may abbreviate a question word"
    ),
    "name_min_extension": _unmeasured(
        "three letters: a second word glued on, not an English ending (-s, -er, -ed)"
    ),
    "inferred_edge_base": _unmeasured("an inferred key always costs more than a declared one"),
    "inferred_edge_penalty": _unmeasured("a low-confidence inferred key costs up to one more edge"),
    "neighbour_ratio": _unmeasured(
        "a declared neighbour follows with half its table's evidence; never gridded"
    ),
    "neighbour_floor": Provenance(
        "BirdUnion and BIRD dev per database, leave-one-database-out",
        "schemarag eval --union bird_union --cross-validate neighbours (and --per-db)",
        "BirdUnion: 10 of 11 pick 0.15 (held out CR@5/10/15 0.894 / 0.959 / 0.9765, as without); "
        "per database 0 to 0.2 tie (0.960 / 0.999 / 1.000)",
        "2026-11-28",
        note="issue 40 item 4: a near-zero FK neighbour takes no place out of turn; "
        "Spider 2.0-lite: --cross-validate neighbour_floor",
    ),
    "inferred_ratio": _warehouse("joins", "156 of 158 pick None (2 pick 0.9)", "2026-11-27"),
    "join_paths": _warehouse(
        "joins",
        "156 of 158 pick completion (None: one database only; BIRD unions never chose it)",
        "2026-11-27",
    ),
    "join_path_hops": _unmeasured(
        "a bridge of at most two tables; longer paths rarely join a question's tables"
    ),
    "history_popularity": _history(
        "off in the pooled best; per database 10 of 11 and key-less 11 of 11 folds pick 0, Spider "
        "2.0-lite 75 of 75; BirdUnion 11 of 11 pick 0.3 (its 69 train databases have no history: an "
        "asymmetry). Chosen on the three BIRD sets alone (0.3), Spider 2.0-lite nontrivial mean CR is "
        "0.834 (0.827 without a history, 0.856 at the shipped setting)"
    ),
    "history_co_weight": _history(
        "1.0 in the pooled best (mean 0.9502; 0.5 with the rest shipped in the grid's product: 0.9460) "
        "and in every per-database fold's choice (BirdUnion 10 of 11)"
    ),
    "history_co_top": _history(
        "3 in the pooled best (over the best table: 0.9468 with the rest as shipped, completion off) and "
        "in every BIRD fold's choice"
    ),
    "history_co_prior": _history(
        "2 pseudo-statements, the one value gridded beside 0 (set before the grid, from the smallest "
        "logs: a table read twice shares at most half): pooled 0.9494 against 0.9474 at 0 (completion "
        "off), from Spider 2.0-lite, whose databases log 1 to 40 statements (nontrivial mean CR 0.852 "
        "against 0.844); inert on the BIRD sets' 100+ statements per database (ties). A BirdUnion scan "
        "of 1, 2, 5 and 10 peaked at 2 (CR@5 0.936 / 0.938 / 0.937 / 0.933 in sample)"
    ),
    "history_co_share": _history(
        "0.5 in the pooled best (0.9502 against 0.9494 off), chosen by 74 of Spider 2.0-lite's 75 "
        "held-out databases (nontrivial CR@20 0.917 held out, 0.902 with the setting shipped before); "
        "the BIRD sets' folds keep it off (ties per database, BirdUnion 0.9635 against 0.9633)"
    ),
    "history_co_ratio": _history("0 (any evidence above zero): the one value gridded"),
    "history_join_extra": _history(
        "0.1 in every pooled best and every fold's choice: logged joins are the only joins a key-less "
        "warehouse has (ties on the BIRD sets, which declare their keys)"
    ),
    "history_join_paths": _history("ties everywhere (routing picks the database in a union)"),
    "history_example_weight": _history(
        "0.2 in the pooled best (0.9484 at 0.5, 0.9446 at 0 with the rest as shipped, completion off); "
        "per database and key-less 11 of 11 folds pick 0.2, BirdUnion 10 of 11 pick 0.5 (one 0.8), with "
        "popularity 0.3 (an asymmetry: its train databases have no history); 2026-11-29, examples "
        "indexed with the documentation's words for codes (history arrays 3): still the pooled best over "
        "the four sets (0.9540); over six with the coded-name sets 0.0002 behind examples 0.5 without "
        "co-usage completion, which costs Spider 2.0-lite 2.7 points when the other sets choose it"
    ),
    "history_example_top": _history("1 in the pooled best and in every set's folds' choice"),
    "adaptive": Provenance(
        BIRD_UNION,
        "schemarag eval --union bird_union --cross-validate adaptive (max CR at <= 8 tables)",
        "6 of 11 folds and the all-11 choice",
        "2026-11-24",
    ),
    "table_budget": Provenance(BIRD_PER_DB, note="the budget every README quality figure is measured at"),
    "default_columns": Provenance(
        BIRD_PER_DB,
        "schemarag eval --per-db --cross-validate columns",
        "chosen before the size cap",
        "2026-11-23",
        "history_keys / history_weak (both focuses; inert without a history) are set by parity, not "
        "tuned: a logged join is shown as a declared key is, and a weak table's most-read column "
        "besides its keys stands in for the label column a coded name does not mark (one, as a weak "
        "table without keys keeps one). Measured on the history folds (5, SQL only, shipped table "
        "knobs), column SRR off -> on: BIRD per database 0.963 -> 0.983, BirdUnion 0.930 -> 0.958, "
        "coded catalog export 0.667 -> 0.843, at 4-6 % more context (3.6 % on BirdUnion); "
        "docs/query-history.md",
    ),
    "compact_columns": Provenance(
        BIRD_PER_DB,
        "schemarag eval --per-db --budgets 15 --cross-validate columns (objective: max column SRR at "
        "context ratio <= 0.30)",
        "11 of 11 pick table_ratio 0.3 and the cap; 7 of 11 column_ratio 0.55",
        "2026-11-24",
    ),
}


def provenance_gaps() -> list[str]:
    """Fields of :class:`RankingConfig` without a :data:`PROVENANCE` entry (should be none)."""
    return [f.name for f in fields(RankingConfig) if f.name not in PROVENANCE]


def focus_policies(config: RankingConfig = SHIPPED) -> dict[str, ColumnPolicy]:
    """The column policies a caller can name (``focus``): ``default`` shows focused columns as
    DDL with descriptions and no size cap; ``compact`` is at most 30 % of the full schema."""
    return {"default": config.default_columns, "compact": config.compact_columns}


def resolve_focus(focus: str | ColumnPolicy | None, config: RankingConfig = SHIPPED) -> ColumnPolicy | None:
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
    policies = focus_policies(config)
    policy = policies.get(str(focus).lower())
    if policy is None:
        names = ", ".join(policies)
        raise ConfigError(f"focus {focus!r} is not one of {names}{did_you_mean(str(focus), policies)}")
    return policy


def focus_name(policy: ColumnPolicy | None, config: RankingConfig = SHIPPED) -> str | None:
    """The name under which ``policy`` is a focus ("custom" otherwise)."""
    if policy is None:
        return None
    return next((k for k, v in focus_policies(config).items() if v == policy), "custom")


def adaptive_knobs(adaptive: AdaptiveBudget | None) -> dict[str, object]:
    """``confidence``, ``min_tables``, ``sure_margin`` as evaluation reports name them
    (``confidence`` None: a fixed budget)."""
    if adaptive is None:
        return {"confidence": None, "min_tables": 1, "sure_margin": None}
    return asdict(adaptive)


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


# Named values as the rest of the code and the docs know them (all read from SHIPPED).
DEFAULT_COLUMN_POLICY = SHIPPED.default_columns
COMPACT_COLUMN_POLICY = SHIPPED.compact_columns
ADAPTIVE_BUDGET = SHIPPED.adaptive
DEFAULT_TABLE_BUDGET = SHIPPED.table_budget
