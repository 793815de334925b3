"""Warehouse vocabulary: a question's ``customer`` also finds ``CUST_ACCT_DIM``.

Warehouses abbreviate (``CUST``, ``DEPT``, ``TXN_AMT``, ``ORG_CD``); questions do not. Two
sources, neither specific to any data set:

* :data:`GENERAL`: a small list of common English/warehouse abbreviations (``amt`` amount,
  ``qty`` quantity, ``txn`` transaction, ``dim`` dimension ...);
* **learned from the index's own schema**: a short token is taken for an abbreviation of a long
  one when its letters are a subsequence of the long one's, starting with the same letter (a
  prefix counts double), and the two co-occur in the same table (its name, column names and
  comments) in at least ``MIN_TABLES`` tables: ``CUST_ID`` beside a comment "customer key".

Both map a long (stemmed) token to the short tokens the index holds. The map is derived once
per opened index version (a weak-keyed cache, like the join graph), never per request; at query
time each question token costs one dictionary lookup, and an expansion adds the short token's
postings at ``ABBREVIATION_WEIGHT`` without raising what the question must cover.

Example:
    >>> is_abbreviation("cust", "custom"), is_abbreviation("dept", "depart"), is_abbreviation("cat", "certif")
    (True, True, False)
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.search.per_artifact import per_artifact

ABBREVIATION_WEIGHT = 0.8  # the weight ``--abbreviations`` evaluates (Calibration's default is 0: off)
MIN_TABLES = 2
# Long form -> common short forms (general English and warehouse usage, not any data set's).
_GENERAL_WORDS: dict[str, tuple[str, ...]] = {
    "account": ("acct", "acc"),
    "address": ("addr",),
    "amount": ("amt",),
    "average": ("avg",),
    "category": ("cat", "categ"),
    "code": ("cd",),
    "count": ("cnt",),
    "customer": ("cust",),
    "date": ("dt",),
    "department": ("dept",),
    "description": ("desc", "descr"),
    "dimension": ("dim",),
    "employee": ("emp", "empl"),
    "fact": ("fct",),
    "identifier": ("id",),
    "location": ("loc",),
    "month": ("mth", "mon"),
    "number": ("num", "nbr", "no"),
    "organization": ("org",),
    "percent": ("pct",),
    "product": ("prod",),
    "quantity": ("qty",),
    "timestamp": ("ts",),
    "transaction": ("txn", "trx", "trans"),
    "year": ("yr",),
}


def _stem(word: str) -> str:
    toks = tokenize(word)
    return toks[0] if toks else word


GENERAL: dict[str, tuple[str, ...]] = {
    _stem(long): tuple(dict.fromkeys(_stem(s) for s in shorts)) for long, shorts in _GENERAL_WORDS.items()
}


def is_abbreviation(short: str, long: str) -> bool:
    """``short``'s letters appear in order in ``long``, starting with its first letter, and
    ``long`` is clearly longer (two letters at least)."""
    if not short.isalpha() or not long.isalpha() or len(long) < len(short) + 2 or short[0] != long[0]:
        return False
    it = iter(long[1:])
    return all(ch in it for ch in short[1:])


def learned_pairs(tables: Any) -> dict[str, str]:
    """``{short: long}`` learned from ``tables`` (objects with ``name``, ``description`` and
    ``columns`` of ``name``/``description``), as described in the module docstring."""
    counts: Counter[tuple[str, str]] = Counter()
    for table in tables:
        bag: set[str] = set(tokenize(table.name)) | set(tokenize(table.description or "")[:40])
        for col in table.columns:
            bag.update(tokenize(col.name))
            if col.description:
                bag.update(tokenize(col.description)[:20])
        words = [w for w in bag if w.isalpha()]
        shorts = [w for w in words if 3 <= len(w) <= 5]  # two letters: GENERAL only
        longs = [w for w in words if len(w) >= 4]
        for s in shorts:
            for lng in longs:
                if is_abbreviation(s, lng):
                    counts[(s, lng)] += 2 if lng.startswith(s) else 1
    best: dict[str, tuple[int, str]] = {}
    for (s, lng), n in counts.items():
        if n >= 2 * MIN_TABLES - 1 and (s not in best or (n, lng) > best[s]):
            best[s] = (n, lng)
    return {s: lng for s, (_, lng) in best.items()}


@per_artifact
def abbreviation_map(art: Any) -> dict[str, tuple[int, ...]]:
    """``{long token: vocabulary ids of its short forms}`` for one opened index (cached)."""
    vocab = art.vocab
    out: dict[str, set[int]] = {}
    for long, shorts in GENERAL.items():
        ids = {vocab[s] for s in shorts if s in vocab}
        if ids:
            out.setdefault(long, set()).update(ids)
    for short, long in learned_pairs(art.schema.tables).items():
        if short in vocab:
            out.setdefault(long, set()).add(vocab[short])
    return {k: tuple(sorted(v)) for k, v in out.items()}
