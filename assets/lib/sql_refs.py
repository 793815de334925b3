"""Table references in a SQL snippet, via sqlglot (never a regex over SQL).

>>> sorted(tables_in_sql("WITH x AS (SELECT * FROM orders) SELECT * FROM x JOIN users u ON 1=1"))
['orders', 'users']
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def tables_in_sql(sql: str, dialect: str = "postgres") -> set[str]:
    """Names of real tables (CTE names excluded) in ``sql``; empty if it does not parse."""
    import sqlglot
    from sqlglot import exp

    try:
        trees = sqlglot.parse(sql, read=dialect)
    except Exception:  # sqlglot raises several error types; a doc snippet may be pseudo-SQL
        log.debug("unparseable SQL in docs: %.60s", sql)
        return set()
    out: set[str] = set()
    for tree in trees:
        if tree is None:
            continue
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        for t in tree.find_all(exp.Table):
            if t.name and t.name.lower() not in ctes:
                out.add(t.name)
    return out
