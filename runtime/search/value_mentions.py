"""Value mentions: the question's words the schema does not know, looked up by meaning.

A question names values as well as tables and columns: "roads ... in California", "the mean
score for psoriasis", "films with Yash Chopra". Catalog exports carry no values, so no lexical
signal reaches the table that holds them (``STATES``, ``DISEASES``, ``Person``), and the whole
question's vector is dominated by its other words. Embedded alone, the mention finds its table:
on Spider 2.0-lite "California" ranks ``GEO_US_BOUNDARIES.STATES`` first of 26 tables,
"psoriasis" ``DISEASES`` first of 27.

A mention is a run of question words that are not in the index's vocabulary (no chunk holds
them) and look like a value: capitalised inside a sentence (a proper name), or a rare word, one
the embedding model's WordPiece vocabulary splits into pieces (``psoriasis``; common English words
are single pieces). Each mention (at most ``MAX_MENTIONS``) is embedded alone and scored against
every chunk vector; its best table, with the cosine of the best and of the runner-up table, is a
:class:`MentionHit`. The ranking (``ranking.reorder.mentions``, ``mention_lead``)
moves a hit whose table leads the runner-up by ``mention_margin`` to just after the first
``mention_lead`` places: a lookup joins the tables the question is about, it does not replace
them.

Nothing here is parsed per request beyond the question itself: the vocabulary, chunk vectors and
chunk-to-table map are the build's; the per-table grouping is derived once per opened version.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.search.per_artifact import per_artifact

MAX_MENTIONS = 3  # each costs one embedding call (~3-5 ms on 2 cores)
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-.]*[A-Za-z]|[A-Za-z]")
_SENTENCE_END = ".?!"


@dataclass(frozen=True)
class MentionHit:
    """A mention's best table (index into ``art.table_names``) and how clearly it leads."""

    text: str
    table: int
    best: float  # cosine of the mention with the table's best chunk
    runner_up: float  # the same for the next table

    def clear(self, margin: float) -> bool:
        """Whether the table leads the runner-up by ``margin`` of its own cosine."""
        return self.best > 0 and self.best - self.runner_up >= margin * self.best


def mention_spans(
    art: Any, question: str, pieces: Callable[[str], int], rare: int = SHIPPED.mention_rare_pieces
) -> list[str]:
    """The question's mentions, in order, at most MAX_MENTIONS. ``pieces(word)``: how many
    WordPiece tokens the embedding model splits a lowercase word into (``rare`` or more: a rare
    word, ``RankingConfig.mention_rare_pieces``).

    >>> class Art: vocab = {"road": 0, "state": 1}
    >>> mention_spans(Art(), "Which roads in Los Angeles? Roads of Ohio", lambda w: 1)
    ['Los Angeles', 'Ohio']
    """
    spans: list[str] = []
    run: list[str] = []
    prev_end = 0
    last = ""  # the last non-space character before the current word ("": the question's start)
    for m in _WORD.finditer(question):
        word = m.group()
        gap = question[prev_end : m.start()].rstrip()  # only the text since the previous word
        if gap:
            last = gap[-1]
        sentence_start = not last or last in _SENTENCE_END
        last, prev_end = word[-1], m.end()
        tokens = tokenize(word)
        unknown = bool(tokens) and all(t not in art.vocab and not t.isdigit() for t in tokens)
        # the tokenizer is asked only about unknown words
        if unknown and ((word[0].isupper() and not sentence_start) or pieces(word.lower()) >= rare):
            run.append(word)
            continue
        if run:
            spans.append(" ".join(run))
            run = []
    if run:
        spans.append(" ".join(run))
    return list(dict.fromkeys(spans))[:MAX_MENTIONS]


@per_artifact
def _chunks_by_table(art: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(chunk rows sorted by table, where each table's run starts, those tables)``."""
    ct = np.asarray(art.chunk_table)
    rows = np.flatnonzero(ct >= 0)
    rows = rows[np.argsort(ct[rows], kind="stable")]
    tables, starts = np.unique(ct[rows], return_index=True)
    return rows, starts, tables


def mention_hits(art: Any, spans: list[str], vectors: np.ndarray) -> list[MentionHit]:
    """Each span's best table by its best chunk's cosine (``vectors``: one row per span)."""
    if not spans or len(art.table_names) < 2:
        return []
    rows, starts, tables = _chunks_by_table(art)
    if rows.size == 0:
        return []
    sims = np.asarray(art.embeddings[rows], dtype=np.float32) @ np.asarray(vectors, dtype=np.float32).T
    per_table = np.maximum.reduceat(sims, starts, axis=0)  # [tables with chunks, spans]
    hits: list[MentionHit] = []
    for k, text in enumerate(spans):
        col = per_table[:, k]
        if col.size < 2:
            continue
        top2 = np.argpartition(-col, 1)[:2]
        first, second = sorted(top2.tolist(), key=lambda i: (-col[i], int(tables[i])))
        hits.append(MentionHit(text, int(tables[first]), float(col[first]), float(col[second])))
    return hits


def move_mentions(candidates: list[str], picks: list[str], lead: int) -> list[str]:
    """``candidates`` with each of ``picks`` ranked after place ``lead`` moved to just after it
    (in ``picks`` order); picks already within the first ``lead`` places stay.

    >>> move_mentions(["a", "b", "c", "d", "e"], ["e"], 2)
    ['a', 'b', 'e', 'c', 'd']
    """
    head = set(candidates[:lead])
    late = [p for p in dict.fromkeys(picks) if p in candidates and p not in head]
    if not late:
        return candidates
    moved = set(late)
    rest = [t for t in candidates if t not in moved]
    return rest[:lead] + late + rest[lead:]
