"""The shards a question's date names, in a collapsed family's DDL note (synthetic ranges, and
one index built by the real graph)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from retrieval_support import build

from schemarag.runtime.core.schema import Database, ShardRange
from schemarag.runtime.formatting import format_focused_schema, format_ranking
from schemarag.runtime.search.results import TableRanking
from schemarag.runtime.search.retriever import Retriever
from schemarag.runtime.search.shard_hints import question_dates, shard_hint, shard_hints

DAYS = ShardRange(stem="ga.ev_", pattern="YYYYMMDD", first="20201101", last="20210131", count=92)
YEARS = ShardRange(stem="noaa.gsod", pattern="YYYY", first="1929", last="2023", count=95)


def test_a_date_in_a_daily_family_names_its_shard() -> None:
    assert shard_hint(DAYS, "Page views on January 18, 2021?") == "the question's date: ga.ev_20210118"
    for q in ("views on 2021-01-18", "views on 20210118", "views on 01/18/2021", "views on 18 Jan 2021"):
        assert shard_hint(DAYS, q) == "the question's date: ga.ev_20210118", q
    two = shard_hint(DAYS, "compare 2020-12-24 with December 31, 2020")
    assert two == "the question's dates: ga.ev_20201224, ga.ev_20201231"


def test_a_date_outside_the_range_or_no_date_names_nothing() -> None:
    assert shard_hint(DAYS, "views on 2022-03-01") == ""
    assert shard_hint(DAYS, "views on January 18") == ""  # no year: no member in particular
    assert shard_hint(DAYS, "top 5 pages by views") == ""
    assert shard_hint(YEARS, "weather in 1850") == ""


def test_a_year_or_month_on_a_daily_family_is_a_sub_range_clipped_to_the_range() -> None:
    assert shard_hint(DAYS, "views in 2021") == "the question's date: ga.ev_20210101 .. ga.ev_20210131 (2021)"
    assert shard_hint(DAYS, "views on February 30, 2021") == shard_hint(DAYS, "views in 2021")  # no such day
    month = shard_hint(DAYS, "views in December 2020")
    assert month == "the question's date: ga.ev_20201201 .. ga.ev_20201231 (2020-12)"
    full = ShardRange(stem="ev_", pattern="YYYYMMDD", first="20200101", last="20221231", count=1096)
    assert shard_hint(full, "events in 2021") == "the question's date: ev_20210101 .. ev_20211231 (2021)"
    # a named day covers its year: the day, not 365 shards
    assert shard_hint(full, "events on March 5, 2021") == "the question's date: ev_20210305"


def test_many_dates_become_one_span() -> None:
    q = "on 2020-11-01, 2020-11-05, 2020-12-01, 2020-12-02 and 2021-01-03"
    assert shard_hint(DAYS, q) == "the question's dates: ga.ev_20201101 .. ga.ev_20210103 (span of 5)"


def test_yearly_monthly_numbered_and_gapped_families() -> None:
    assert shard_hint(YEARS, "hottest day of 2015") == "the question's year: noaa.gsod2015"
    assert shard_hint(YEARS, "rain on 2015-06-01") == "the question's year: noaa.gsod2015"
    months = ShardRange(stem="s_", pattern="YYYYMM", first="202001", last="202112", count=24)
    assert shard_hint(months, "sales on 2021-03-04") == "the question's month: s_202103"
    assert shard_hint(months, "sales in 2021") == "the question's month: s_202101 .. s_202112 (2021)"
    trips = ShardRange(stem="trips_", pattern="N", first="2014", last="2020", count=7)
    assert shard_hint(trips, "trips in 2016 and 2017") == "the question's years: trips_2016, trips_2017"
    parts = ShardRange(stem="p_", pattern="N", first="01", last="40", count=40)
    assert shard_hint(parts, "top 5 rows of part 12") == "the question's number: p_12"  # "5" is not as wide
    assert shard_hint(parts, "rows added in 2016") == ""  # a year's two-digit form names no part
    span = "the question's year: noaa.gsod2019 .. noaa.gsod2021 (2019-2021)"
    assert shard_hint(YEARS, "rain from 2019 to 2021") == span
    gapped = ShardRange(stem="ev_", pattern="YYYYMMDD", first="20210101", last="20210131", count=20)
    assert shard_hint(gapped, "on 2021-01-18") == (
        "the question's date: ev_20210118 (not every shard in the range exists)"
    )
    dashed = ShardRange(stem="d_", pattern="YYYY_MM_DD", first="2021_01_01", last="2021_12_31", count=365)
    assert shard_hint(dashed, "on March 3, 2021") == "the question's date: d_2021_03_03"


def test_an_unreadable_range_names_nothing() -> None:
    odd = ShardRange(stem="t_", pattern="events_YYYYMMDD", first="20210101", last="20210131", count=31)
    assert shard_hint(odd, "on 2021-01-18") == ""
    loose = ShardRange(stem="t_", pattern="YYYYMMDD", first="20210101", last="20210230", count=30)
    assert shard_hint(loose, "on 2021-01-18") == "the question's date: t_20210118"


def test_question_dates_reads_each_form_once() -> None:
    named = question_dates("on 18 January 2021 and December 2020, also 2019")
    assert named.spans == {
        ((2021, 1, 18), (2021, 1, 18), "2021-01-18"),
        ((2020, 12, 1), (2020, 12, 31), "2020-12"),
    }
    assert named.years == {2019}


def test_a_written_range_is_one_sub_range() -> None:
    nov = "the question's date: ga.ev_20201101 .. ga.ev_20201130 (2020-11)"  # a whole month
    assert shard_hint(DAYS, "for the date range November 1–30, 2020") == nov
    assert shard_hint(DAYS, "between November 1, 2020, and November 30, 2020") == nov
    assert shard_hint(DAYS, "from 2020-11-01 to 2020-11-30") == nov
    months = shard_hint(DAYS, "monthly rates from November to December 2020")
    assert months == "the question's date: ga.ev_20201101 .. ga.ev_20201231 (2020-11-01 .. 2020-12-31)"
    # "and" without "between" joins nothing: two dates
    two = shard_hint(DAYS, "compare November 1, 2020 and November 30, 2020")
    assert two == "the question's dates: ga.ev_20201101, ga.ev_20201130"


def _db() -> Database:
    return Database.model_validate(
        {
            "name": "ga",
            "dialect": "bigquery",
            "tables": [
                {"name": "ga.ev_*", "columns": [{"name": "page"}], "shards": DAYS.model_dump()},
                {"name": "ga.users", "columns": [{"name": "id"}]},
            ],
        }
    )


def test_the_focused_schema_carries_the_hint_of_a_ranking() -> None:
    db = _db()
    hints = shard_hints(db, ["ga.ev_*", "ga.users"], "views on 2021-01-18")
    assert hints == {"ga.ev_*": "the question's date: ga.ev_20210118"}
    ranking = TableRanking(tables=["ga.ev_*", "ga.users"], shard_hints=hints)
    head = format_ranking(db, ranking).splitlines()[0]
    assert head.endswith(
        "-- 92 shards ga.ev_20201101 .. ga.ev_20210131: filter with _TABLE_SUFFIX BETWEEN '20201101' "
        "AND '20210131'; the question's date: ga.ev_20210118"
    )
    assert ranking.to_dict()["tables"][0]["shard_hint"] == hints["ga.ev_*"]
    assert "shard_hint" not in ranking.to_dict()["tables"][1]
    assert shard_hints(db, ["ga.users"], "views on 2021-01-18") == {}


# A GA-like export as `import catalog` writes it: the daily shards collapsed into `ga.ev_*`.
GA = {
    "name": "ga_tiny",
    "description": "Web analytics: page view events per day and the site's users.",
    "dialect": "bigquery",
    "tables": [
        {
            "name": "ga.ev_*",
            "description": "Page view events, one shard per day.",
            "shards": DAYS.model_dump(),
            "columns": [
                {"name": "event_date", "type": "STRING", "description": "Day of the page view."},
                {"name": "page_title", "type": "STRING", "description": "Title of the page viewed."},
                {"name": "user_id", "type": "STRING", "description": "Visitor who viewed the page."},
            ],
        },
        {
            "name": "ga.users",
            "description": "Registered users of the site and their country.",
            "columns": [
                {"name": "user_id", "type": "STRING", "primary_key": True, "nullable": False},
                {"name": "country", "type": "STRING", "description": "Country of the user."},
            ],
        },
    ],
}


@pytest.fixture(scope="module")
def ga(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    base = tmp_path_factory.mktemp("ga")
    data = base / "schemas"
    data.mkdir()
    (data / "ga_tiny.json").write_text(json.dumps(GA), encoding="utf-8")
    build(["ga_tiny"], data, base / "artifacts")
    return Retriever.open("ga_tiny", artifacts=base / "artifacts")


def test_a_built_index_serves_the_shard_a_question_names(ga: Retriever) -> None:
    result = ga.search("How many page views were there on January 18, 2021?", relevance_threshold=0.0)
    assert result.ranking is not None and "ga.ev_*" in result.ranking.tables
    schema = format_focused_schema(result.schema, result)
    head = next(line for line in schema.splitlines() if "ga.ev_" in line and "CREATE" in line)
    assert head.endswith("; the question's date: ga.ev_20210118"), head
    row = next(t for t in result.to_dict()["ranking"]["tables"] if t["table"] == "ga.ev_*")
    assert row["shard_hint"] == "the question's date: ga.ev_20210118"
    # no date named: the note states the range only; no ranking: the hint still reaches the DDL
    plain = format_focused_schema(
        result.schema, ga.search("page views per page title", relevance_threshold=0.0)
    )
    assert "the question's" not in plain
    chunks_only = ga.search("page views in 2021", relevance_threshold=0.0, table_budget=0)
    assert "ga.ev_20210101 .. ga.ev_20210131 (2021)" in format_focused_schema(result.schema, chunks_only)


def test_retrieve_cli_prints_the_hint(ga: Retriever, capsys: pytest.CaptureFixture[str]) -> None:
    from schemarag.cli import main

    artifacts = Path(ga.artifact.path).parents[1]
    assert (
        main(
            [
                "retrieve",
                "--artifacts",
                str(artifacts),
                "--db",
                "ga_tiny",
                "page views on 2021-01-18",
                "--threshold",
                "0",
            ]
        )
        == 0
    )
    assert "the question's date: ga.ev_20210118" in capsys.readouterr().out
