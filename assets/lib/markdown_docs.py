"""Parse one table's markdown doc into sections, using markdown-it-py's token stream.

Headings come from ``heading_open``/``inline`` tokens and section bodies are the source lines
between token ``map`` positions, so fenced code, lists and emphasis are never mis-split by
a regex. Cost is linear in the document: markdown-it's block pass (its inline pass is switched
off: only a heading's raw text is used), one backward sweep that finds where every section
ends, and a binary search for each section's code fences. (It was quadratic: every heading
copied the list of all later headings and scanned every fence, so 10k headings + 2k fences
took 11 s.) Problems (no ``# Table:`` header, unterminated fence, bad bytes) raise
:class:`~schemarag.runtime.core.errors.DocParseError`; the loader turns that into one warning and skips
the file.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from markdown_it import MarkdownIt

from schemarag.runtime.core.errors import DocParseError


@dataclass
class Section:
    """A heading and its body (the lines up to the next heading of the same or higher level)."""

    level: int
    title: str
    start_line: int  # 1-based line of the heading
    body: str
    children: list[Section] = field(default_factory=list)
    sql_blocks: list[str] = field(default_factory=list)


@dataclass
class ParsedDoc:
    """A doc file: its H1 title and H2 sections (each with its H3 children)."""

    title: str
    kind: str  # "table" or "database"
    name: str  # table name (for "table"), database name or "" (for "database")
    sections: list[Section]


# More headings than any real doc has (PostgreSQL caps a table at 1,600 columns). Counted with one
# regular expression before markdown-it runs, so a hostile doc of nothing but headings (2 MB is
# ~250k of them, ~10 s of token building) is refused in milliseconds instead.
MAX_HEADINGS = 20_000
_HEADING_LINE = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.MULTILINE)


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # Block structure only: inline tokens keep their raw ``content`` (the heading text), and
    # parsing emphasis/links inside every paragraph would be a third of the time, unused.
    return MarkdownIt("commonmark").disable("inline")


def _source_lines(text: str) -> list[str]:
    """Lines exactly as markdown-it counts them, so token ``map`` positions index this list.

    markdown-it splits only at ``\n`` after normalising ``\r\n`` and ``\r``; ``str.splitlines``
    also splits at form feeds, ``\u2028`` and friends, which shifted every later section.
    """
    return re.sub(r"\r\n?", "\n", text).split("\n")


def _closes_fence(line: str, markup: str) -> bool:
    """A closing fence: only fence characters (at least as many as opened it) and spaces,
    after any blockquote markers or list indentation of the container holding the fence."""
    body = line.lstrip(" \t>")
    return re.fullmatch(rf"{re.escape(markup[0])}{{{len(markup)},}}[ \t]*", body) is not None


def _check_fences(tokens: list, lines: list[str], path: str) -> None:
    for tok in tokens:
        if tok.type != "fence" or tok.map is None:
            continue
        last = tok.map[1] - 1
        closing = lines[last] if last < len(lines) else ""
        opened_at = tok.map[0] + 1
        if last == tok.map[0] or not _closes_fence(closing, tok.markup):
            raise DocParseError(
                f"{path}:{opened_at}: unterminated code fence {tok.markup!r}; close it with {tok.markup}"
            )


def parse_markdown(text: str, path: str = "<doc>", index: bool = False) -> ParsedDoc:
    """Split ``text`` into its H1 title and H2/H3 sections.

    >>> doc = parse_markdown("# Table: t\\n## Purpose\\nWhy.\\n## Columns\\n### a\\n- x\\n")
    >>> doc.name, [s.title for s in doc.sections], doc.sections[1].children[0].title
    ('t', ['Purpose', 'Columns'], 'a')
    """
    if "\x00" in text:
        raise DocParseError(f"{path}: contains NUL bytes; it is not a text file")
    text = text.removeprefix("\ufeff")  # editors on Windows save UTF-8 with a BOM; it hides the '#'
    n_headings = sum(1 for _ in _HEADING_LINE.finditer(text))
    if n_headings > MAX_HEADINGS:
        raise DocParseError(
            f"{path}: {n_headings:,} heading lines, more than the limit of {MAX_HEADINGS:,}; "
            "split it into one doc per table"
        )
    tokens = _parser().parse(text)
    lines = _source_lines(text)
    _check_fences(tokens, lines, path)

    headings: list[tuple[int, str, int]] = []  # (level, title, 0-based line)
    body_starts: dict[int, int] = {}  # heading line -> first body line (a setext heading spans 2 lines)
    fences: list[tuple[int, str, str]] = []  # (0-based line, info, content)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            headings.append((int(tok.tag[1]), title, tok.map[0]))
            body_starts[tok.map[0]] = tok.map[1]
        elif tok.type == "fence" and tok.map is not None:
            fences.append((tok.map[0], tok.info.strip().lower(), tok.content))

    h1 = next((h for h in headings if h[0] == 1), None)
    if h1 is None:
        want = "'# Database: <name>'" if index else "'# Table: <table_name>'"
        raise DocParseError(f"{path}: no level-1 heading; start the file with {want}")
    title = h1[1]
    if index:
        kind, name = "database", title.split(":", 1)[1].strip() if ":" in title else title
    else:
        head, _, rest = title.partition(":")
        if head.strip().lower() != "table" or not rest.strip():
            raise DocParseError(
                f"{path}:{h1[2] + 1}: first heading is {title!r}; it must be '# Table: <table_name>'"
            )
        kind, name = "table", rest.strip().strip("`")

    def body(start: int, end: int) -> str:
        return "\n".join(lines[body_starts[start] : end]).strip()

    ends = _section_ends(headings, len(lines))
    fence_lines = [fl for fl, _, _ in fences]  # ascending: tokens come in document order
    sections: list[Section] = []
    for idx, (level, htitle, line) in enumerate(headings):
        if level not in (2, 3):
            continue
        end = ends[idx]
        first, last = bisect_right(fence_lines, line), bisect_left(fence_lines, end)
        sec = Section(
            level=level,
            title=htitle,
            start_line=line + 1,
            body=body(line, end),
            sql_blocks=[c for _, info, c in fences[first:last] if info in ("sql", "")],
        )
        if level == 2:
            sections.append(sec)
        elif sections:
            sections[-1].children.append(sec)
    return ParsedDoc(title=title, kind=kind, name=name, sections=sections)


def _section_ends(headings: list[tuple[int, str, int]], n_lines: int) -> list[int]:
    """For each heading, the line of the next heading of the same or a higher level (or the end).

    One backward sweep keeping the next line seen at each of the six levels: linear, where a scan
    of the later headings per heading is quadratic. An H2 body is therefore its whole span (H3s
    included) and an H3 body stops at the next H1-H3.
    """
    next_at = [n_lines] * 7  # next_at[k]: line of the nearest later heading of level k
    ends = [n_lines] * len(headings)
    for idx in range(len(headings) - 1, -1, -1):
        level, _, line = headings[idx]
        ends[idx] = min(next_at[1 : level + 1])
        next_at[level] = line
    return ends
