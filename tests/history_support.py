"""A real index with an imported query history, for the tests of examples in the prompt (issue 38).

The sample ``ecommerce`` database (users, products, orders; docs included) is imported with a
small query log through the real ``import queries`` code and built by the real Dagster graph,
once without the history (``plain``) and once with it, so a test can compare the two.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DATA = REPO / "data" / "schemas"
DB = "ecommerce"

SPEND = "How much did each customer spend on shipped orders?"
COUNT_FR = "SELECT count(*) FROM orders JOIN users ON users.id = orders.user_id WHERE users.country = 'FR'"
LOG = [
    {
        "sql": "SELECT u.full_name, SUM(o.total_amount) FROM orders o JOIN users u ON o.user_id = u.id "
        "WHERE o.status = 'shipped' GROUP BY u.full_name",
        "question": SPEND,
        "count": 5,
    },
    {"sql": "SELECT p.name, p.price FROM products p WHERE p.category = 'books'", "count": 2},
    {"sql": COUNT_FR},
    {"sql": "SELECT o.id, o.total_amount FROM orders o WHERE o.payment_method = 'card'", "count": 9},
    {"sql": "SELECT u.email FROM users u WHERE u.marketing_opt_in", "count": 3},
    {"sql": COUNT_FR, "question": "How many orders come from France?"},  # the same statement again
]


@dataclass(frozen=True)
class HistoryIndexes:
    data: Path  # the import folder, with the history stored
    plain: Path  # artifacts built before the import: no history
    artifacts: Path  # artifacts built after it


def build_history_indexes(base: Path) -> HistoryIndexes:
    """``ecommerce`` built without and with the history of :data:`LOG` under ``base``."""
    from schemarag.pipelines.build import build_databases
    from schemarag.tools.importers.query_log import import_queries

    data = base / "schemas"
    data.mkdir(parents=True)
    shutil.copy(SAMPLE_DATA / f"{DB}.json", data / f"{DB}.json")
    shutil.copytree(SAMPLE_DATA / DB, data / DB)
    plain, artifacts = base / "plain", base / "artifacts"
    for target in (plain, artifacts):
        if target == artifacts:
            log = base / "log.jsonl"
            log.write_text("".join(json.dumps(line) + "\n" for line in LOG), encoding="utf-8")
            import_queries([str(log)], db=DB, data=data)
        reports = build_databases([DB], data, target)
        assert all(r.ok for r in reports), reports
    return HistoryIndexes(data, plain, artifacts)
