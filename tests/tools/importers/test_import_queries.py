"""``schemarag import queries``: sources, what is stored, literals, append/replace, bad input.

The warehouse export formats are in test_import_queries_formats.py; real DuckDB and PostgreSQL
runs in test_import_queries_engines.py.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from schemarag.assets.lib.query_history import FORMAT, VERSION, open_queries
from schemarag.runtime.core.errors import ImportFormatError
from schemarag.tools.importers.limits import ImportLimitError, ImportLimits
from schemarag.tools.importers.query_log import history_dir, import_queries

SHOP = {
    "name": "shop",
    "dialect": "postgres",
    "tables": [
        {"name": "orders", "columns": [{"name": "id"}, {"name": "customer_id"}, {"name": "amount"}]},
        {"name": "customers", "columns": [{"name": "id"}, {"name": "name"}, {"name": "region_id"}]},
        {"name": "regions", "columns": [{"name": "id"}, {"name": "name"}]},
        {"name": "sales.items", "columns": [{"name": "order_id"}, {"name": "sku"}]},
    ],
}


def write_schema(data: Path, schema: dict = SHOP) -> Path:
    data.mkdir(parents=True, exist_ok=True)
    (data / f"{schema['name']}.json").write_text(json.dumps(schema))
    return data


def rows(data: Path, db: str = "shop", tenant: str | None = None) -> list[dict]:
    return open_queries(history_dir(data, db, tenant)).read().to_pylist()


def manifest(data: Path, db: str = "shop", tenant: str | None = None) -> dict:
    return json.loads((history_dir(data, db, tenant) / "manifest.json").read_text())


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_schema(tmp_path / "schemas")


def test_sql_file_split_by_the_dialect_tokenizer(data: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.sql"
    log.write_text(
        "-- nightly report; owner: finance\n"
        "SELECT c.name, SUM(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id\n"
        "  WHERE c.name = 'Ann; Smith' GROUP BY 1;\n"
        "select * from customers c join regions r on r.id = c.region_id where r.name = $$x;y$$;\n"
        "/* a; comment */ select i.sku from sales.items i join orders o using (id);\n"
        "SELECT c.name, SUM(o.amount) FROM orders o JOIN customers c ON o.customer_id = c.id\n"
        "  WHERE c.name = 'Bob' GROUP BY 1\n"
    )
    report = import_queries([str(log)], db="shop", data=data)
    got = rows(data)
    assert [r["count"] for r in got] == [2, 1, 1]  # Ann and Bob: one statement once literals go
    first = got[0]
    assert first["sql"] == (
        "SELECT c.name, SUM(o.amount) FROM orders AS o JOIN customers AS c ON o.customer_id = c.id "
        "WHERE c.name = ? GROUP BY 1"
    )
    assert sorted(first["tables"]) == ["customers", "orders"]
    assert first["joins"] == [
        {
            "left_table": "customers",
            "left_column": "id",
            "right_table": "orders",
            "right_column": "customer_id",
        }
    ]
    assert {"table": "customers", "column": "name"} in first["columns"]
    assert got[1]["joins"][0]["right_column"] == "id" and got[1]["joins"][0]["left_column"] == "region_id"
    assert sorted(got[2]["tables"]) == [
        "orders",
        "sales.items",
    ]  # schema-qualified, resolved as the validator does
    assert report.statements == 4 and report.rows == 3 and not report.skipped


def test_bad_statements_are_counted_and_skipped_in_one_line(data: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.sql"
    log.write_text(
        "insert into orders values (1, 2, 3);\n"
        "create table x as select * from orders;\n"
        "select from where;\n"
        "select * from tmp_scratch;\n"
        "select id from orders;\n"
    )
    report = import_queries([str(log)], db="shop", data=data)
    assert report.rows == 1
    assert dict(report.skipped) == {"not_a_query": 2, "unparsable": 1, "no_known_table": 1}
    summary = report.summary()
    assert "\n" not in summary
    assert "skipped 4: 2 not a query (DML/DDL/command)" in summary and "--verbose" in summary
    assert [line.split(": ")[1] for line in report.skipped_list] == ["line 1", "line 2", "line 3", "line 4"]


def test_literals_become_placeholders_before_anything_is_stored(data: Path, tmp_path: Path) -> None:
    secret = "4111-1111-1111-1111"
    log = tmp_path / "log.jsonl"
    log.write_text(
        json.dumps(
            {"sql": f"select id from customers where name = '{secret}' and id in (17, 18) -- {secret}"}
        )
        + "\n"
    )
    import_queries([str(log)], db="shop", data=data)
    folder = history_dir(data, "shop")
    stored = b"".join(p.read_bytes() for p in folder.iterdir())
    assert secret.encode() not in stored and b"4111" not in stored
    assert rows(data)[0]["sql"] == "SELECT id FROM customers WHERE name = ? AND id IN (?)"
    assert manifest(data)["literals"] == "placeholders"

    import_queries([str(log)], db="shop", data=data, keep_literals=True)
    assert secret in rows(data)[0]["sql"]  # opted in: literals kept, the comment still dropped
    assert "--" not in rows(data)[0]["sql"] and manifest(data)["literals"] == "kept"


def test_jsonl_fields_questions_counts_users_and_times(data: Path, tmp_path: Path) -> None:
    lines = [
        {"sql": "select count(*) from orders", "question": "How many orders?", "count": 5, "user": "ann"},
        {"query_text": "select count(*) from orders", "calls": 2, "user": "bob", "start_time": "2024-05-02"},
        {"query": "select count(*) from orders", "user": "ann", "start_time": "2024-05-01"},
        {"sql": "select name from regions"},
        ["not", "an", "object"],
        {"question": "no sql here"},
    ]
    log = tmp_path / "log.jsonl.gz"
    log.write_bytes(gzip.compress(("\n".join(json.dumps(x) for x in lines) + "\nnot json\n").encode()))
    report = import_queries([str(log)], db="shop", data=data)
    got = {(r["sql"], r["question"]): r for r in rows(data)}
    assert got[("SELECT COUNT(*) FROM orders", "How many orders?")]["count"] == 5
    plain = got[("SELECT COUNT(*) FROM orders", None)]
    assert (plain["count"], plain["users"]) == (3, 2)
    assert (plain["first_seen"], plain["last_seen"]) == ("2024-05-01", "2024-05-02")
    assert report.skipped["bad_line"] == 3
    assert manifest(data)["statements"] == 5 + 3 + 1


def test_reimport_replaces_append_adds(data: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.sql", tmp_path / "b.sql"
    a.write_text("select id from orders; select name from regions;")
    b.write_text("select id from orders where amount > 3; select id from orders;")
    import_queries([str(a)], db="shop", data=data)
    import_queries([str(a)], db="shop", data=data)
    assert [r["count"] for r in rows(data)] == [1, 1]  # replaced, not doubled
    import_queries([str(b)], db="shop", data=data, append=True)
    got = {r["sql"]: r["count"] for r in rows(data)}
    assert got == {
        "SELECT id FROM orders": 2,
        "SELECT name FROM regions": 1,
        "SELECT id FROM orders WHERE amount > ?": 1,
    }
    m = manifest(data)
    assert [s["path"] for s in m["sources"]] == [str(a), str(b)]
    assert (m["format"], m["version"], m["rows"], m["statements"]) == (FORMAT, VERSION, 3, 4)
    import_queries([str(b)], db="shop", data=data)
    assert {r["sql"] for r in rows(data)} == {
        "SELECT id FROM orders WHERE amount > ?",
        "SELECT id FROM orders",
    }


def test_append_in_another_dialect_is_refused(data: Path, tmp_path: Path) -> None:
    log = tmp_path / "a.sql"
    log.write_text("select id from orders;")
    import_queries([str(log)], db="shop", data=data)
    with pytest.raises(ImportFormatError, match="imported as postgres SQL; pass --dialect postgres"):
        import_queries([str(log)], db="shop", data=data, dialect="mysql", append=True)


def test_tenant_history_is_stored_apart(data: Path, tmp_path: Path) -> None:
    log = tmp_path / "a.sql"
    log.write_text("select id from orders;")
    import_queries([str(log)], db="shop", data=data, tenant="acme")
    folder = data / "_tenants" / "acme" / "shop" / "history"
    assert (folder / "queries.parquet").is_file() and not (data / "shop" / "history").exists()
    assert manifest(data, tenant="acme")["tenant"] == "acme"
    owned = dict(SHOP, name="owned", tenant="globex")
    write_schema(data, owned)
    with pytest.raises(ImportFormatError, match="belongs to tenant 'globex'; pass --tenant globex"):
        import_queries([str(log)], db="owned", data=data, tenant="acme")


def test_dbt_run_folder_reads_the_model_queries(data: Path, tmp_path: Path) -> None:
    run = tmp_path / "target" / "run" / "shop" / "models"
    run.mkdir(parents=True)
    (run / "big_orders.sql").write_text(
        'create or replace view "db"."public"."big_orders" as (\n'
        '  select o.id, c.name from "db"."public"."orders" o join "db"."public"."customers" c\n'
        "  on c.id = o.customer_id where o.amount > 100\n);"
    )
    (run / "notes.md").write_text("not sql")
    import_queries([str(tmp_path / "target" / "run")], db="shop", data=data)
    (got,) = rows(data)
    assert sorted(got["tables"]) == ["customers", "orders"] and got["source"] == "dbt"
    assert got["joins"][0]["right_table"] == "orders"


def _ga_schema(last: str, count: int, *others: dict) -> dict:
    """A BigQuery GA4 export: the daily ``ga4.events_`` shards from 2024-01-01 to ``last``
    collapsed into one family, and ``others``."""
    events = {
        "name": "ga4.events_*",
        "columns": [{"name": "user_id"}, {"name": "event_name"}],
        "shards": {"stem": "ga4.events_", "pattern": "YYYYMMDD", "first": "20240101", "last": last,
                   "count": count},
    }  # fmt: skip
    return {"name": "ga", "dialect": "bigquery", "tables": [events, *others]}


def test_bigquery_wildcard_family_and_cte(tmp_path: Path) -> None:
    users = {"name": "ga4.users", "columns": [{"name": "user_id"}, {"name": "country"}]}
    data = write_schema(tmp_path / "schemas", _ga_schema("20240131", 31, users))
    log = tmp_path / "log.sql"
    log.write_text(
        "with e as (select user_id, event_name from `proj.ga4.events_20240105`)\n"
        "select u.country, count(*) from e join `proj.ga4.users` u on u.user_id = e.user_id group by 1;"
    )
    import_queries([str(log)], db="ga", data=data)
    (got,) = rows(data, "ga")
    assert sorted(got["tables"]) == ["ga4.events_*", "ga4.users"]
    assert got["joins"] == [
        {
            "left_table": "ga4.events_*",
            "left_column": "user_id",
            "right_table": "ga4.users",
            "right_column": "user_id",
        }
    ]


def test_bigquery_wildcard_over_part_of_a_family(tmp_path: Path) -> None:
    """``events_202401*`` (a month of a daily family) reads the family; a prefix no shard has
    (``events_2023*``) reads nothing the schema knows and is skipped."""
    data = write_schema(tmp_path / "schemas", _ga_schema("20240331", 91))
    log = tmp_path / "log.sql"
    log.write_text(
        "select event_name, count(*) from `proj.ga4.events_202401*` "
        "where _TABLE_SUFFIX between '01' and '15' group by 1;\n"
        "select user_id from `proj.ga4.events_2023*`;\n"
    )
    report = import_queries([str(log)], db="ga", data=data)
    (got,) = rows(data, "ga")
    assert got["tables"] == ["ga4.events_*"]
    assert {"table": "ga4.events_*", "column": "event_name"} in got["columns"]
    assert report.skipped["no_known_table"] == 1


def test_huge_statement_skipped_and_the_next_one_kept(data: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.sql"
    huge = "select id from orders where name in (" + ", ".join(f"'{i}'" for i in range(20_000)) + ")"
    log.write_text(f"select id from orders;\n{huge};\nselect name from regions;\n")
    report = import_queries([str(log)], db="shop", data=data, limits=ImportLimits(field_bytes=10_000))
    assert report.skipped["too_long"] == 1
    assert {r["sql"] for r in rows(data)} == {"SELECT id FROM orders", "SELECT name FROM regions"}


def test_bounded_reads(data: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.sql.gz"
    bomb.write_bytes(gzip.compress(b"select id from orders;\n" * 200_000))
    with pytest.raises(
        ImportLimitError, match=r"bomb.sql.gz: the decompressed size .* --max-decompressed-bytes"
    ):
        import_queries([str(bomb)], db="shop", data=data, limits=ImportLimits(decompressed_bytes=1 << 20))
    long_line = tmp_path / "long.jsonl"
    long_line.write_text(json.dumps({"sql": "select id from orders -- " + "x" * 5000}) + "\n")
    with pytest.raises(ImportLimitError, match=r"long.jsonl: line 1 .* --max-line-bytes"):
        import_queries([str(long_line)], db="shop", data=data, limits=ImportLimits(line_bytes=1000))
    assert not history_dir(data, "shop").joinpath("queries.parquet").exists()


def test_errors_are_one_line_naming_the_file_and_the_fix(data: Path, tmp_path: Path) -> None:
    cases = {
        str(tmp_path / "missing.sql"): "missing.sql: not found; give a .sql or .jsonl file",
        str(tmp_path / "x.json"): "x.json: a .json file; write one object a line as .jsonl",
        str(tmp_path / "wrong.csv"): "wrong.csv: no query column in the header; export the view",
    }
    (tmp_path / "x.json").write_text("[]")
    (tmp_path / "wrong.csv").write_text("a,b\n1,2\n")
    for source, message in cases.items():
        with pytest.raises(ImportFormatError) as err:
            import_queries([source], db="shop", data=data)
        assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(
        ImportFormatError, match=r"shopp.json: no schema for database 'shopp'; did you mean 'shop'"
    ):
        import_queries([str(tmp_path / "x.json")], db="shopp", data=data)
    with pytest.raises(ImportFormatError, match="--dialect 'postgress' is not a SQL dialect"):
        import_queries([str(tmp_path / "wrong.csv")], db="shop", data=data, dialect="postgress")


def test_wrong_dialect_is_one_line_and_keeps_the_previous_history(data: Path, tmp_path: Path) -> None:
    good = tmp_path / "good.sql"
    good.write_text("select id from orders;")
    import_queries([str(good)], db="shop", data=data)
    before = (history_dir(data, "shop") / "queries.parquet").read_bytes()
    log = tmp_path / "bq.jsonl"
    log.write_text(
        "".join(
            json.dumps({"sql": f"select o.id from `proj.shop.orders` o where o.amount > {i}"}) + "\n"
            for i in range(30)
        )
    )
    with pytest.raises(ImportFormatError) as err:
        import_queries([str(log)], db="shop", data=data)
    assert str(err.value).startswith(f"{log}: 30 of 30 statements do not parse as postgres SQL")
    assert str(err.value).endswith("pass --dialect bigquery")
    assert (history_dir(data, "shop") / "queries.parquet").read_bytes() == before
    import_queries([str(log)], db="shop", data=data, dialect="bigquery")
    assert rows(data)[0]["tables"] == ["orders"]


def test_nothing_kept_leaves_the_history_alone(data: Path, tmp_path: Path) -> None:
    good, bad = tmp_path / "good.sql", tmp_path / "bad.sql"
    good.write_text("select id from orders;")
    bad.write_text("delete from orders; select * from elsewhere;")
    import_queries([str(good)], db="shop", data=data)
    with pytest.raises(ImportFormatError, match=r"no statement kept .*left as it was"):
        import_queries([str(bad)], db="shop", data=data)
    assert len(rows(data)) == 1


def test_cli(data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from schemarag.cli import main

    log = tmp_path / "log.sql"
    log.write_text("select id from orders; drop table orders; select 1;")
    assert main(["import", "queries", "--db", "shop", "--data", str(data), "--verbose", str(log)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == str(history_dir(data, "shop"))
    lines = err.splitlines()
    assert lines[0].startswith("imported 1 statement(s) of shop (1 runs) as 1 distinct")
    assert "skipped 2: 1 not a query (DML/DDL/command), 1 touching no known table" in lines[0]
    assert any("line 1: not a query" in line and "DROP" in line for line in lines[1:])
    assert lines[-1] == f"next: schemarag build --data {data} --db shop"
    assert main(["import", "queries", "--db", "shop", "--data", str(data), str(tmp_path / "nope.sql")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.sql: not found" in err
    stored = pq.read_table(history_dir(data, "shop") / "queries.parquet")
    assert stored.num_rows == 1
