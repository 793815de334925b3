"""Table families at query time: one place per family, the member the question names first."""

from __future__ import annotations

from schemarag.runtime.search.table_families import families_of, family_order, question_numbers, specificity


def test_families_need_three_members_equal_but_for_digits() -> None:
    fams = families_of(
        ["ZIP_CODES_2017_5YR", "ZIP_CODES_2018_5YR", "ZIP_CODES_2015_5YR", "ORDERS", "T1", "T2"]
    )
    assert set(fams) == {"ZIP_CODES_2017_5YR", "ZIP_CODES_2018_5YR", "ZIP_CODES_2015_5YR"}
    cols = {"address_1": ["street", "city"], "address_2": ["street", "city"], "address_3": ["lat", "lon"]}
    assert families_of(list(cols), cols) == {}  # only two of them alike: no family


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


def test_dates_match_year_month_and_day() -> None:
    numbers, months = question_numbers("How many events on March 5, 2021?")
    assert "03" in months and {"5", "2021"} <= numbers
    assert specificity("d._20210305", numbers, months) == 3
    assert specificity("d._20210306", numbers, months) == 2
    assert specificity("d._20200305", numbers, months) == 0
