"""Dated tables (runtime/search/dated_tables.py): one table per year, and the question's year."""

from __future__ import annotations

import numpy as np
from tiny_support import in_memory_artifact

from schemarag.runtime.core.schema import ShardRange
from schemarag.runtime.search.dated_tables import (
    TableSpans,
    dated_groups,
    dated_groups_of,
    question_years,
    table_spans,
    table_years,
    year_prior,
)

COLS = ["st_case", "state", "veh_no", "hour"]


def test_a_table_covers_the_years_of_its_name_or_of_its_shard_range() -> None:
    assert table_years("county_2017_5yr") == (2017, 2017)
    assert table_years("ev_20210118") == (2021, 2021)
    assert table_years("icoads_core_1800_2000") == (1800, 2000)
    assert table_years("dclde_2020_1705_array") == (2020, 2020)  # 1705: a deployment, not a year
    assert table_years("cpsaat18") is None and table_years("orders") is None
    weeks = ShardRange(stem="w_", pattern="N", first="1", last="52", count=52)
    assert table_years("w_*", weeks) is None  # numbered shards that are not years
    years = ShardRange(stem="accident_", pattern="N", first="2016", last="2019", count=4)
    assert table_years("accident_*", years) == (2016, 2019)
    dashed = ShardRange(stem="ev_", pattern="YYYY_MM_DD", first="2020_01_01", last="2021_12_31", count=731)
    assert table_years("ev_*", dashed) == (2020, 2021)  # the year its dated suffix begins with


def test_the_question_names_its_years_and_every_year_of_a_span() -> None:
    assert question_years("crashes in 2015") == {2015}
    assert question_years("crashes from 2015 to 2017, top 5") == {2015, 2016, 2017}
    assert question_years("the 5 busiest stations") == set()


def test_a_group_is_same_named_tables_of_alike_columns_covering_different_years() -> None:
    names = ["accident_2015", "accident_*", "vehicle_2015", "vehicle_2016", "person_2015", "parkwork_2016"]
    columns = dict.fromkeys(names, COLS) | {"parkwork_2016": COLS}
    shards = {"accident_*": ShardRange(stem="accident_", pattern="N", first="2016", last="2019", count=4)}
    groups = dated_groups_of(names, columns, shards)
    assert len(groups) == 2  # accident_2015 + accident_*, vehicle_2015 + vehicle_2016
    assert sorted(names[i] for i in groups.outdated({2015})) == ["accident_*", "vehicle_2016"]
    assert sorted(names[i] for i in groups.outdated({2017})) == ["accident_2015"]  # no vehicle_2017
    assert groups.outdated({2015, 2016}).tolist() == []  # every member covers a named year
    other = dated_groups_of(["a_2015", "a_2016"], {"a_2015": COLS, "a_2016": ["x", "y", "z"]}, {})
    assert len(other) == 0  # same name, other columns: no copies of one table


def test_the_prior_scales_the_outdated_members_and_leaves_the_scores_it_was_given() -> None:
    groups = dated_groups_of(
        ["v_2015", "v_2016", "p_2015"], dict.fromkeys(["v_2015", "v_2016", "p_2015"], COLS), {}
    )
    scores = np.array([0.8, 0.9, 0.5], dtype=np.float32)
    got = year_prior(scores, groups, {2015}, 0.5)
    assert got.tolist() == np.array([0.8, 0.45, 0.5], dtype=np.float32).tolist()
    assert scores[1] == np.float32(0.9)
    assert year_prior(scores, groups, {2015}, 1.0) is scores
    assert year_prior(scores, groups, set(), 0.5) is scores


def test_groups_are_read_from_an_index_with_its_shard_ranges() -> None:
    family = {"stem": "accident_", "pattern": "N", "first": "2016", "last": "2019", "count": 4}
    tables = [
        {"name": "accident_2015", "columns": [{"name": c} for c in COLS]},
        {"name": "accident_*", "columns": [{"name": c} for c in COLS], "shards": family},
        {"name": "person_2015", "columns": [{"name": c} for c in COLS]},
    ]
    art = in_memory_artifact({"name": "fars", "tables": tables}, [(t["name"], "table", None) for t in tables])
    groups = dated_groups(art)
    assert [art.table_names[i] for i in groups.outdated({2015})] == ["accident_*"]
    assert [art.table_names[i] for i in groups.outdated({2018})] == ["accident_2015"]


def test_database_wide_a_table_of_other_years_is_outdated_only_when_another_covers_the_question() -> None:
    names = ["icoads_core_2005_2017", "gsod_*", "stations", "wind_reports_2018"]
    gsod = ShardRange(stem="gsod", pattern="N", first="1929", last="2024", count=96)
    schema = {
        "name": "noaa",
        "tables": [
            {"name": t, "columns": [{"name": "x"}], **({"shards": gsod.__dict__} if t == "gsod_*" else {})}
            for t in names
        ],
    }
    art = in_memory_artifact(schema, [(t, "table", None) for t in names])
    spans = table_spans(art)
    assert sorted(names[i] for i in spans.outdated({2019})) == ["icoads_core_2005_2017", "wind_reports_2018"]
    assert spans.outdated({1900}).tolist() == []  # no table covers 1900: nothing is outdated
    assert spans.outdated(set()).tolist() == []
    scores = np.array([0.9, 0.6, 0.5, 0.4], dtype=np.float32)
    groups = dated_groups(art)
    got = year_prior(scores, groups, {2019}, 0.3, spans, 0.5)
    assert got.tolist() == np.array([0.45, 0.6, 0.5, 0.2], dtype=np.float32).tolist()  # stations: no year
    assert year_prior(scores, groups, {2019}, 0.3, spans, 1.0).tolist() == scores.tolist()  # 1: off


def test_in_a_union_only_a_table_of_the_same_database_makes_another_outdated() -> None:
    spans = TableSpans([0, 1, 2], [(2019, 2019), (2005, 2017), (2005, 2017)], sources=[0, 0, 1])
    assert spans.outdated({2019}).tolist() == [1]  # database 1 has no table of 2019
