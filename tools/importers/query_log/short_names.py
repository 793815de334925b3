"""A logged statement's shorter table names (``KNA1``) qualified as the schema names them.

An imported catalog names a table as the warehouse qualifies it (``SAPABAP1.KNA1``, BigQuery's
``project.dataset.table``), but most logged SQL does not: an analyst who ran ``USE SCHEMA
SAPABAP1`` (Snowflake), set a ``search_path`` (PostgreSQL, Redshift) or a default dataset
(BigQuery) writes ``FROM KNA1``, and the warehouse resolved it against that default. Without this
step such a statement reads "no known table" and a whole log of it is lost.

The generated-SQL validator does not do this on purpose (its DDL shows the full name, and a
query must run without the session's default), so it lives on the import side only, before the
statement is stored: the stored SQL (and so a past query shown as an example) names its tables
as the DDL does.

* a name the schema knows as written, or as ``schemarag validate`` folds a longer one
  (``PROD.SAPABAP1.KNA1``), is left alone (a CTE of that name too);
* a shorter name that ends exactly one of the schema's names (``.kna1`` of ``sapabap1.kna1``,
  any case) becomes that table;
* a shorter name that ends several (``VBAK`` in two schemas) becomes the one the warehouse
  says the statement read when the log says it (BigQuery JOBS' ``referenced_tables``,
  Snowflake ACCESS_HISTORY's ``direct_objects_accessed``), else the one in the session's schema
  when the log says it (Snowflake's and MySQL's ``SCHEMA_NAME``, a ``.jsonl`` line's
  ``schema``), else the one in the schema of the statement's other tables, or in the one schema
  that holds every shorter name of the statement, when exactly one is; otherwise it stays
  unknown, as a guess would put a wrong table in the history;
* a shorter name no table ends (a date shard, ``events_20240105``, of a family the catalog
  collapsed) that exactly one of the tables the statement read ends becomes that full name, which
  the qualified fold then reads as the family.

Example:
    >>> import sqlglot
    >>> from schemarag.runtime.core.schema import Database
    >>> db = Database.model_validate({"name": "erp", "tables": [
    ...     {"name": "SAPABAP1.KNA1", "columns": [{"name": "KUNNR"}]},
    ...     {"name": "SAPABAP1.VBAK", "columns": [{"name": "KUNNR"}]}]})
    >>> tree = sqlglot.parse_one("select * from kna1 k join VBAK on k.kunnr = vbak.kunnr")
    >>> fold_short_names(tree, db).sql()
    'SELECT * FROM SAPABAP1.KNA1 AS k JOIN SAPABAP1.VBAK AS VBAK ON k.kunnr = vbak.kunnr'
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from schemarag.app.querygen.qualified_names import qualified_table, written_name
from schemarag.runtime.core.schema import Database

# how a shorter name was qualified, by the rule of the module docstring that named its table
# (``fold_short_names(..., rules=Counter())`` counts ``(written, table, rule)``; the import's
# summary says them per rule, ``--verbose`` per name)
RULES: dict[str, str] = {
    "one_table": "the one table it ends",
    "read": "the tables the log says the statement read",
    "session": "the session's schema",
    "statement": "the schema of the statement's other tables",
}

_SUFFIXES: dict[int, tuple[Database, dict[str, list[str]]]] = {}  # id(db) -> (db, suffix -> names)


def short_name_index(db: Database) -> dict[str, list[str]]:
    """Every proper dotted suffix of the schema's qualified names (lower case) -> those names.

    Built once per schema object (an import resolves thousands of statements against one); the
    cost is linear in the tables."""
    hit = _SUFFIXES.get(id(db))
    if hit is not None and hit[0] is db:
        return hit[1]
    index: dict[str, list[str]] = {}
    for table in db.tables:
        parts = table.name.lower().split(".")
        for start in range(1, len(parts)):
            index.setdefault(".".join(parts[start:]), []).append(table.name)
    if len(_SUFFIXES) >= 8:
        _SUFFIXES.clear()
    _SUFFIXES[id(db)] = (db, index)
    return index


def fold_short_names(
    tree: Any,
    db: Database,
    default_schema: str | None = None,
    referenced: tuple[str, ...] = (),
    rules: Counter | None = None,
) -> Any:
    """A copy of ``tree`` with each table name written shorter than the schema's full name
    qualified as that name (the rules of the module docstring; ``default_schema``: the session's
    schema, ``SAPABAP1`` or ``PROD.SAPABAP1``, any case; ``referenced``: the full names, lower
    case, of the tables the warehouse says the statement read); ``tree`` itself when nothing
    changes. ``rules``: counts each name qualified as ``(name as written, table, key of
    :data:`RULES` that named it)``, so a user can see what a log's short names were taken to
    mean."""
    from sqlglot import exp

    index = short_name_index(db)
    if not index:
        return tree
    ctes = _cte_names(tree)
    refs = [t for t in tree.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]
    written = {id(t): written_name(t) for t in refs}
    known = {id(t): db.table(written[id(t)]) or qualified_table(t, db) for t in refs}  # as validated
    unknown = [t for t in refs if known[id(t)] is None and not _names_a_cte(t, ctes)]
    short = [t for t in unknown if written[id(t)] in index]
    # a name the suffixes do not know (a date shard of a collapsed family) that exactly one of
    # the tables the log says the statement read ends: that name, for the qualified fold
    hinted = {
        id(t): (r, "read")
        for t in unknown
        if written[id(t)] not in index and (r := _ended_by(written[id(t)], referenced))
    }
    if not short and not hinted:
        return tree
    anchors = {_schema_of(k.name) for k in known.values() if k is not None}
    ends = [index[written[id(t)]] for t in short]
    read = [_read_by(names, referenced) for names in ends]
    picks = (_picks(short, ends, read, anchors, default_schema) if short else {}) | hinted
    if not picks:
        return tree
    if rules is not None:
        rules.update((written[id(t)], *picks[id(t)]) for t in refs if id(t) in picks)
    tree = tree.copy()  # a copy keeps the find_all order, so the references map by position
    copies = [t for t in tree.find_all(exp.Table) if isinstance(t.this, exp.Identifier)]
    for old, new in zip(refs, copies, strict=True):
        pick = picks.get(id(old))
        if pick is None:
            continue
        name = pick[0]
        *qualifiers, last = name.split(".")
        if not new.alias:
            new.set("alias", exp.TableAlias(this=exp.to_identifier(new.name)))
        new.set("this", exp.to_identifier(last))
        new.set("db", exp.to_identifier(qualifiers[-1]) if qualifiers else None)
        new.set("catalog", exp.to_identifier(".".join(qualifiers[:-1])) if len(qualifiers) > 1 else None)
    return tree


_NOT_A_SCHEMA = {"DATABASE", "CATALOG", "WAREHOUSE", "ROLE", "SECONDARY", "ROLES"}  # USE <kind> x


def schema_set_by(tree: Any, dialect: str) -> str | None:
    """The schema a session statement makes the default for the statements after it in the same
    script (a ``.sql`` file, a log line of several statements), as the warehouse would resolve
    their short names; None for any other statement.

    ``USE SCHEMA s`` / ``USE SCHEMA db.s`` (Snowflake, Databricks), ``USE s`` (MySQL's database is
    its schema; DuckDB, Databricks, T-SQL), ``SET search_path TO s, ...`` / ``SET SCHEMA 's'``
    (PostgreSQL, Redshift: the first entry that is not ``"$user"``), BigQuery's ``SET
    @@dataset_id = 'ds'``. ``USE DATABASE``, ``WAREHOUSE`` and ``ROLE`` name no schema. A name
    that is no schema of the catalog is harmless: it only narrows names that some schema holds.

    >>> import sqlglot
    >>> schema_set_by(sqlglot.parse_one("USE SCHEMA prod.sapabap1", read="snowflake"), "snowflake")
    'prod.sapabap1'
    >>> schema_set_by(sqlglot.parse_one("use warehouse wh", read="snowflake"), "snowflake") is None
    True
    >>> path = sqlglot.parse_one('SET search_path TO "$user", sales, public', read="postgres")
    >>> schema_set_by(path, "postgres")
    'sales'
    >>> schema_set_by(sqlglot.parse_one("SET @@dataset_id = 'ga4'", read="bigquery"), "bigquery")
    'ga4'
    >>> schema_set_by(sqlglot.parse_one("SET @schema = 'x'", read="mysql"), "mysql") is None  # a variable
    True
    >>> schema_set_by(sqlglot.parse_one("select 1"), "postgres") is None
    True
    """
    from sqlglot import exp

    if isinstance(tree, exp.Use):
        if tree.text("kind").upper() in _NOT_A_SCHEMA or not isinstance(tree.this, exp.Table):
            return None
        target = tree.this
        return ".".join(p for p in (target.text("catalog"), target.text("db"), target.name) if p) or None
    if isinstance(tree, exp.Set):
        for item in tree.expressions:
            eq = item.this if isinstance(item, exp.SetItem) else None
            if not isinstance(eq, exp.EQ):
                continue
            left = eq.this
            if isinstance(left, exp.Column):  # search_path, schema
                name = left.name.lower()
            elif isinstance(left, exp.Parameter) and isinstance(left.this, exp.Parameter):
                name = "@@" + left.this.name.lower()  # a system variable; @x is a user's own
            else:
                continue
            if name in ("search_path", "schema", "@@dataset_id"):
                value = eq.expression.name if isinstance(eq.expression, exp.Expression) else ""
                return value if value and value != "$user" else None
        return None
    if isinstance(tree, exp.Command) and tree.name.upper() == "SET":
        return _search_path(str(tree.expression or ""), dialect)
    return None


def _search_path(text: str, dialect: str) -> str | None:
    """The first schema of a ``SET search_path TO a, b`` / ``SET SCHEMA 'a'`` that sqlglot keeps
    as a command: the text after the setting's name, split by the dialect's tokenizer."""
    import sqlglot
    from sqlglot.tokens import TokenType

    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenizer_class().tokenize(text[:10_000])
    except Exception:
        return None
    if not tokens or tokens[0].text.lower() not in ("search_path", "schema"):
        return None
    for tok in tokens[1:]:
        if tok.token_type in (TokenType.EQ, TokenType.COMMA) or tok.text.upper() == "TO":
            continue
        if tok.text != "$user":
            return tok.text or None
    return None


AMBIGUOUS = "names only tables several schemas hold"  # how a skip's detail starts


def ambiguous_names(tree: Any, db: Database) -> str:
    """Why a statement that reads no known table was not resolved, when the reason is that its
    names were written short and several schemas hold each (``VBAK (ARCHIVE.VBAK,
    SAPABAP1.VBAK)``): the import says so and what to pass. Empty otherwise (temp tables, other
    databases' tables).

    >>> import sqlglot
    >>> db = Database.model_validate({"name": "erp", "tables": [
    ...     {"name": "SAPABAP1.VBAK", "columns": [{"name": "VBELN"}]},
    ...     {"name": "ARCHIVE.VBAK", "columns": [{"name": "VBELN"}]}]})
    >>> ambiguous_names(sqlglot.parse_one("select * from vbak join tmp_x using (vbeln)"), db)
    'names only tables several schemas hold: vbak (SAPABAP1.VBAK, ARCHIVE.VBAK)'
    >>> ambiguous_names(sqlglot.parse_one("select * from tmp_x"), db)
    ''
    >>> ambiguous_names(sqlglot.parse_one("with vbak as (select 1 as vbeln) select * from vbak"), db)
    ''
    """
    from sqlglot import exp

    index = short_name_index(db)
    ctes = _cte_names(tree)
    found: dict[str, list[str]] = {}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier) and not _names_a_cte(table, ctes):
            written = written_name(table)
            if len(names := index.get(written, [])) > 1:
                found.setdefault(written, names)
    if not found:
        return ""
    shown = "; ".join(
        f"{w} ({', '.join(n[:3])}{', ...' if len(n) > 3 else ''})" for w, n in list(found.items())[:3]
    )
    return f"{AMBIGUOUS}: {shown}"


def _cte_names(tree: Any) -> set[str]:
    """The names (lower case) the statement's ``WITH`` clauses define."""
    from sqlglot import exp

    return {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}


def _names_a_cte(table: Any, ctes: set[str]) -> bool:
    """A bare reference that reads one of the statement's CTEs, not a table of the schema."""
    return not table.db and table.name.lower() in ctes


def _ended_by(written: str, referenced: tuple[str, ...]) -> str | None:
    """The one name of ``referenced`` that ends with the shorter ``written`` one, else None. A
    BigQuery wildcard written short (``events_202401*``) takes the dataset of the shards it read
    (the job lists each one), when they are all in one.

    >>> _ended_by("outpatient_charges_2014", ("p.cms.outpatient_charges_2014", "p.cms.inpatient_2014"))
    'p.cms.outpatient_charges_2014'
    >>> _ended_by("t", ("a.x.t", "a.y.t")) is None
    True
    >>> _ended_by("gsod20*", ("p.noaa_gsod.gsod2010", "p.noaa_gsod.gsod2011", "p.noaa_gsod.stations"))
    'p.noaa_gsod.gsod20*'
    """
    if not referenced:
        return None
    qualifier, _, last = written.rpartition(".")
    if last.endswith("*"):
        stem = last[:-1]
        datasets = {
            q for q, _, name in (r.rpartition(".") for r in referenced)
            if name.startswith(stem) and q and (not qualifier or _same_schema(q, qualifier))
        }  # fmt: skip
        return f"{datasets.pop()}.{last}" if len(datasets) == 1 else None
    hits = [r for r in referenced if r.endswith("." + written)]
    return hits[0] if len(hits) == 1 else None


def _read_by(names: list[str], referenced: tuple[str, ...]) -> list[str]:
    """Of the tables a shorter name may be, the ones the statement read, by the log's
    ``referenced`` (a name written with or without its project, any case); all of them when the
    log says nothing or names none of them.

    >>> _read_by(["P.SALES.ORDERS", "P.STAGING.ORDERS"], ("p.staging.orders",))
    ['P.STAGING.ORDERS']
    >>> _read_by(["SALES.ORDERS", "STAGING.ORDERS"], ("p.sales.orders", "p.crm.customers"))
    ['SALES.ORDERS']
    """
    if len(names) < 2 or not referenced:
        return names
    read = [n for n in names if any(_same_schema(n.lower(), r) for r in referenced)]
    return read or names


def _picks(
    short: list[Any],
    ends: list[list[str]],
    read: list[list[str]],
    anchors: set[str],
    default: str | None,
) -> dict[int, tuple[str, str]]:
    """Each shorter reference's table and the key of :data:`RULES` that named it, where the
    rules of the module docstring name one. Per reference, ``ends``: the schema's names it ends;
    ``read``: those the log says the statement read (:func:`_read_by`). ``anchors``: the schemas
    of the tables the statement names in full.

    >>> from types import SimpleNamespace as T
    >>> a, b = T(), T()
    >>> picks = _picks([a, b], [["s.x"], ["s.y", "t.y"]], [["s.x"], ["s.y", "t.y"]], set(), None)
    >>> picks[id(a)], picks[id(b)]  # b: the one schema holding every shorter name
    (('s.x', 'one_table'), ('s.y', 'statement'))
    """
    if not anchors:  # the one schema holding every shorter name, if there is one
        common = set.intersection(*({_schema_of(n) for n in names} for names in read))
        anchors = common if len(common) == 1 else set()
    session = default.strip().lower() if default and default.strip() else None
    picks: dict[int, tuple[str, str]] = {}
    for t, every, names in zip(short, ends, read, strict=True):
        rule = "one_table" if len(every) == 1 else "read"
        if len(names) > 1 and session is not None:
            names = [n for n in names if _same_schema(_schema_of(n), session)] or names
            rule = "session"
        if len(names) > 1:
            names = [n for n in names if _schema_of(n) in anchors]
            rule = "statement"
        if len(names) == 1:
            picks[id(t)] = (names[0], rule)
    return picks


def _same_schema(qualifier: str, session: str) -> bool:
    """``sapabap1`` and ``prod.sapabap1`` name the same schema, written with or without its
    database."""
    return qualifier == session or qualifier.endswith("." + session) or session.endswith("." + qualifier)


def check_session_schema(db: Database, schema: str) -> str:
    """``schema`` (``--default-schema``) when a table of ``db`` lives in it, else a one-line
    :class:`ImportFormatError` naming the schemas there are."""
    from schemarag.runtime.core.errors import ImportFormatError

    wanted = schema.strip().lower()
    qualifiers = sorted({_schema_of(t.name) for t in db.tables} - {""})
    if not any(_same_schema(q, wanted) for q in qualifiers):
        listed = ", ".join(qualifiers[:8]) + (", ..." if len(qualifiers) > 8 else "")
        raise ImportFormatError(
            f"--default-schema {schema!r}: no table of {db.name} is in that schema; "
            + (f"pass one of {listed}" if qualifiers else "its tables are not schema-qualified: leave it out")
        )
    return schema.strip()


def _schema_of(name: str) -> str:
    """Everything before a qualified name's last part (``sapabap1`` of ``SAPABAP1.KNA1``)."""
    return name.lower().rpartition(".")[0]
