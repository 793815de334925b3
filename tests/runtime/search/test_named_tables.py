"""Tables the question names: every word of the table's own name is in the question."""

from __future__ import annotations

from typing import Any

import numpy as np
from ranking_support import rank_with
from tiny_support import in_memory_artifact

from schemarag.runtime.search.named_tables import (
    NameMatch,
    NamePostings,
    abbreviated,
    name_words,
    named_tables,
    question_words,
)

PLACES = [f"places.places_{s}" for s in ("ohio", "utah", "iowa", "idaho")]
GEO: dict[str, Any] = {
    "name": "geo",
    "tables": [
        {"name": t, "columns": [{"name": "geo_id"}]}
        for t in [*PLACES, "osm.planet_features_points", "osm.planet_ways"]
    ],
}
# one chunk per table: the four places tables 0.6 .. 0.45, the named osm table 0.3
SCORES = np.array([0.6, 0.55, 0.5, 0.45, 0.3, 0.1], dtype=np.float32)
KW: dict[str, Any] = {"budget": 3, "fk_expand": False, "family_slots": None, "schema_hedge": None}
QUESTION = "amenities in Ohio places near each other, from the planet features points"


def _art():
    return in_memory_artifact(GEO, [(t["name"], "table", None) for t in GEO["tables"]])


def test_name_words_leave_out_numbers_decoration_qualifier_and_family_marks() -> None:
    assert name_words("GEO_US_BOUNDARIES.ZIP_CODES") == {"zip", "code"}
    assert name_words("CLINICAL_GDC_R39") == {"clinic", "gdc"}  # the release number is not a word
    assert name_words("sales.CUSTOMER_DIM") == {"custom"}
    assert name_words("ga4.events_*") == {"event"}
    assert name_words("DAY._20230118") == frozenset()  # a name of digits only is never named


def test_a_table_is_named_only_when_every_word_of_its_name_is_in_the_question() -> None:
    art = _art()
    named = named_tables(art, QUESTION)
    names = [art.table_names[i] for i in np.flatnonzero(named)]
    # planet_ways lacks "ways"; places_utah lacks "utah"
    assert names == ["places.places_ohio", "osm.planet_features_points"]
    assert not named_tables(art, "how many roads").any()


def test_name_boost_and_prior_exemption_bring_the_named_table_into_the_budget() -> None:
    art = _art()
    # places leads; the osm table ranks below four places tables (and at 0.3 x its score)
    plain = rank_with(art, SCORES, question=QUESTION, name_boost=0.0, **KW).tables
    assert "osm.planet_features_points" not in plain
    # exempt from the prior, 0.3 still ranks below three places tables
    exempt = rank_with(art, SCORES, question=QUESTION, name_boost=0.0, named_exempt=True, **KW).tables
    assert "osm.planet_features_points" not in exempt
    # table scores are the chunk's / 1.3: +0.2 lifts osm 0.23 -> 0.43 past places_utah (0.42);
    # places_ohio, named too, stays first
    boosted = rank_with(art, SCORES, question=QUESTION, name_boost=0.2, named_exempt=True, **KW).tables
    assert boosted == ["places.places_ohio", "osm.planet_features_points", "places.places_utah"]
    # a boost without the exemption is scaled by the prior: not enough here
    scaled = rank_with(art, SCORES, question=QUESTION, name_boost=0.2, **KW).tables
    assert "osm.planet_features_points" not in scaled
    # in the leading schema a boost alone lifts it: the schema prior does not apply
    one = rank_with(art, SCORES, question=QUESTION, name_boost=0.2, schema_prior=1.0, **KW)
    assert one.tables == boosted


def test_a_name_word_the_question_writes_in_full_names_the_table_when_asked() -> None:
    postings = NamePostings(["fec.indiv16", "RNASEQ_HG38", "utility.zipcode_area", "fec.cm16", "geo.states"])
    question = "individual contributions, RNA sequencing on hg38, by zip code area"
    words = question_words(question)
    assert postings.named(words).tolist() == [False, False, False, False, False]
    # indiv begins "individual"; rnaseq = "rna" + "seq"uencing; zipcod = "zip" + "code" (stemmed)
    assert postings.shortened(words, question) == {"indiv", "rnaseq", "zipcod"}
    assert postings.named(words | postings.shortened(words, question)).tolist() == [
        True,
        True,
        True,
        False,
        False,
    ]
    # a word shorter than MIN_PREFIX letters never abbreviates ("cm" is no prefix match), and
    # a question word is no abbreviation of itself ("states" names geo.states as a whole word)
    assert postings.shortened(question_words("states of cmte"), "states of cmte") == set()


def test_in_a_dbt_project_only_the_consumer_layer_is_lifted() -> None:
    """raw.customers and stg_customers are named as much as the mart; only the mart (full layer
    weight) gets the boost, so the report the question means still beats the raw source."""
    dbt = {
        "name": "shop",
        "tables": [
            {"name": "raw.customers", "layer": "source", "columns": [{"name": "id"}]},
            {"name": "staging.stg_customers", "layer": "staging", "columns": [{"name": "id"}]},
            {"name": "reports.rpt_customer_lifetime_value", "layer": "reports", "columns": [{"name": "id"}]},
        ],
    }
    art = in_memory_artifact(dbt, [(t["name"], "table", None) for t in dbt["tables"]])
    question = "Which customers have the highest lifetime value?"
    assert named_tables(art, question).tolist() == [True, True, True]  # rpt_ is decoration
    scores = np.array([0.9, 0.9, 0.5], dtype=np.float32)  # the raw names match best
    kw: dict[str, Any] = {"budget": 3, "fk_expand": False, "family_slots": None}
    ranked = rank_with(art, scores, question=question, name_boost=0.5, **kw)
    # evidence x layer weight: raw 0.9 x 0.5, staging 0.9 x 0.65, report 0.5 x 1.0 + 0.5 boost
    assert ranked.tables[0] == "reports.rpt_customer_lifetime_value"
    assert all(0.0 <= s <= 1.0 for s in ranked.scores.values())  # reported scores stay calibrated


def test_a_common_short_form_of_a_question_word_names_the_table_when_asked() -> None:
    postings = NamePostings(
        ["acs.censustract_2018_5yr", "acs.county_2018_5yr", "sales.order_amt", "sales.orders"]
    )
    question = "median income per census tract from the 2018 five-year survey"
    words = question_words(question) | postings.shortened(question_words(question), question)
    assert postings.named(words).tolist() == [False, False, False, False]  # "yr" is not a word of it
    assert abbreviated(words) == {"yr"}  # "year" -> yr (abbreviations.GENERAL)
    # censustract: "census" + "tract" glued; yr: "year"; the county table's name is not all there
    assert postings.named(words | abbreviated(words)).tolist() == [True, False, False, False]
    amounts = question_words("total order amount")
    assert postings.named(amounts).tolist() == [False, False, False, True]
    assert postings.named(amounts | abbreviated(amounts)).tolist() == [False, False, True, True]


def test_a_long_name_may_lack_one_word_when_asked_but_not_its_union_prefix() -> None:
    postings = NamePostings(["RNASEQ_HG38_GDC_R35", "RNASEQ_HG38", "CLINICAL_GDC"])
    question = "RNA sequencing hg38 r35 samples"
    words = question_words(question) | postings.shortened(question_words(question), question)
    assert postings.named(words).tolist() == [False, True, False]  # gdc is not in the question
    # three words of four are there: named with one missing; two-word names still need both
    assert postings.named(words, missing=1).tolist() == [True, True, False]
    # in a union every table name starts with its database's: those words are not its own, so
    # "student club" alone never names student_club__member (one word of its own)
    union = NamePostings(["student_club__member", "student_club__zip_code"], ["student_club", "student_club"])
    club = question_words("How many members does the Student Club have?")
    assert union.named(club, missing=1).tolist() == [True, False]
    assert union.named(question_words("student club events"), missing=1).tolist() == [False, False]


def test_a_question_word_names_the_glued_name_word_it_begins_when_asked() -> None:
    postings = NamePostings(["bikeshare.bikeshare_trips", "muni.trips", "f1.drives", "oracle.orderlines"])
    bikes = question_words("average speed of bike trips in Berkeley")
    # "trips" alone names muni.trips; bikeshare_trips needs "bikeshare"
    assert postings.named(bikes).tolist() == [False, True, False, False]
    # "bike" begins bikeshar with 4 letters more: both trip tables are named now
    assert postings.extended(bikes) == {"bikeshar"}
    assert postings.named(bikes | postings.extended(bikes)).tolist() == [True, True, False, False]
    # an English ending is no second word: "drive" does not name a driver table by its -r, and a
    # question word shorter than MIN_PREFIX letters begins nothing
    assert NamePostings(["f1.drivers"]).extended(question_words("who can drive")) == set()
    assert postings.extended(question_words("the bik of each ord")) == set()
    orders = question_words("lines of each order")
    assert postings.extended(orders) == {"orderlin"}
    # named_tables applies it on request only
    art = in_memory_artifact(
        {
            "name": "sf",
            "tables": [
                {"name": n, "columns": [{"name": "id"}]} for n in ("bike.bikeshare_trips", "muni.trips")
            ],
        },
        [("bike.bikeshare_trips", "table", None), ("muni.trips", "table", None)],
    )
    q = "average speed of bike trips"
    assert named_tables(art, q).tolist() == [False, True]
    assert named_tables(art, q, NameMatch(extended=True)).tolist() == [True, True]


CODED: dict[str, Any] = {
    "name": "erp",
    "tables": [
        {"name": "KNA1", "label": "customer master", "columns": [{"name": "KUNNR"}]},
        {"name": "VBAK", "label": "sales document header", "columns": [{"name": "VBELN"}, {"name": "KUNNR"}]},
        {"name": "MARA", "columns": [{"name": "MATNR"}]},
    ],
}


def test_a_label_names_its_table_as_its_name_would() -> None:
    art = in_memory_artifact(CODED, [(t["name"], "table", None) for t in CODED["tables"]])
    question = "which customer master records have a sales document header from 2024?"
    named = named_tables(art, question)
    assert [art.table_names[i] for i in np.flatnonzero(named)] == ["KNA1", "VBAK"]
    assert not named_tables(art, question, NameMatch(labels=False)).any()  # the codes name nothing
    # every content word of the label, as for a name: "customer" alone names no table
    assert not named_tables(art, "how many customers?").any()
    # the question's words still name a table by its own name beside the labels
    assert [art.table_names[i] for i in np.flatnonzero(named_tables(art, "mara rows"))] == ["MARA"]


def test_the_name_boost_lifts_a_labelled_table_into_the_budget() -> None:
    art = in_memory_artifact(CODED, [(t["name"], "table", None) for t in CODED["tables"]])
    scores = np.array([0.2, 0.3, 0.5], dtype=np.float32)  # the unlabelled MARA leads on evidence
    kw: dict[str, Any] = {"budget": 1, "fk_expand": False, "family_slots": None, "schema_hedge": None}
    question = "list every customer master row"
    assert rank_with(art, scores, question=question, name_labels=False, **kw).tables == ["MARA"]
    assert rank_with(art, scores, question=question, **kw).tables == ["KNA1"]


def test_in_a_union_a_label_needs_its_databases_words_as_the_name_does() -> None:
    union: dict[str, Any] = {
        "name": "u",
        "tables": [
            {"name": "shop__transactions", "database": "shop", "columns": [{"name": "id"}]},
            {"name": "bank__trans", "database": "bank", "label": "transaction", "columns": [{"name": "id"}]},
            {
                "name": "bank__KNA1",
                "database": "bank",
                "label": "customer master data",
                "columns": [{"name": "id"}],
            },
        ],
    }
    art = in_memory_artifact(union, [(t["name"], "table", None) for t in union["tables"]])

    def named(question: str) -> list[str]:  # one word may be missing, as the ranking asks (name_missing)
        return [art.table_names[i] for i in np.flatnonzero(named_tables(art, question, NameMatch(missing=1)))]

    # one word of its own: the name needs "shop", the label needs "bank"
    assert named("average price of the transactions in euro") == []
    assert named("the bank transactions in euro") == ["bank__trans"]
    assert named("the shop transactions in euro") == ["shop__transactions"]
    # three words of its own may lack one, as a name's: here the database's
    assert named("every customer master data row") == ["bank__KNA1"]
    assert named("every customer master row") == []  # two of its own three and not "bank"
