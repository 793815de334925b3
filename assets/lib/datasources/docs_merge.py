"""Merge a fresh snapshot into doc files people have edited, without losing their words.

Sections are located with markdown-it tokens (``token.map`` gives source line ranges), so a
``### status`` inside a fenced SQL example is never mistaken for a column heading. Edits are
line insertions and removals only; every other byte of the file is preserved.

Example:
    >>> from schemarag.runtime.core.schema import Column, Table
    >>> t = Table.model_validate({"name": "t", "columns": [{"name": "a"}, {"name": "b"}]})
    >>> text = "# Table: t\\n\\n## Columns\\n### a\\nMy words.\\n\\n### gone\\n- old\\n"
    >>> print(merge_table_doc(text, t, "v2"))  # doctest: +NORMALIZE_WHITESPACE
    # Table: t
    <BLANKLINE>
    ## Columns
    ### a
    My words.
    <BLANKLINE>
    ### gone
    > **Dropped:** column no longer exists in snapshot v2
    <BLANKLINE>
    - old
    <BLANKLINE>
    ### b
    - **Type:** TEXT
    - **Nullable:** yes
"""

from __future__ import annotations

from dataclasses import dataclass

from schemarag.assets.lib.docs_writer import render_column
from schemarag.runtime.core.schema import Column, Table

DROPPED_PREFIX = "**Dropped:**"


@dataclass
class Section:
    level: int
    title: str
    start: int  # line of the heading
    marker: tuple[int, int] | None  # line range of a "> **Dropped:**" block right after the heading


def _sections(text: str) -> list[Section]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").parse(text)
    out: list[Section] = []
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open" or tok.map is None:
            continue
        title = tokens[i + 1].content.strip()
        marker = None
        nxt = i + 3  # heading_open, inline, heading_close
        if nxt < len(tokens) and tokens[nxt].type == "blockquote_open" and tokens[nxt].map:
            inline = next((t for t in tokens[nxt:] if t.type == "inline"), None)
            if inline is not None and inline.content.startswith(DROPPED_PREFIX):
                marker = (tokens[nxt].map[0], tokens[nxt].map[1])
        out.append(Section(int(tok.tag[1]), title, tok.map[0], marker))
    return out


def _plain(title: str) -> str:
    return title.strip().strip("`").strip()


def doc_table_name(text: str) -> str | None:
    """The table a doc describes, from its ``# Table: <name>`` heading."""
    for sec in _sections(text):
        if sec.level == 1 and sec.title.lower().startswith("table:"):
            return _plain(sec.title.split(":", 1)[1])
    return None


def _marker_edit(lines: list[str], heading: int, what: str, version: str) -> tuple[int, int, list[str]]:
    """Insert a marker under ``heading``, matching the blank-line style that follows it."""
    marker = f"> {DROPPED_PREFIX} {what} no longer exists in snapshot {version}\n"
    at = heading + 1
    if at < len(lines) and not lines[at].strip():
        return at, at, ["\n", marker]  # heading, blank, marker, (existing blank)
    return at, at, [marker, "\n"]  # heading, marker, blank, (existing content)


def _remove_marker(lines: list[str], marker: tuple[int, int]) -> tuple[int, int]:
    """The line range to delete: the marker plus the blank line :func:`_marker_edit` added."""
    start, end = marker
    if start > 0 and not lines[start - 1].strip():
        return start - 1, end
    if end < len(lines) and not lines[end].strip():
        return start, end + 1
    return start, end


def _apply(lines: list[str], edits: list[tuple[int, int, list[str]]]) -> str:
    """Apply ``(start, end, replacement)`` edits bottom-up so earlier line numbers stay valid."""
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[start:end] = new
    return "".join(lines)


def merge_table_doc(text: str, table: Table, version: str) -> str:
    """Add sections for new columns, mark dropped ones, unmark columns that came back."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    sections = _sections(text)
    edits: list[tuple[int, int, list[str]]] = []
    for sec in sections:  # a table that came back loses its dropped marker
        if sec.level == 1 and sec.marker:
            edits.append((*_remove_marker(lines, sec.marker), []))
    cols_idx = next(
        (i for i, s in enumerate(sections) if s.level == 2 and s.title.lower() == "columns"), None
    )
    if cols_idx is None:
        block = ["\n", "## Columns\n"] + [ln for c in table.columns for ln in ["\n", *_column_lines(c)]]
        edits.append((len(lines), len(lines), block))
        return _apply(lines, edits)
    end = next((s.start for s in sections[cols_idx + 1 :] if s.level <= 2), len(lines))
    present: set[str] = set()
    for sec in sections[cols_idx + 1 :]:
        if sec.start >= end:
            break
        if sec.level != 3:
            continue
        name = _plain(sec.title)
        present.add(name.lower())
        exists = table.column(name) is not None
        if not exists and sec.marker is None:
            edits.append(_marker_edit(lines, sec.start, "column", version))
        elif exists and sec.marker is not None:
            edits.append((*_remove_marker(lines, sec.marker), []))
    added = [c for c in table.columns if c.name.lower() not in present]
    if added:
        insert_at = end
        while insert_at > 0 and not lines[insert_at - 1].strip():
            insert_at -= 1  # put new sections right after the last non-blank line
        block = [ln for c in added for ln in ["\n", *_column_lines(c)]]
        if insert_at < len(lines) and lines[insert_at].strip():
            block.append("\n")  # keep a blank line before the next heading
        edits.append((insert_at, insert_at, block))
    return _apply(lines, edits)


def _column_lines(column: Column) -> list[str]:
    return render_column(column).splitlines(keepends=True)


def mark_table_dropped(text: str, version: str) -> str:
    """Put a dropped marker under the ``# Table:`` heading (once)."""
    lines = text.splitlines(keepends=True)
    for sec in _sections(text):
        if sec.level == 1:
            if sec.marker is not None:
                return text
            return _apply(lines, [_marker_edit(lines, sec.start, "table", version)])
    return f"> {DROPPED_PREFIX} table no longer exists in snapshot {version}\n\n" + text
