"""What a comment may contain, decided from the raw text before parsing: comments are attack surface.

sqlglot keeps comments aside as text, but engines do not all treat them as inert: MySQL and
MariaDB *execute* ``/*! ... */`` and ``/*!50000 ... */`` (MariaDB also ``/*M! ... */``;
``SELECT 1 /*! +1 */`` returns 2), MySQL applies optimizer hints ``/*+ ... */`` (``SET_VAR``
changes session settings for the statement), and PostgreSQL/DuckDB nest ``/* /* */ */`` while
MySQL, MariaDB and SQLite do not. So the validator looks at the comments themselves:

* sqlglot's tokenizer for the dialect finds strings, quoted identifiers and code; the text
  *between* two tokens is then only whitespace and comments (a ``/*`` inside a string is never
  looked at). :func:`_comments` splits that text conservatively: a block comment ends at the
  first ``*/`` and a line comment at the first ``\\r`` or ``\\n``, the earliest any engine ends
  them, so no text an engine could run escapes inspection.
* rejected in every dialect (a query that means the same without it loses nothing): executable
  comments ``/*!``, ``/*M!`` (MySQL-family engines run them; elsewhere they only hide text);
  optimizer hints ``/*+`` unless every hint in it is on the dialect's reviewed allow-list
  (:class:`CommentPolicy`; empty by default, see SECURITY.md); a block comment containing
  ``/*`` (engines disagree where it ends).
* a string whose end depends on server settings: in MySQL a backslash before a quote escapes
  it, unless ``sql_mode`` has ``NO_BACKSLASH_ESCAPES`` (or the quote is ``"`` under
  ``ANSI_QUOTES``); in PostgreSQL only when ``standard_conforming_strings`` is off. The string
  then ends early on such a server and its tail (``, LOAD_FILE(...) #``) runs as SQL, so an odd
  run of backslashes before a quote is rejected there (write a quote as ``''``).

Where sqlglot and an engine disagree otherwise, the validator is stricter, never looser; the
engines' real behaviour is pinned in ``tests/app/querygen/test_comment_engines.py``.

Example:
    >>> import sqlglot
    >>> sql = "SELECT 1 /*!50000 UNION SELECT LOAD_FILE('/etc/passwd') */"
    >>> lexical_errors(sql, sqlglot.Dialect.get_or_raise("mysql").tokenize(sql), "mysql")[0][:62]
    'not allowed: executable comment /*!50000 UNION SELECT LOAD_FIL'
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MYSQL_FAMILY = frozenset({"mysql", "doris", "starrocks", "singlestore"})
# Dialects whose string literals end in a different place depending on a server setting.
_SETTING_DEPENDENT_QUOTES = {
    "mysql": ("'\"", 'MySQL/MariaDB with sql_mode NO_BACKSLASH_ESCAPES (or ANSI_QUOTES for ")'),
    "postgres": ("'", "PostgreSQL with standard_conforming_strings off"),
}
_HINT = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\([A-Za-z0-9_@.,`\s]*\))?\s*")
_SHOWN = 60  # characters of a comment quoted in an error message


@dataclass(frozen=True)
class CommentPolicy:
    """Which optimizer hints are allowed, per dialect (upper-case hint names).

    Empty by default: no generated query needs a hint to be correct, hints are engine- and
    version-specific (MariaDB 10.11 ignores ``/*+``; MySQL 8 applies it), and some change the
    session (``SET_VAR``) or the server's behaviour. A deployment may list plan-only hints after
    review, e.g. ``CommentPolicy({"mysql": frozenset({"MAX_EXECUTION_TIME", "JOIN_ORDER"})})``;
    a hint is then accepted only in the form ``NAME`` or ``NAME(identifiers, numbers)``.
    """

    allowed_hints: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def hints_for(self, dialect: str) -> frozenset[str]:
        return frozenset(n.upper() for n in self.allowed_hints.get(dialect, frozenset()))


DEFAULT_COMMENT_POLICY = CommentPolicy()


def lexical_errors(
    sql: str, tokens: Sequence[Any], dialect: str, policy: CommentPolicy = DEFAULT_COMMENT_POLICY
) -> list[str]:
    """Every reason the comments or quoting of ``sql`` (tokenized as ``tokens``) are not allowed."""
    from sqlglot.tokens import TokenType

    errors: list[str] = []
    for kind, text in _comments(sql, tokens):
        problem = _comment_problem(kind, text, dialect, policy)
        if problem:
            errors.append(problem)
    quotes = _SETTING_DEPENDENT_QUOTES.get("mysql" if dialect in MYSQL_FAMILY else dialect)
    for tok in tokens:
        if tok.token_type == TokenType.HINT:
            problem = _hint_problem(sql[tok.start : tok.end + 1], dialect, policy)
            if problem:
                errors.append(problem)
        elif quotes and tok.token_type in (TokenType.STRING, TokenType.NATIONAL_STRING):
            raw = sql[tok.start : tok.end + 1]
            if _backslash_before_delimiter(raw, quotes[0]):
                errors.append(
                    f"not allowed: string literal {_show(raw)} has a backslash before a quote; "
                    f"{quotes[1]} ends the string there and runs the rest as SQL; "
                    "write a quote inside a string as two quotes ('') instead"
                )
    return list(dict.fromkeys(errors))


def unreadable_comment(rest: str, dialect: str) -> str | None:
    """Why a comment in ``rest`` (the text after the last token sqlglot could read) stopped the
    tokenizer, or None when the problem is not a comment (an unterminated string, say): an
    unterminated ``/*`` (SQLite runs it as a comment to the end; the others refuse it), or a
    nested one that PostgreSQL and DuckDB read as unterminated."""
    for kind, text in _split(rest):
        if kind == "line" and not text.startswith(("--", "#", "//")):
            return None  # not a comment: an unterminated string or some other token
        problem = _comment_problem(kind, text, dialect, DEFAULT_COMMENT_POLICY)
        if kind != "line" and problem:
            return problem
    return None


def _comments(sql: str, tokens: Sequence[Any]) -> Iterator[tuple[str, str]]:
    """(kind, raw text) of each comment in the gaps between ``tokens``."""
    pos = 0
    for tok in tokens:
        if tok.start > pos:
            yield from _split(sql[pos : tok.start])
        pos = max(pos, tok.end + 1)
    yield from _split(sql[pos:])


def _split(gap: str) -> Iterator[tuple[str, str]]:
    """Comments of text that holds only whitespace and comments, ended as early as any engine ends
    them: ("block", "/* .. */"), ("line", "-- ..", "# ..", "// .."), ("unterminated", "/* ..")."""
    i, n = 0, len(gap)
    while i < n:
        if gap[i].isspace():
            i += 1
        elif gap.startswith("/*", i):
            end = gap.find("*/", i + 2)
            if end < 0:
                yield "unterminated", gap[i:]
                return
            yield "block", gap[i : end + 2]
            i = end + 2
        else:  # a line comment, or (MySQL: `-- x\r...`) the rest of one past a \r
            ends = [e for e in (gap.find("\n", i), gap.find("\r", i)) if e >= 0]
            end = min(ends) if ends else n
            yield "line", gap[i:end]
            i = end


def _comment_problem(kind: str, text: str, dialect: str, policy: CommentPolicy) -> str | None:
    if kind == "unterminated":
        return (
            f"unterminated comment {_show(text)}: close it with */ or remove it "
            "(SQLite runs the rest as a comment, the other engines refuse it)"
        )
    if kind != "block":
        return None
    if text.startswith(("/*!", "/*M!")):
        runs = "MySQL and MariaDB run" if dialect in MYSQL_FAMILY else "MySQL-family engines would run"
        return (
            f"not allowed: executable comment {_show(text)}; {runs} the text inside /*! ... */ "
            "and /*M! ... */ as SQL; remove the comment (write what it should do as plain SQL)"
        )
    if "/*" in text[2:]:
        return (
            f"not allowed: nested comment {_show(text)}; PostgreSQL and DuckDB nest /* */ comments, "
            "MySQL, MariaDB and SQLite do not, so engines disagree on where it ends; remove the inner /*"
        )
    if text.startswith("/*+"):
        return _hint_problem(text, dialect, policy)
    return None


def _hint_problem(text: str, dialect: str, policy: CommentPolicy) -> str | None:
    """None when every hint in ``/*+ ... */`` is on the dialect's allow-list in the plain form."""
    allowed = policy.hints_for(dialect)
    if allowed:
        body = text[3:-2] if text.endswith("*/") else text[3:]
        names: list[str] = []
        pos = 0
        while pos < len(body) and (m := _HINT.match(body, pos)):
            names.append(m.group(1).upper())
            pos = m.end()
        if names and pos == len(body) and set(names) <= allowed:
            return None
    listed = ", ".join(sorted(allowed)) if allowed else "none"
    return (
        f"not allowed: optimizer hint {_show(text)}; hints change how the engine runs the query "
        f"(SET_VAR even its session settings) and only reviewed ones are accepted ({dialect}: {listed}); "
        "remove the hint"
    )


def _backslash_before_delimiter(raw: str, quotes: str) -> bool:
    """True when the string's own quote character (``'`` of ``N'..'``) follows an odd run of
    backslashes inside ``raw``: only then does the string end elsewhere without escapes."""
    start = min((i for i in (raw.find(q) for q in quotes) if i >= 0), default=-1)
    if start < 0:
        return False
    delimiter, run = raw[start], 0
    for ch in raw[start + 1 :]:
        if ch == "\\":
            run += 1
            continue
        if ch == delimiter and run % 2 == 1:
            return True
        run = 0
    return False


def _show(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 3] + "..."
