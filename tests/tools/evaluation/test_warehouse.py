"""The warehouse evaluation: gold names to indexed tables, nontrivial scopes, and the whole
command on a tiny export folder (real import, real Dagster build, real retriever)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from warehouse_support import write_export

from schemarag.tools.evaluation.warehouse import GoldMap, Record, aggregate
from schemarag.tools.evaluation.warehouse_prep import discover


def test_gold_names_map_by_dotted_suffix_and_shards_to_their_family() -> None:
    gm = GoldMap(["ds.orders", "ds.events_*", "other.orders", "customers"])
    assert gm.unit("proj.ds.orders") == "ds.orders"
    assert gm.unit("PROJ.DS.EVENTS_20210105") == "ds.events_*"
    assert gm.unit("customers") == "customers"
    assert gm.unit("db.sch.customers") == "customers"
    assert gm.unit("proj.ds.missing") is None
    assert gm.unit("proj.nope.orders") is None  # the schema part must agree too


def test_nontrivial_counts_only_databases_larger_than_the_budget() -> None:
    small = Record("1", "a", "sqlite", 4, ["t"], {2: ["u", "v"], 5: ["t", "u"]})
    big = Record("2", "b", "bigquery", 40, ["x", "y"], {2: ["x", "z"], 5: ["x", "y", "q"]})
    agg = aggregate([small, big], [2, 5])
    rows = agg["scopes"]
    assert rows["all"]["complete_recall"] == {"2": 0.0, "5": 1.0}
    assert rows["all"]["table_recall"]["2"] == pytest.approx((0 + 0.5) / 2)
    assert rows["nontrivial"]["questions"] == {"2": 2, "5": 1}  # at 5, the 4-table database is trivial
    assert rows["nontrivial"]["complete_recall"]["5"] == 1.0
    assert rows["bigquery"]["questions"]["5"] == 1


def test_unresolved_gold_is_never_a_hit() -> None:
    rec = Record("1", "a", "sqlite", 30, ["t", "?proj.ds.gone"], {5: ["t"]})
    agg = aggregate([rec], [5])
    assert agg["scopes"]["all"]["complete_recall"]["5"] == 0.0
    assert agg["gold_unresolved"] == 1


_export = write_export


def test_discover_filters_engines_and_databases(tmp_path: Path) -> None:
    _export(tmp_path, "sqlite", "a", {"t": [("x", "")]}, "main")
    _export(tmp_path, "bigquery", "b", {"t": [("x", "")]}, "ds")
    assert [e.db for e in discover(tmp_path)] == ["b", "a"]
    assert [e.db for e in discover(tmp_path, engines=["SQLITE"])] == ["a"]
    with pytest.raises(Exception, match="no <engine>/<db>"):
        discover(tmp_path, dbs=["zzz"])


def test_eval_warehouse_imports_builds_and_scores_a_folder(tmp_path: Path) -> None:
    """The user's way, end to end: ``schemarag eval --warehouse`` on two small exports, one with
    a date-sharded family whose gold lists every shard."""
    root = tmp_path / "wh"
    shop = {
        "customers": [("customer_id", "Customer key"), ("name", "Full name of the customer")],
        "orders": [("order_id", ""), ("customer_id", ""), ("amount", "Order total in dollars")],
        "products": [("product_id", ""), ("title", "Product title")],
    }
    shop |= {
        f"visits_2021010{d}": [("visitor", "Web visitor id"), ("page", "Page path")] for d in range(1, 5)
    }
    _export(root, "bigquery", "shop", shop, "web")
    _export(root, "sqlite", "zoo", {"animals": [("animal_id", ""), ("species", "Species name")],
                                     "keepers": [("keeper_id", ""), ("animal_id", "")]}, "main")  # fmt: skip
    questions = [
        {"instance_id": "q1", "db": "shop", "engine": "bigquery",
         "question": "Total order amount per customer name",
         "gold_tables": ["proj.web.orders", "proj.web.customers"]},
        {"instance_id": "q2", "db": "shop", "engine": "bigquery",
         "question": "Which pages did web visitors see?",
         "gold_tables": [f"proj.web.visits_2021010{d}" for d in range(1, 5)]},
        {"instance_id": "q3", "db": "zoo", "engine": "sqlite",
         "question": "Which species does each keeper look after?",
         "gold_tables": ["animals", "keepers"]},
    ]  # fmt: skip
    (root / "questions.jsonl").write_text(
        "\n".join(json.dumps(q) for q in questions) + "\n", encoding="utf-8"
    )
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-m", "schemarag", "eval", "--warehouse", str(root),
           "--work", str(tmp_path / "work"),
           "--budgets", "1,3", "--cross-validate", "names", "--out", str(out),
           "--chart", str(tmp_path / "c.png")]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    payload = json.loads(out.read_text())
    engines = {r["engine"]: r for r in payload["import_build"]}
    assert (
        engines["bigquery"]["raw_tables"] == 7 and engines["bigquery"]["tables"] == 4
    )  # 4 shards -> 1 family
    assert engines["sqlite"]["databases"] == 1 and engines["bigquery"]["build_ok"]
    rows = payload["metrics"]["scopes"]
    assert rows["all"]["questions"]["3"] == 3
    assert rows["all"]["complete_recall"]["3"] == 1.0  # every gold (the family counting once) fits in 3
    assert rows["nontrivial"]["questions"]["3"] == 2  # only shop (4 tables after collapse) exceeds 3
    assert payload["metrics"]["gold_unresolved"] == 0
    cv = payload["cross_validation"]
    assert set(cv["chosen_per_held_out_db"]) == {"shop", "zoo"}
    # every candidate's in-sample figures, in grid order, the shipped setting first
    per = cv["in_sample_per_candidate"]
    assert [c["candidate"] for c in per] == cv["candidates"]
    assert per[0]["complete_recall"]["all"] == rows["all"]["complete_recall"]
    assert (tmp_path / "c.png").stat().st_size > 0
    assert "raw tables" in done.stderr and "CR@3" in done.stdout
    # a rerun imports nothing again and builds nothing new (cached under --work); --predictions
    # writes each question's kept tables, the figures above
    preds = tmp_path / "preds" / "p.jsonl"
    again = subprocess.run([*cmd, "--predictions", str(preds)], capture_output=True, text=True, check=False)
    assert again.returncode == 0 and "unchanged" in again.stderr
    lines = [json.loads(line) for line in preds.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["question_id"] for r in lines) == ["q1", "q2", "q3"]
    gold = [{g.lower() for g in r["gold"]} for r in lines]
    kept = [{k.lower() for k in r["kept"]["3"]} for r in lines]
    complete = sum(bool(g) and g <= k for g, k in zip(gold, kept, strict=True))
    assert complete / len(lines) == rows["all"]["complete_recall"]["3"]

    # as served (--focus): the tables Retriever.search gives, and the served text's context ratio
    served = tmp_path / "served.json"
    cmd = [sys.executable, "-m", "schemarag", "eval", "--warehouse", str(root),
           "--work", str(tmp_path / "work"), "--skip-build", "--budgets", "1,3",
           "--focus", "compact", "--out", str(served)]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    served_payload = json.loads(served.read_text())
    assert served_payload["served"] is True and served_payload["focus"] == "compact"
    assert served_payload["metrics"]["scopes"]["all"]["complete_recall"]["3"] == 1.0
    assert 0 < served_payload["context_ratio"] <= 1.0, "compact: never more than the full schema"
    assert "context ratio" in done.stdout


def test_a_failed_import_is_tried_again_even_when_imports_are_reused(tmp_path: Path) -> None:
    """A failure recorded by an earlier run (here: its stamp, as a crash at exit leaves it) is
    not a result to keep: ``--reuse-imports`` imports the database again; a success is kept."""
    import dataclasses

    from schemarag.tools.evaluation.warehouse_prep import _files_stamp, import_one

    _export(tmp_path / "wh", "sqlite", "zoo", {"animals": [("animal_id", ""), ("species", "")]}, "main")
    export = discover(tmp_path / "wh")[0]
    data = tmp_path / "data"
    stamp_file = data / ".stamps" / "sqlite__zoo.json"
    stamp_file.parent.mkdir(parents=True)
    failed = {"engine": "sqlite", "db": "zoo", "ok": False, "error": "terminate called"}
    stamp_file.write_text(
        json.dumps({"importer": "old", "files": _files_stamp(export), "stat": failed}), encoding="utf-8"
    )
    stat = import_one(export, data, "new", reuse=True)
    assert stat.ok and stat.tables == 1 and (data / "sqlite").is_dir()
    kept = json.loads(stamp_file.read_text(encoding="utf-8"))
    assert kept["stat"]["ok"] is True and kept["importer"] == "new"
    # a success is kept as it is, even by a changed importer, when imports are reused
    again = import_one(export, data, "newer", reuse=True)
    assert dataclasses.asdict(again) == kept["stat"]
