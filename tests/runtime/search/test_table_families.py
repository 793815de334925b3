"""Table families at query time: one place per family, the member the question names first."""

from __future__ import annotations

import numpy as np

from schemarag.runtime.search.table_families import (
    families_of,
    family_order,
    question_numbers,
    specificity,
    structure_order,
    structures_of,
    twins_last,
    twins_of,
)


def test_families_need_three_members_equal_but_for_digits() -> None:
    fams = families_of(
        ["ZIP_CODES_2017_5YR", "ZIP_CODES_2018_5YR", "ZIP_CODES_2015_5YR", "ORDERS", "T1", "T2"]
    )
    assert set(fams) == {"ZIP_CODES_2017_5YR", "ZIP_CODES_2018_5YR", "ZIP_CODES_2015_5YR"}
    cols = {"address_1": ["street", "city"], "address_2": ["street", "city"], "address_3": ["lat", "lon"]}
    assert families_of(list(cols), cols) == {}  # only two of them alike: no family


def test_names_equal_but_for_whitespace_are_one_family() -> None:
    # an export holding " accident_2015" beside "accident_2015": two pairs, no family of three
    # until whitespace is ignored; then one family whose members the question's year names
    names = [" accident_2015", "accident_2015", " accident_2020", "accident_2020", "person_2015"]
    fams = families_of(names)
    assert set(fams) == set(names[:4]) and len(set(fams.values())) == 1
    ranked = [" accident_2015", "accident_2015", " accident_2020", "accident_2020", "person_2015"]
    assert family_order(ranked, fams, "accidents in 2015", 1)[:3] == [
        " accident_2015",
        "accident_2015",
        "person_2015",
    ]


def test_a_family_takes_one_place_and_lets_the_next_table_in() -> None:
    ranked = ["s.GSOD2019", "s.GSOD2018", "s.GSOD2017", "s.STATIONS", "s.TRIPS"]
    fams = families_of(ranked)
    assert family_order(ranked, fams, "average temperature per station", 1)[:3] == [
        "s.GSOD2019",
        "s.STATIONS",
        "s.TRIPS",
    ]
    assert family_order(ranked, fams, "trips in 2017", 1)[0] == "s.GSOD2017"  # the question's year
    assert family_order(ranked, fams, "trips in 2017", 2)[:2] == ["s.GSOD2017", "s.GSOD2019"]


def test_members_beyond_the_family_places_come_after_every_other_table() -> None:
    # a budget larger than the rest of the database shows the whole family instead of leaving
    # places empty; none of them ever comes before a table outside the family
    ranked = ["s.PHOTOS_V_0_1", "s.PHOTOS_V_0_3", "s.USERS", "s.PHOTOS_V_0_2", "s.CLICKS"]
    fams = families_of(ranked)
    order = family_order(ranked, fams, "total clicks across all photo collections", 1)
    assert order == ["s.PHOTOS_V_0_1", "s.USERS", "s.CLICKS", "s.PHOTOS_V_0_3", "s.PHOTOS_V_0_2"]
    assert sorted(order) == sorted(ranked)  # nothing is lost


def test_dates_match_year_month_and_day() -> None:
    numbers, months = question_numbers("How many events on March 5, 2021?")
    assert "03" in months and {"5", "2021"} <= numbers
    assert specificity("d._20210305", numbers, months) == 3
    assert specificity("d._20210306", numbers, months) == 2
    assert specificity("d._20200305", numbers, months) == 0


def test_whitespace_twins_take_one_place_under_the_plainest_name() -> None:
    # the family keeps both 2015 twins first; as one relation exported twice they take one place
    names = [
        " accident_2015",
        "accident_2015",
        " accident_2020",
        "accident_2020",
        "person_2015",
        "vehicle_2015",
    ]
    ordered = family_order(names, families_of(names), "accidents in 2015", 1)
    twins = twins_of(names)
    assert set(twins) == set(names[:4]) and len(set(twins.values())) == 2
    assert twins_last(ordered, twins)[:3] == ["accident_2015", "person_2015", "vehicle_2015"]
    assert sorted(twins_last(ordered, twins)) == sorted(names)  # nothing dropped: twins come last
    assert twins_of(["a", "b", "c"]) == {}


def test_a_year_span_names_every_year_in_it() -> None:
    numbers, _ = question_numbers("Average temperature from 2011 to 2014, per station")
    assert {"2011", "2012", "2013", "2014"} <= numbers
    assert {"2012", "2013"} <= question_numbers("between 2011 and 2014")[0]
    assert "2015" not in question_numbers("compare 2010 and 2020")[0]  # two years, not a span
    assert "1950" not in question_numbers("from 1900 to 2000")[0]  # too long to name members
    ranked = [f"s.GSOD{y}" for y in range(2005, 2020)] + ["s.STATIONS"]
    fams = families_of(ranked)
    question = "increase in hot days from 2011 to 2014"
    # the two ends the question compares come first; the inner years take the family's other places
    assert family_order(ranked, fams, question, 1)[:3] == ["s.GSOD2011", "s.GSOD2014", "s.STATIONS"]
    assert family_order(ranked, fams, question, 4)[:5] == [
        "s.GSOD2011",
        "s.GSOD2014",
        "s.GSOD2012",
        "s.GSOD2013",
        "s.STATIONS",
    ]


def test_a_named_year_also_matches_its_two_digit_form() -> None:
    ranked = ["f.cn14", "f.cn18", "f.cn16", "f.committees"]
    fams = families_of(ranked)
    assert family_order(ranked, fams, "candidates of the 2016 election", 1)[:2] == ["f.cn16", "f.committees"]


def test_the_member_naming_most_of_the_question_wins_over_small_number_ties() -> None:
    ranked = [f"acs.county_{y}_{k}yr" for y in (2015, 2016, 2017, 2018) for k in (1, 5)]
    fams = families_of(ranked)
    question = "Median income by county in the 5-year estimates for 2017"
    numbers, months = question_numbers(question)
    assert specificity("acs.county_2017_5yr", numbers, months) == 3
    assert specificity("acs.county_2016_5yr", numbers, months) == 1
    # only the best-named member comes first: a shared "5" no longer ties every 5-year table
    assert family_order(ranked, fams, question, 1)[:1] == ["acs.county_2017_5yr"]
    quarters = [f"q.wages_{y}_q{q}" for y in (2017, 2018, 2019) for q in (1, 2, 3, 4)]
    qfams = families_of(quarters)
    assert family_order(quarters, qfams, "Wages since January 1, 2018 in Q1", 1)[:1] == ["q.wages_2018_q1"]


def test_named_members_are_capped_by_most_named() -> None:
    quarters = [f"q.wages_{y}_q{q}" for y in (2017, 2018, 2019) for q in (1, 2, 3, 4)]
    fams = families_of(quarters)
    year = [f"q.wages_2018_q{q}" for q in (1, 2, 3, 4)]
    assert family_order(quarters, fams, "total wages in 2018", 1)[:4] == year  # four quarters tie
    assert family_order(quarters, fams, "total wages in 2018", 1, most_named=2)[:2] == year[:2]


def test_a_year_alone_names_no_month_or_day_of_it() -> None:
    numbers, months = question_numbers("watch events of 2017")
    assert specificity("m._201703", numbers, months) == 0  # which month? none in particular
    assert specificity("y._2017", numbers, months) == 2
    monthly = [f"m._2017{m:02d}" for m in range(1, 13)]
    fams = families_of(monthly)
    assert family_order(monthly, fams, "watch events of 2017", 1)[:1] == ["m._201701"]  # by rank


def test_a_number_every_member_carries_names_none_of_them() -> None:
    chromosomes = [f"t.DNA_METHYLATION_CHR{c}_HG38" for c in range(1, 23)]
    ranked = [*chromosomes[:3], "t.RNASEQ_HG38", *chromosomes[3:]]
    fams = families_of(ranked)
    # "hg38" gives every chromosome table the same point: one place, by rank, and RNASEQ follows
    order = family_order(ranked, fams, "RNA expression in hg38 release", 1)
    assert order[:2] == ["t.DNA_METHYLATION_CHR1_HG38", "t.RNASEQ_HG38"]
    # naming a chromosome still picks it
    assert family_order(ranked, fams, "methylation on chromosome 17 in hg38", 1)[0] == chromosomes[16]


def test_tables_of_one_schema_with_the_same_columns_are_a_structural_family() -> None:
    daily = ["site", "date", "mean", "max", "units"]
    columns = {f"epa.{p}_daily_summary": daily for p in ("co", "no2", "so2", "voc")}
    columns |= {
        "epa.sites": ["site", "lat", "lon", "name"],
        "other.co_daily_summary": daily,  # another schema: not a member
        "epa.lookup_a": ["id", "name"],  # too few columns to say anything
        "epa.lookup_b": ["id", "name"],
        "epa.lookup_c": ["id", "name"],
    }
    fams = structures_of(columns)
    assert set(fams) == {f"epa.{p}_daily_summary" for p in ("co", "no2", "so2", "voc")}
    # tables of a digit family are left to it
    assert structures_of(columns, exclude={"epa.co_daily_summary": "x"}).keys() == {
        f"epa.{p}_daily_summary" for p in ("no2", "so2", "voc")
    }


def test_a_structural_family_keeps_named_members_and_its_places_then_lets_others_in() -> None:
    fams = {f"{p}_daily": "k" for p in ("co", "no2", "so2", "voc", "o3")}
    ranked = ["co_daily", "no2_daily", "o3_daily", "so2_daily", "sites", "monitors", "voc_daily"]
    # "SO2 and VOC" name two members; two more places for the best unnamed ones, then the rest
    assert structure_order(ranked, fams, {"so2_daily", "voc_daily"}, 2) == [
        "co_daily",
        "no2_daily",
        "so2_daily",
        "sites",
        "monitors",
        "voc_daily",
        "o3_daily",
    ]
    assert structure_order(ranked, {}, set(), 1) == ranked


def test_the_ranking_gives_a_structural_family_its_places_and_the_lookup_the_next() -> None:
    from ranking_support import rank_with
    from tiny_support import in_memory_artifact

    cols = [{"name": c} for c in ("site", "date", "mean", "max")]
    pollutants = [f"{p}_daily_summary" for p in ("co", "no2", "so2", "voc")]
    schema = {
        "name": "epa",
        "tables": [{"name": t, "columns": cols} for t in pollutants]
        + [{"name": "sites", "columns": [{"name": "site"}, {"name": "city"}]}],
    }
    art = in_memory_artifact(schema, [(t["name"], "table", None) for t in schema["tables"]])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5], dtype=np.float32)  # sites ranks last
    kw = {"fk_expand": False, "question": "pollution readings for each place", "coverage_power": 0.0}
    assert "sites" not in rank_with(art, scores, 3, structure_slots=None, **kw).tables
    # one place for the family's unnamed members: the best one keeps it, the lookup comes next
    kept = rank_with(art, scores, 3, structure_slots=1, **kw).tables
    assert kept == ["co_daily_summary", "sites", "no2_daily_summary"]
