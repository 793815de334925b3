"""What the ranking reads from an index version's query history, derived once per opened version.

The build stored plain count arrays (:mod:`schemarag.runtime.artifact.history`); the ranking
wants them in three shapes, computed here once per opened version (:func:`per_artifact`) and
never per request, and one score per request (:func:`example_scores`, a few postings summed):

* :func:`table_usage`: per table, how much the history uses it, on a log scale in [0, 1]
  (``log1p(statements) / log1p(max statements)``): a table read by ten times as many distinct
  statements is not ten times as likely to answer a question, and a dashboard that ran one
  statement a million times counts once (distinct statements, not runs).
* :func:`co_usage`: per table, the tables read by the same statements, with the share of its
  statements that also read them (``P(b | a)``), best first.
* :func:`logged_join_edges`: the join graph of the logged equi-joins (both directions), each at
  ``DECLARED_COST + extra``: evidence of a join weighted below a declared key and above an
  inferred one (:mod:`.join_graph`).
* :func:`example_scores`: how like each logged example a question is (BM25 over the examples'
  own index, built with the history).

Without a history every function returns an empty value, and the stages reading them do
nothing (``tests/runtime/ranking/test_history_stages.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from schemarag.runtime.search.join_graph import DECLARED_COST
from schemarag.runtime.search.per_artifact import per_artifact


@per_artifact
def table_usage(art: Any) -> np.ndarray:
    """float32 per table: ``log1p(statements) / log1p(max statements)`` (zeros: no history).

    >>> from types import SimpleNamespace
    >>> h = SimpleNamespace(present=True, tables=np.array([[5, 9], [1, 0], [1, 2]]))
    >>> usage = table_usage.__wrapped__(SimpleNamespace(history=h, table_names=["a", "b", "c"]))
    >>> [round(float(u), 3) for u in usage]
    [1.0, 0.0, 0.477]
    """
    n = len(art.table_names)
    history = art.history
    if not history.present or history.tables.shape[0] != n:
        return np.zeros(n, dtype=np.float32)
    stmts = history.tables[:, 1].astype(np.float64)
    top = float(stmts.max()) if stmts.size else 0.0
    if top <= 0:
        return np.zeros(n, dtype=np.float32)
    return (np.log1p(stmts) / np.log1p(top)).astype(np.float32)


@per_artifact
def co_usage(art: Any, prior: float = 0.0) -> dict[str, list[tuple[str, float]]]:
    """``{table: [(other table, share of its statements also reading it), ...]}``, best first.

    ``prior``: pseudo-statements added to every table's count, ``together / (statements +
    prior)``: a table read once, with one partner, does not make that partner a certainty (a
    young or small history, a handful of statements per database); a table read hundreds of
    times keeps its shares. 0: the plain shares.

    >>> from types import SimpleNamespace
    >>> h = SimpleNamespace(present=True, tables=np.array([[4, 4], [2, 2], [1, 1]]),
    ...                     pairs=np.array([[0, 1, 2, 2], [0, 2, 1, 1]]))
    >>> art = SimpleNamespace(history=h, table_names=["a", "b", "c"])
    >>> co = co_usage.__wrapped__(art)
    >>> co["a"], co["b"]
    ([('b', 0.5), ('c', 0.25)], [('a', 1.0)])
    >>> co_usage.__wrapped__(art, 2.0)["b"]  # b was read twice: 2 / (2 + 2)
    [('a', 0.5)]
    """
    history = art.history
    if not history.present or history.pairs.shape[0] == 0:
        return {}
    names = art.table_names
    stmts = history.tables[:, 1]
    out: dict[str, list[tuple[str, float]]] = {}
    for a, b, _runs, together in history.pairs.tolist():
        for x, y in ((a, b), (b, a)):
            if stmts[x] > 0:
                share = min(1.0, together / (float(stmts[x]) + prior))
                out.setdefault(names[x], []).append((names[y], share))
    for partners in out.values():
        partners.sort(key=lambda p: (-p[1], p[0]))
    return out


@per_artifact
def logged_join_edges(art: Any, extra: float) -> dict[str, dict[str, float]]:
    """``{table: {neighbour: DECLARED_COST + extra}}`` for every logged equi-join, both ways.

    >>> from types import SimpleNamespace
    >>> h = SimpleNamespace(present=True, joins=np.array([[0, 0, 1, 1, 3, 2]]))
    >>> logged_join_edges.__wrapped__(SimpleNamespace(history=h, table_names=["a", "b"]), 0.1)
    {'a': {'b': 1.1}, 'b': {'a': 1.1}}
    """
    history = art.history
    if not history.present or history.joins.shape[0] == 0:
        return {}
    names = art.table_names
    cost = round(DECLARED_COST + extra, 6)
    out: dict[str, dict[str, float]] = {}
    for left, _lc, right, _rc, _runs, _stmts in history.joins.tolist():
        if left != right:
            out.setdefault(names[left], {})[names[right]] = cost
            out.setdefault(names[right], {})[names[left]] = cost
    return out


def merged_edges(
    schema_edges: dict[str, dict[str, float]], logged: dict[str, dict[str, float]]
) -> dict[str, dict[str, float]]:
    """The schema's join graph with the logged edges added; the cheaper edge wins per pair.

    >>> merged_edges({"a": {"b": 1.0}, "b": {"a": 1.0}}, {"a": {"b": 1.1, "c": 1.1}, "c": {"a": 1.1}})
    {'a': {'b': 1.0, 'c': 1.1}, 'b': {'a': 1.0}, 'c': {'a': 1.1}}
    """
    if not logged:
        return schema_edges
    out = {t: dict(n) for t, n in schema_edges.items()}
    for t, neighbours in logged.items():
        row = out.setdefault(t, {})
        for n, cost in neighbours.items():
            if cost < row.get(n, float("inf")):
                row[n] = cost
    return out


@per_artifact
def history_join_graph(art: Any, base: float, penalty: float, extra: float) -> dict[str, dict[str, float]]:
    """The schema's join graph (:func:`~.join_graph.join_edges`) with the logged joins merged in
    at ``DECLARED_COST + extra``; once per opened version and costs."""
    from schemarag.runtime.search.join_graph import join_edges

    return merged_edges(join_edges(art, base, penalty), logged_join_edges(art, extra))


def example_scores(art: Any, question: str) -> np.ndarray:
    """float32 per example of ``art``'s history: the BM25 score of ``question`` against it, over
    the examples' own index (the build's; zeros: no history, or one built before that index).

    >>> from types import SimpleNamespace
    >>> h = SimpleNamespace(present=True, n_examples=2, example_vocab={"publish": 0, "race": 1},
    ...     example_term_indptr=np.array([0, 1, 2]), example_term_rows=np.array([0, 1], dtype=np.int32),
    ...     example_term_weights=np.array([0.5, 0.8], dtype=np.float32))
    >>> example_scores(SimpleNamespace(history=h), "Which publisher published it?").tolist()
    [0.5, 0.0]
    """
    from schemarag.runtime.core.bm25 import score
    from schemarag.runtime.core.text_tokens import tokenize

    history = art.history
    if not history.present or not history.example_vocab:
        return np.zeros(history.n_examples if history.present else 0, dtype=np.float32)
    vocab = history.example_vocab
    ids = [t for t in (vocab.get(tok) for tok in dict.fromkeys(tokenize(question))) if t is not None]
    return score(
        history.example_term_indptr,
        history.example_term_rows,
        history.example_term_weights,
        history.n_examples,
        ids,
    )
