"""``schemarag eval --warehouse DIR --query-log-folds K --gold-sql DIR`` on a tiny export folder:
each fold's history is the other folds' gold SQL of the database, imported in the schema's
dialect and built the user's way into the fold's own folders, never the fold's own SQL; SQL that
does not resolve is counted, not fatal (issue 38 item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from warehouse_support import write_export

from schemarag.cli import main
from schemarag.runtime.core.errors import ConfigError
from schemarag.tools.evaluation.history_folds import assign_folds
from schemarag.tools.evaluation.history_folds_warehouse import load_gold_sql, logged_questions
from schemarag.tools.evaluation.warehouse import WarehouseQuestion, load_warehouse_questions

SHOP = {
    "customers": [("customer_id", "Customer key"), ("name", "Full name of the customer")],
    "orders": [("order_id", ""), ("customer_id", "Customer who ordered"), ("amount", "Order total")],
    "products": [("product_id", ""), ("title", "Product title"), ("price", "List price")],
    "order_items": [("order_id", ""), ("product_id", ""), ("quantity", "Units ordered")],
    "regions": [("region_id", ""), ("label", "Sales region name")],
}
ZOO = {
    "animals": [("animal_id", ""), ("species", "Species name")],
    "keepers": [("keeper_id", ""), ("animal_id", "Animal looked after"), ("name", "Keeper name")],
    "feedings": [("animal_id", ""), ("food", "Food given"), ("fed_at", "Time of feeding")],
}
# instance_id, db, engine, question, gold tables, gold SQL (None: the question has none)
QUESTIONS = [
    ("s1", "shop", "bigquery", "Total order amount per customer name", ["orders", "customers"],
     "SELECT c.name, SUM(o.amount) FROM `proj.web.orders` o JOIN `proj.web.customers` c "
     "ON o.customer_id = c.customer_id GROUP BY c.name"),
    ("s2", "shop", "bigquery", "Units of each product title sold", ["order_items", "products"],
     "SELECT p.title, SUM(i.quantity) FROM `proj.web.order_items` i JOIN `proj.web.products` p "
     "ON i.product_id = p.product_id GROUP BY p.title"),
    ("s3", "shop", "bigquery", "Which customers bought products above 100 dollars?",
     ["customers", "orders", "order_items", "products"],
     "SELECT DISTINCT c.name FROM `proj.web.customers` c JOIN `proj.web.orders` o "
     "ON o.customer_id = c.customer_id JOIN `proj.web.order_items` i ON i.order_id = o.order_id "
     "JOIN `proj.web.products` p ON p.product_id = i.product_id WHERE p.price > 100"),
    ("s4", "shop", "bigquery", "How many sales regions are there?", ["regions"],
     "SELECT COUNT(*) FROM `other-project.elsewhere.regions_*`"),  # resolves to nothing: skipped
    ("s5", "shop", "bigquery", "List product titles", ["products"], None),
    ("z1", "zoo", "sqlite", "Which species does each keeper look after?", ["animals", "keepers"],
     "SELECT k.name, a.species FROM keepers k JOIN animals a ON a.animal_id = k.animal_id"),
    ("z2", "zoo", "sqlite", "What food did each species get?", ["animals", "feedings"],
     "SELECT a.species, f.food FROM feedings f JOIN animals a ON a.animal_id = f.animal_id"),
    ("z3", "zoo", "sqlite", "When was each animal fed?", ["feedings"],
     "SELECT animal_id, fed_at FROM feedings"),
]  # fmt: skip


_export = write_export


def _warehouse(tmp_path: Path) -> tuple[Path, Path]:
    """A two-database export folder (BigQuery and SQLite) and its gold SQL folder."""
    root, gold = tmp_path / "wh", tmp_path / "gold"
    _export(root, "bigquery", "shop", SHOP, "web")
    _export(root, "sqlite", "zoo", ZOO, "main")
    gold.mkdir()
    rows = []
    for iid, db, engine, question, tables, sql in QUESTIONS:
        schema = "web" if engine == "bigquery" else "main"
        rows.append({"instance_id": iid, "db": db, "engine": engine, "question": question,
                     "gold_tables": [f"proj.{schema}.{t}" for t in tables]})  # fmt: skip
        if sql is not None:
            (gold / f"{iid}.sql").write_text(sql + "\n", encoding="utf-8")
    (gold / "unrelated.sql").write_text("SELECT 1\n", encoding="utf-8")  # no question: ignored
    (root / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return root, gold


def test_gold_sql_is_read_per_instance_and_a_folder_matching_nothing_is_an_error(tmp_path: Path) -> None:
    root, gold = _warehouse(tmp_path)
    questions = load_warehouse_questions(root / "questions.jsonl")
    sql = load_gold_sql(gold, questions)
    assert set(sql) == {"s1", "s2", "s3", "s4", "z1", "z2", "z3"}
    logged = logged_questions(questions, sql)
    assert [q.db_id for q in logged] == [q.db for q in questions]
    assert logged[4].sql is None and logged[0].sql.startswith("SELECT c.name")
    with pytest.raises(ConfigError, match="not a folder"):
        load_gold_sql(tmp_path / "missing", questions)
    with pytest.raises(ConfigError, match=r"no <instance_id>\.sql"):
        load_gold_sql(gold, [WarehouseQuestion("x9", "shop", "bigquery", "q", ())])


def test_folds_arguments_are_checked_before_anything_is_built(tmp_path: Path, capsys) -> None:
    root, gold = _warehouse(tmp_path)
    base = ["eval", "--warehouse", str(root), "--work", str(tmp_path / "work")]
    assert main([*base, "--query-log-folds", "2"]) == 2
    assert "needs --gold-sql" in capsys.readouterr().err
    assert main([*base, "--gold-sql", str(gold)]) == 2
    assert "add --query-log-folds" in capsys.readouterr().err
    assert main([*base, "--gold-sql", str(gold), "--query-log-folds", "2", "--cross-validate", "names"]) == 2
    assert not (tmp_path / "work").exists(), "nothing imported before the arguments are checked"


def test_warehouse_folds_import_the_other_folds_sql_and_score_by_question(tmp_path: Path, capsys) -> None:
    root, gold = _warehouse(tmp_path)
    work, folds_work = tmp_path / "work", tmp_path / "folds"
    argv = ["eval", "--warehouse", str(root), "--work", str(work), "--budgets", "1,3",
            "--query-log-folds", "2", "--gold-sql", str(gold), "--folds-work", str(folds_work),
            "--predictions", str(tmp_path / "pred.jsonl"), "-q", "--json"]  # fmt: skip
    assert main(argv) == 0
    payload = json.loads(capsys.readouterr().out)

    questions = load_warehouse_questions(root / "questions.jsonl")
    logged = logged_questions(questions, load_gold_sql(gold, questions))
    folds = assign_folds(logged, 2)
    for fold in range(2):
        base = folds_work / "k2_f1" / f"fold{fold}"
        for db, engine in (("shop", "bigquery"), ("zoo", "sqlite")):
            log = base / "logs" / f"{db}.jsonl"
            logged_sql = {json.loads(line)["sql"] for line in log.read_text().splitlines()}
            own = {q.sql for q, f in zip(logged, folds, strict=True) if f == fold and q.db_id == db and q.sql}
            others = {
                q.sql for q, f in zip(logged, folds, strict=True) if f != fold and q.db_id == db and q.sql
            }
            assert logged_sql == others and not own & logged_sql, "a question's own SQL never in its history"
            if any(q.db_id == db for q, f in zip(logged, folds, strict=True) if f == fold):
                manifest = json.loads((base / "data" / engine / db / "history" / "manifest.json").read_text())
                assert manifest["dialect"] == engine, "imported in the schema's own dialect"
        cache = base / "artifacts" / "_cache" / "embeddings"
        assert cache.is_symlink() and cache.resolve() == (folds_work / "_embeddings").resolve()
    assert not list((work / "data").glob("*/*/history")), "the base import folder is never given a history"

    shop = payload["imports_per_db"]["shop"]
    assert shop["logged"] == 4 and payload["imports_per_db"]["zoo"]["logged"] == 3  # 2 folds: once each
    assert shop["skipped"].get("no_known_table", 0) >= 1, "the other project's table is counted, not kept"
    assert shop["kept"] + sum(shop["skipped"].values()) == shop["logged"]  # one statement a file here
    assert payload["statements"]["kept"] == sum(v["kept"] for v in payload["imports_per_db"].values())
    assert payload["questions"] == len(QUESTIONS) and payload["questions_with_gold_sql"] == 7
    assert 0 < payload["questions_with_history"] <= len(QUESTIONS)
    n = payload["questions_with_history"]
    for key in ("without_history", "with_history_shipped"):
        assert payload[key]["scopes"]["all"]["questions"] == {"1": n, "3": n}
    cv = payload["cross_validation"]
    assert set(cv["chosen_per_held_out_db"]) <= {"shop", "zoo"}
    assert cv["cross_validated"]["scopes"]["all"]["questions"]["3"] == n
    assert sum(row["databases"] for row in cv["chosen_counts"]) == len(cv["chosen_per_held_out_db"])

    # --predictions: each question's kept tables without, shipped and held out, as the tables above
    rows = [json.loads(line) for line in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert len(rows) == n
    for setting, key in (("without", "without_history"), ("held_out", None)):
        agg = payload[key] if key else cv["cross_validated"]
        for b in ("1", "3"):
            complete = sum(set(r["gold"]) <= set(r[f"kept_{setting}"][b]) for r in rows) / n
            assert complete == pytest.approx(agg["scopes"]["all"]["complete_recall"][b]), (setting, b)
    assert all(set(r) >= {"question_id", "db", "question", "kept_shipped"} for r in rows)
