"""How many tables a question needs, read from its words: the adaptive budget's widening signal.

The adaptive budget (:class:`~.table_ranking.AdaptiveBudget`) stops taking tables once their
evidence falls off, which suits a question about one thing. A question that joins several
("the names of the customers *and their* orders", "the average salary *for each* department")
needs more tables than its evidence curve suggests: its second and third tables are often
matched by fewer of its words. Two cheap signs say so:

* **named tables**: tables of the routed database whose own name the question spells (every
  content word of the name among the question's stemmed words: "order items" names
  ``order_items``; a union member's own name is read without its database's name);
* **join cues**: general English that asks for a grouping or a combination ("for each", "per",
  "along with", "and their", "respectively", "compared to", ...). No dataset's words.

``need`` = named tables beyond the first + distinct cues. Everything per request is a
tokenization of the question and dictionary lookups (linear in the question's words): the
name tokens of every table are derived once per opened index version (:mod:`.per_artifact`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.search.per_artifact import per_artifact

# General English asking for several entities at once or one row per group. Longer phrases are
# matched first and their words consumed, so "for each" is one cue, not also "each".
JOIN_CUES: tuple[str, ...] = (
    "broken down by",
    "compared to",
    "compared with",
    "together with",
    "along with",
    "as well as",
    "grouped by",
    "for every",
    "for each",
    "and their",
    "with their",
    "and its",
    "with its",
    "respectively",
    "both",
    "each",
    "per",
)
_CUE_PATTERNS = tuple(
    (cue, re.compile(r"(?<![a-z0-9])" + re.escape(cue) + r"(?![a-z0-9])"))
    for cue in sorted(JOIN_CUES, key=lambda c: (-len(c), c))
)
_SPACES = re.compile(r"[^a-z0-9']+")


@dataclass(frozen=True)
class JoinSignal:
    """What in a question suggests it needs several tables."""

    named: tuple[str, ...] = ()  # tables of the routed database the question names, schema order
    cues: tuple[str, ...] = ()  # join/grouping phrases found, in JOIN_CUES order

    @property
    def need(self) -> int:
        """Named tables beyond the first plus distinct cues: 0 for a one-entity question."""
        return max(len(self.named) - 1, 0) + len(self.cues)

    def to_dict(self) -> dict[str, Any]:
        return {"named_tables": list(self.named), "cues": list(self.cues), "need": self.need}


def join_cues(question: str) -> tuple[str, ...]:
    """The distinct :data:`JOIN_CUES` in ``question`` (whole words, any case).

    >>> join_cues("For each department, the average salary per employee and their managers")
    ('for each', 'and their', 'per')
    >>> join_cues("Which superhero has the most powers?")
    ()
    """
    text = " " + _SPACES.sub(" ", question.lower()) + " "
    found: set[str] = set()
    for cue, pattern in _CUE_PATTERNS:
        text, n = pattern.subn(" | ", text)
        if n:
            found.add(cue)
    return tuple(c for c in JOIN_CUES if c in found)


def name_words(name: str, database: str | None = None) -> frozenset[str]:
    """The content tokens of a table's own name: its last dotted part, without its union
    database's name in front, split into words and stemmed as the BM25 tokenizer does (no
    whole-identifier forms, no numbers, no stopwords).

    >>> sorted(name_words("shop__order_items", "shop"))
    ['item', 'order']
    >>> sorted(name_words("PUBLIC.lapTimes"))
    ['lap', 'time']
    >>> sorted(name_words("transactions_1k"))
    ['transact']
    """
    own = name.rsplit(".", 1)[-1]
    if database and own.lower().startswith(database.lower()) and len(own) > len(database):
        own = own[len(database) :].lstrip("_.- ") or own
    whole: set[str] = set()
    words = tokenize(own.replace("_", " "), whole)
    return frozenset(w for w in words if w not in whole and not w.isdigit())


@per_artifact
def table_name_words(
    art: Any,
) -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]], dict[str, int]]:
    """``(table -> its name words, word -> tables whose name has it, table -> schema position)``,
    once per opened version."""
    words: dict[str, frozenset[str]] = {}
    by_word: dict[str, list[str]] = {}
    schema = art.schema
    for t in art.table_names:
        table = schema.table(t)
        w = name_words(t, table.database if table is not None else None)
        if not w:
            continue
        words[t] = w
        for token in w:
            by_word.setdefault(token, []).append(t)
    position = {t: i for i, t in enumerate(art.table_names)}
    return words, {k: tuple(v) for k, v in by_word.items()}, position


def named_tables(art: Any, question: str, source: int | None = None) -> tuple[str, ...]:
    """Tables (of union source ``source``, or any) whose every name word is in ``question``,
    in schema order. Only tables sharing a word with the question are looked at."""
    words, by_word, position = table_name_words(art)
    asked = set(tokenize(question))
    of = art.table_source if source is not None else None
    hits = {t for token in asked for t in by_word.get(token, ())}
    keep = {t for t in hits if words[t] <= asked and (of is None or of.get(t) == source)}
    return tuple(sorted(keep, key=position.__getitem__))


def join_signal(art: Any, question: str, source: int | None = None) -> JoinSignal:
    """Named tables (of ``source`` in a union) and join cues of ``question``."""
    return JoinSignal(named_tables(art, question, source), join_cues(question))
