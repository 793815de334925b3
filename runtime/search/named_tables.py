"""Tables (and schemas) the question names: every word of a table's name is in the question.

Warehouse questions often name the table they need in plain words ("planet features points",
"zip codes", "concepts"), while the chunk score spreads over hundreds of tables sharing the
question's other words: 50 ``PLACES_<STATE>`` tables or every ACS table with an income column
outrank ``PLANET_FEATURES_POINTS``, and the schema prior pushes a named table of a second dataset
further down. A table is **named** when each content word of its own name (stemmed as the index
stems it; digit runs, decoration such as ``dim``/``fct`` and the schema qualifier left out) is a
word of the question. The question's words include the acronyms its capitalised names spell
(:mod:`.acronyms`) and, on request, the name words it writes in full (``indiv`` in
"individual", ``rnaseq`` in "RNA sequencing": :meth:`NamePostings.shortened`) and the common
short forms of its words (``yr`` for "year": :func:`abbreviated`), and the glued name words
its words begin (``bikeshare`` for "bike": :meth:`NamePostings.extended`). The ranking
(``ranking.evidence.name_boost``) adds ``name_boost`` to a named table's score and can
keep named tables (``named_exempt``) out of
the schema prior; leave-one-database-out chose the boost with shortened words and no exemption
(docs/ranking.md "Named tables").

The name postings (word -> tables) are read from the table names once per opened version; per
request the cost is one lookup per question word (a few more per word for shortened words) plus
the postings it hits, never a scan of the tables: 0.1-0.3 ms per question on a 474-table index.

Example:
    >>> words = name_words("GEO_US_BOUNDARIES.ZIP_CODES")
    >>> sorted(words)
    ['code', 'zip']
    >>> sorted(name_words("CLINICAL_GDC_R39"))
    ['clinic', 'gdc']
    >>> sorted(name_words("analytics.events_*"))
    ['event']
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from schemarag.runtime.core.schema import LABEL_MAX_CHARS
from schemarag.runtime.core.text_tokens import adjacent_word_pairs, tokenize
from schemarag.runtime.ranking.config import SHIPPED
from schemarag.runtime.search.abbreviations import GENERAL
from schemarag.runtime.search.acronyms import acronym_tokens
from schemarag.runtime.search.per_artifact import per_artifact

# Naming words a warehouse glues to a table name that say nothing of its content.
# (dbt's own prefixes among them: stg_, int_, base_, fct_, dim_, rpt_).
DECORATION = frozenset(
    {"dim", "fct", "fact", "lkp", "lookup", "stg", "int", "base", "rpt", "tbl", "vw", "view", "raw", "src"}
)


def name_words(name: str) -> frozenset[str]:
    """The content words of the last part of ``name`` (``schema.table`` -> ``table``), stemmed as
    the index stems: no digit run, no whole-identifier form, no decoration, no single letter."""
    whole: set[str] = set()
    last = name.rpartition(".")[2].rstrip("*_")  # a collapsed family: events_* -> events
    words = tokenize(last, whole)
    return frozenset(
        w
        for w in words
        if w not in whole
        and not w.isdigit()
        and len(w) > 1
        and w not in DECORATION
        and any(c.isalpha() for c in w)
    )


class NamePostings:
    """Word -> ids (tables or schemas) whose name holds it, how many words each name has and how
    many of them are its own: not words of ``prefixes[i]`` (a union's source database, which
    BirdUnion writes into every table name: ``student_club__member``)."""

    def __init__(self, names: list[str], prefixes: list[str] | None = None) -> None:
        postings: dict[str, list[int]] = {}
        self.need = np.zeros(len(names), dtype=np.int32)
        self.own = np.zeros(len(names), dtype=np.int32)
        for i, name in enumerate(names):
            words = name_words(name)
            self.need[i] = len(words)
            self.own[i] = len(words - name_words(prefixes[i])) if prefixes else len(words)
            for w in words:
                postings.setdefault(w, []).append(i)
        self.postings = {w: np.asarray(ids, dtype=np.int64) for w, ids in postings.items()}
        self.sorted_words = sorted(self.postings)  # for the name words a question word begins

    def extended(
        self,
        words: set[str],
        min_prefix: int = SHIPPED.name_min_prefix,
        more: int = SHIPPED.name_min_extension,
    ) -> set[str]:
        """Glued name words a question word begins: a question word of ``min_prefix`` letters or
        more followed by ``more`` letters or more (a second word, not an English ending such
        as -s, -er, -ed) (``bikeshar`` of ``bikeshare_trips`` for
        "bike trips", ``orderlin`` of ``orderlines`` for "each order"). One binary search per
        question word plus the name words it finds."""
        out: set[str] = set()
        keys = self.sorted_words
        for w in words:
            if len(w) < min_prefix:
                continue
            i = bisect.bisect_right(keys, w)
            while i < len(keys) and keys[i].startswith(w):
                if len(keys[i]) - len(w) >= more:
                    out.add(keys[i])
                i += 1
        return out

    def shortened(
        self, words: set[str], question: str, min_prefix: int = SHIPPED.name_min_prefix
    ) -> set[str]:
        """Name words the question writes in full: a name word of ``min_prefix`` letters or more
        that begins a longer question word (``indiv`` in "individual", ``stat`` in
        "statistics"), or that two adjacent question words spell with the second cut short or
        whole (``rnaseq`` in "RNA sequencing", ``zipcod`` in "zip code"). Per question word a few
        dictionary lookups and, per word pair, one (cached) stem per cut of the second word."""
        out: set[str] = set()
        for w in words:
            for end in range(min_prefix, len(w)):
                if w[:end] in self.postings:
                    out.add(w[:end])
        for a, b in adjacent_word_pairs(question):
            for end in range(2, len(b) + 1):
                for tok in tokenize(a + b[:end]):
                    if len(tok) >= min_prefix and tok in self.postings:
                        out.add(tok)
        return out

    def named(self, words: set[str], missing: int = 0) -> np.ndarray:
        """Bool per id: every word of its name is in ``words`` (a name with no word: never);
        ``missing``: a name with more than ``2 * missing`` words of its own may lack that many
        (``RNASEQ_HG38_GDC_R35`` for "RNA sequencing hg38 r35"; ``student_club__member`` has one
        word of its own and is never named by "student club" alone)."""
        hits = np.zeros(len(self.need), dtype=np.int32)
        for w in words:
            ids = self.postings.get(w)
            if ids is not None:
                hits[ids] += 1
        allowed = np.where(self.own > 2 * missing, missing, 0)
        return (self.need > 0) & (hits >= self.need - allowed)


@per_artifact
def table_name_postings(art: Any) -> NamePostings:
    src_ids, sources = art.table_sources
    prefixes = [sources[i] for i in src_ids.tolist()] if len(sources) > 1 else None
    return NamePostings(list(art.table_names), prefixes)


def label_words(label: str) -> frozenset[str]:
    """A label's content words as a name's (:func:`name_words`): a label is words, so a ``.`` in
    it ("Dept. of Revenue") is no schema qualifier."""
    return name_words(label.replace(".", " "))


def says_more(label: str, name: str) -> bool:
    """Whether ``label`` names other words than the identifier ``name`` does: the importers give
    a table a label only then, so a schema whose names say it all imports as before."""
    return label_words(label) != name_words(name)


def label_for(name: str, text: str) -> str | None:
    """``text`` (whitespace collapsed, cut to :data:`~schemarag.runtime.core.schema.LABEL_MAX_CHARS`)
    as the label of the table ``name`` when it :func:`says_more` than the name, else None: the
    one rule every importer gives a table its label by.

    >>> label_for("frpm", "free and  reduced-price meals"), label_for("user_reviews", "user reviews")
    ('free and reduced-price meals', None)
    """
    text = " ".join(text.split())[:LABEL_MAX_CHARS]
    return text if says_more(text, name) else None


@per_artifact
def table_label_postings(art: Any) -> NamePostings | None:
    """The postings of the tables' labels (``Table.label``: a data dictionary's short text, a
    natural name), None when no table has one. A label is a name in words, so it names its table
    as the name does, in a union with its source database's words before it as the name has them
    (``financial__trans``, label "transaction", is named as ``financial__transaction`` would be:
    "transactions" alone names neither)."""
    labels = [_label_of(art, t).replace(".", " ") for t in art.table_names]
    if not any(labels):
        return None
    src_ids, sources = art.table_sources
    if len(sources) > 1:
        prefixes = [sources[i] for i in src_ids.tolist()]
        return NamePostings(
            [f"{p} {label}" if label else "" for p, label in zip(prefixes, labels, strict=True)], prefixes
        )
    return NamePostings(labels)


def _label_of(art: Any, name: str) -> str:
    table = art.schema.table(name)
    return (table.label or "") if table is not None else ""


def question_words(question: str) -> set[str]:
    """The question's stemmed words as the index tokenizes them, and the acronyms its
    capitalised names spell ("Genomic Data Commons" -> ``gdc``; :mod:`.acronyms`). A fresh set
    each call (callers add to it); the tokenizing is done once per question (:func:`_words`)."""
    return set(_words(question))


@functools.lru_cache(maxsize=256)
def _words(question: str) -> frozenset[str]:
    """:func:`question_words`, cached: the name boost and the sibling-schema prior read the same
    question's words in one request; a bounded cache keeps a server's memory flat."""
    return frozenset(tokenize(question)) | frozenset(acronym_tokens(question))


def abbreviated(words: set[str]) -> set[str]:
    """The common short forms of ``words`` (:data:`~.abbreviations.GENERAL`, general English and
    warehouse usage): "year" also names the ``yr`` of ``CENSUSTRACT_2018_5YR``, "amount" ``amt``.

    >>> sorted(abbreviated({"year", "census"}))
    ['yr']
    """
    return {short for w in words for short in GENERAL.get(w, ())}


@dataclass(frozen=True)
class NameMatch:
    """How :func:`named_tables` matches names: ``shortened``, also by name words the question
    writes in full (:meth:`NamePostings.shortened`); ``abbreviations``, also by the common short
    forms of its words (:func:`abbreviated`); ``missing``, words a long name may lack
    (:meth:`NamePostings.named`); ``extended``, also by the glued name words its words begin
    (:meth:`NamePostings.extended`); ``labels``, also by the tables' labels
    (:func:`table_label_postings`), matched the same ways. The defaults are the plainest match;
    the ranking uses :meth:`of` its config."""

    shortened: bool = False
    abbreviations: bool = False
    missing: int = 0
    extended: bool = False
    min_prefix: int = SHIPPED.name_min_prefix
    min_extension: int = SHIPPED.name_min_extension
    labels: bool = SHIPPED.name_labels

    @classmethod
    def of(cls, config: Any) -> NameMatch:
        """The match a :class:`~schemarag.runtime.ranking.config.RankingConfig` asks for."""
        return cls(
            config.name_shortened,
            config.name_abbreviations,
            config.name_missing,
            config.name_extended,
            config.name_min_prefix,
            config.name_min_extension,
            config.name_labels,
        )


def named_tables(art: Any, question: str, how: NameMatch = NameMatch()) -> np.ndarray:
    """Bool per table of ``art``: the question names it (:func:`name_words`), matched as ``how``
    says (:class:`NameMatch`)."""
    postings = table_name_postings(art)
    label_postings = table_label_postings(art) if how.labels else None
    words = question_words(question)
    found: set[str] = set()
    for names in (postings, label_postings):
        if names is None:
            continue
        if how.shortened:
            found |= names.shortened(words, question, how.min_prefix)
        if how.extended:
            found |= names.extended(words, how.min_prefix, how.min_extension)
    words |= found
    if how.abbreviations:
        words |= abbreviated(words)
    named = postings.named(words, how.missing)
    if label_postings is not None:
        named |= label_postings.named(words, how.missing)
    return named
