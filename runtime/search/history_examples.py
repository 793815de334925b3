"""Past queries as examples in a prompt (issue 38, item 4; docs/query-history.md "Examples in the prompt").

A warehouse's own SQL shows a model how this database is queried: which tables go together, on
which keys they join, which columns hold the codes. The build stored one example per distinct
logged statement (:class:`~schemarag.runtime.artifact.history.QueryHistory`: each example's
tables as a CSR array, its question, SQL, runs and text as columns); choosing the examples for a
question only reads those arrays against the question's table ranking, so a request parses no SQL:

* **Eligible**: every table the example reads is among the ranking's kept tables. An example that
  names a table the prompt does not show invites SQL against a table the model cannot see (and
  that validation then rejects), so "mostly kept" is not enough.
* **Order**: by the kept tables' scores the example reads, each relative to the best kept table
  and counted against :data:`STRONG_RATIO` (the ratio at which the default focus calls a table
  *strong*): a table at least half as relevant as the best counts for the example, a weaker one
  against it, so the first example reads the tables the question most likely needs and not many
  more. A plain sum of scores puts the widest logged query first: on BIRD dev's 5 folds its first
  example reads every gold table for 75 % of questions, but those and at most one more table for
  37 % and exactly them for 10 %; this order: 73 %, 60 % and 32 %, at 85 tokens instead of 108
  (``examples_bench``). Ties: the times it ran (what analysts rely on), then log order. Only
  examples with a positive total are shown, and a statement logged with several questions once.
* **Size**: a statement over ``max_example_tokens`` is skipped, never cut (a cut statement is a
  wrong example), and examples are taken in order while they fit ``max_tokens``.

With no history, or ``k == 0``, nothing is selected and :func:`examples_section` is empty, so
every prompt stays byte-identical to one built without examples. :data:`DEFAULT_EXAMPLES` is the
number every surface uses when the caller does not say, chosen from ``examples_bench`` (see its
comment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from schemarag.runtime.artifact.chunk_model import estimate_tokens
from schemarag.runtime.search.per_artifact import per_artifact
from schemarag.runtime.search.results import TableRanking

# Measured with tools/benchmarks/examples_bench.py on BIRD dev's 5 history folds (docs/query-
# history.md, "Examples in the prompt"): the first example makes 73 % of questions see a query
# over all their tables for 85 prompt tokens, the second adds 3.1 points for 50 tokens (6.3 per
# 100), the third 1.0 point for 51 (1.9 per 100), the fourth and fifth 2.0 points for 99. 2 is the
# largest N up to which every example added at least 5 points per 100 tokens (the bench's
# --min-gain, fixed before the run: about 1 % of questions for each 1 % added to a 2,000-token
# prompt). Exact table matches agree: 11 points per 100 tokens for the second, 4 for the third.
DEFAULT_EXAMPLES = 2
MAX_EXAMPLES = 20  # the most a request may ask for (the serving limit)
# A kept table counts for an example when it scores at least this share of the best kept table:
# the default focus's strong-table ratio (ranking.config ColumnPolicy.table_ratio), not tuned here.
STRONG_RATIO = 0.5
# A logged statement longer than this is skipped: a 2,000-token ETL query teaches less than the
# schema it would push out of the prompt. BIRD dev's gold SQL as examples: median 42 tokens, p99
# 109, the longest 360 (fold 0's histories, 1,180 statements): none of them is skipped.
MAX_EXAMPLE_TOKENS = 400
# What the examples may add to a prompt when the caller set no token budget: three statements
# of the longest kind, so the cap never binds at the default N and bounds a large --examples.
EXAMPLES_TOKEN_ALLOWANCE = 1_200
SECTION_TITLE = "Examples of past queries on this database"


@dataclass(frozen=True)
class HistoryExample:
    """One past query chosen for a prompt, as it is rendered (``text``) and why (``score``)."""

    row: int  # the example's row in the version's history (``QueryHistory.examples``)
    example_id: str
    text: str
    tables: tuple[str, ...]
    score: float
    runs: int
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "example_id": self.example_id,
            "tables": list(self.tables),
            "score": round(self.score, 4),
            "runs": self.runs,
            "tokens": self.tokens,
        }


@per_artifact
def _example_arrays(art: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Once per opened version: each example's runs and table count, and each CSR entry's
    example row."""
    history = art.history
    runs = np.asarray([int(r or 0) for r in history.examples["runs"]], dtype=np.int64)
    counts = np.diff(np.asarray(history.example_indptr, dtype=np.int64))
    rows = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    return runs, counts, rows


def example_scores(
    art: Any, ranking: TableRanking, strong_ratio: float = STRONG_RATIO
) -> tuple[np.ndarray, np.ndarray]:
    """``(score, eligible)`` per example of ``art``'s history: the sum over the tables it reads
    of (score / best kept score - ``strong_ratio``), and whether every one of them is kept (see
    the module docstring; ``strong_ratio=0`` orders by the plain sum of scores)."""
    _runs, counts, rows = _example_arrays(art)
    index = art.table_index
    value = np.zeros(len(art.table_names), dtype=np.float64)
    outside = np.ones(len(art.table_names), dtype=np.float64)
    best = max((float(ranking.scores.get(t, 0.0)) for t in ranking.tables), default=0.0)
    for t in ranking.tables:
        i = index.get(t)
        if i is not None:
            relative = float(ranking.scores.get(t, 0.0)) / best if best > 0 else 0.0
            value[i] = relative - strong_ratio
            outside[i] = 0.0
    entries = np.asarray(art.history.example_tables, dtype=np.int64)
    n = counts.shape[0]
    score = np.bincount(rows, weights=value[entries], minlength=n)
    missing = np.bincount(rows, weights=outside[entries], minlength=n)
    return score, (counts > 0) & (missing == 0)


def example_text(history: Any, row: int) -> str:
    """Example ``row`` as the prompt shows it: ``-- question: ...`` and the SQL when the log had
    a question, else the stored text (``-- tables: a, b`` and the SQL)."""
    question = history.examples["question"][row]
    if question is not None and str(question).strip():
        return f"-- question: {' '.join(str(question).split())}\n{history.examples['sql'][row]}"
    return str(history.examples["text"][row])


def select_examples(
    art: Any,
    ranking: TableRanking | None,
    k: int,
    max_tokens: int | None = EXAMPLES_TOKEN_ALLOWANCE,
    max_example_tokens: int = MAX_EXAMPLE_TOKENS,
    strong_ratio: float = STRONG_RATIO,
) -> list[HistoryExample]:
    """The ``k`` past queries of ``art``'s history that best fit ``ranking``, within
    ``max_tokens`` (None: no total cap); empty without a history, a ranking or with ``k <= 0``."""
    history = getattr(art, "history", None)
    if k <= 0 or ranking is None or history is None or not history.present or history.n_examples == 0:
        return []
    score, eligible = example_scores(art, ranking, strong_ratio)
    runs = _example_arrays(art)[0]
    candidates = np.flatnonzero(eligible & (score > 0))
    order = candidates[np.lexsort((candidates, -runs[candidates], -score[candidates]))]
    picked: list[HistoryExample] = []
    used, seen = 0, set()
    for row in order.tolist():
        sql = history.examples["sql"][row]
        if sql in seen:
            continue
        text = example_text(history, row)
        tokens = estimate_tokens(text)
        if tokens > max_example_tokens or (max_tokens is not None and used + tokens > max_tokens):
            continue
        seen.add(sql)
        used += tokens
        tables = tuple(art.table_names[i] for i in history.example_table_indices(row).tolist())
        ex_id = str(history.examples["example_id"][row])
        picked.append(HistoryExample(row, ex_id, text, tables, float(score[row]), int(runs[row]), tokens))
        if len(picked) == k:
            break
    return picked


def examples_section(examples: list[HistoryExample], placeholders: bool = True) -> str:
    """The prompt's section of ``examples`` ("" for none). ``placeholders``: the history's
    literals were replaced by ``?`` (the default import), which the section says, so a model
    writes the question's own values instead of copying a ``?``."""
    if not examples:
        return ""
    note = " (? stands for a literal value)" if placeholders else ""
    head = f"{SECTION_TITLE}{note}; use them for the joins and columns, not as the answer:"
    return "\n\n".join([head, *(ex.text.strip() for ex in examples)])


def history_has_placeholders(art: Any) -> bool:
    """Whether ``art``'s history stored ``?`` for literals (anything but ``--keep-literals``)."""
    summary = getattr(getattr(art, "history", None), "summary", None) or {}
    return summary.get("literals", "placeholders") != "kept"
