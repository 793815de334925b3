"""The one tokenizer used for BM25 at build time and at query time.

Identifiers are split on ``_`` and camelCase and also kept whole (``created_at`` yields
``created``, ``at`` and ``created_at``), so a question naming a column in either form matches
it. Words are Snowball-stemmed. The artifact records :data:`TOKENIZER_CONFIG`; the reader
refuses an index built with another tokenizer, so query tokens always equal build tokens.

>>> tokenize("Show orders.createdAt for user_id 7")  # 'show' is a stopword
['order', 'creat', 'at', 'createdat', 'created_at', 'user', 'id', 'user_id', '7']
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from py_rust_stemmers import SnowballStemmer

TOKENIZER_CONFIG: dict[str, object] = {
    "name": "schemarag-identifier-snowball",
    "version": 4,
    "stemmer": "snowball-english",
    "lowercase": True,
    "split_identifiers": True,
    "min_length": 2,
}

_WORD = re.compile(r"[^\W]+", re.UNICODE)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "each",
        "me",
        "my",
        "show",
        "list",
        "give",
        "find",
        "get",
        "tell",
        "please",
        "i",
        "we",
        "you",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "there",
        "their",
        "them",
        "they",
        "than",
        "then",
        "these",
        "those",
        "into",
        "about",
        "over",
        "under",
        "per",
    ]
)
# "at" is a stopword in prose but meaningful inside identifiers (created_at); identifier
# parts are never dropped, only free-standing stopwords.

_stemmer = SnowballStemmer("english")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer.stem_word(word)


def split_identifier(word: str) -> list[str]:
    """``'createdAt'`` -> ``['created', 'At']``; ``'user_id'`` -> ``['user', 'id']``."""
    parts: list[str] = []
    for piece in word.split("_"):
        if piece:
            parts.extend(_CAMEL.findall(piece) or [piece])
    return parts


def tokenize(text: str, optional: set[str] | None = None) -> list[str]:
    """Tokens for BM25: stemmed words, identifier parts and whole identifiers.

    Whole-identifier forms (``createdat``, ``created_at``) are redundant with their parts; when
    ``optional`` is given they are also added to it, so a query need not count them as unmatched.
    """
    out: list[str] = []
    for word in _WORD.findall(text):
        tokens, whole = _word_tokens(word)
        out.extend(tokens)
        if optional is not None and whole:
            optional.update(whole)
    return out


# Per-word results are cached: a warehouse build tokenizes millions of words, almost all of
# them repeats of a few thousand column names (splitting and stemming each was 1/3 of BM25).
@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(tokens, whole-identifier forms)`` of one word (see :func:`tokenize`)."""
    parts = split_identifier(word)
    if len(parts) > 1:
        out = []
        for part in parts:
            low = part.lower()
            if len(low) >= 2 or low.isdigit():
                out.append(_stem(low))
        whole = [word.lower()]
        if "_" not in word:  # camelCase also matches its snake_case spelling (createdAt ~ created_at)
            whole.append("_".join(p.lower() for p in parts))
        return (*out, *whole), tuple(whole)
    low = word.lower()
    if low in STOPWORDS or (len(low) < 2 and not low.isdigit()):
        return (), ()
    return (_stem(low),), ()


def keywords(text: str, limit: int = 32) -> list[str]:
    """Distinct identifier-ish terms (lower-case, unstemmed) in first-seen order."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        for cand in _keyword_candidates(match.group(0)):
            seen.setdefault(cand, None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


@lru_cache(maxsize=1 << 16)
def _keyword_candidates(word: str) -> tuple[str, ...]:
    """The keywords one word contributes: itself and its identifier parts, lower-cased, at
    least 3 characters, not stopwords or numbers."""
    parts = split_identifier(word)
    candidates = [word.lower()] + ([p.lower() for p in parts] if len(parts) > 1 else [])
    return tuple(c for c in candidates if len(c) >= 3 and c not in STOPWORDS and not c.isdigit())


_PLAIN_WORD = re.compile(r"[a-z]+")


def adjacent_word_pairs(text: str) -> list[tuple[str, str]]:
    """Adjacent runs of letters (lower-cased; ``5-year`` is no pair), neither a stopword nor a
    single letter: the word pairs a warehouse may glue into one name (``census tract`` ->
    ``censustract``). Compound matching and named tables both read them.

    >>> adjacent_word_pairs("Population per census tracts by zip code")
    [('census', 'tracts'), ('zip', 'code')]
    """
    words = _PLAIN_WORD.findall(text.lower())
    return [
        (a, b)
        for a, b in pairwise(words)
        if a not in STOPWORDS and b not in STOPWORDS and len(a) >= 2 and len(b) >= 2
    ]


_BACKTICKED = re.compile(r"`([^`]{1,80})`|\"([^\"]{1,80})\"|\[([^\]]{1,80})\]")


def identifier_mentions(text: str) -> set[str]:
    """Lower-cased names the text writes as identifiers: ``snake_case``, ``camelCase`` (also as
    snake_case), ``table.column`` parts, and quoted/backticked/bracketed names.

    >>> sorted(identifier_mentions("orders.createdAt and `Free Meal Count` by user_id"))
    ['created_at', 'createdat', 'free meal count', 'orders', 'user_id']
    """
    out: set[str] = set()
    for m in _BACKTICKED.finditer(text):
        name = next(g for g in m.groups() if g is not None).strip().lower()
        if name:
            out.add(name)
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", text):
        parts = word.split(".")
        for i, part in enumerate(parts):
            pieces = split_identifier(part)
            if "_" in part.strip("_") or (len(pieces) > 1 and part[:1].islower()):
                out.add(part.lower())
                if "_" not in part:
                    out.add("_".join(p.lower() for p in pieces))
            elif len(parts) > 1 and (i > 0 or len(part) > 2):
                out.add(part.lower())
    return out
