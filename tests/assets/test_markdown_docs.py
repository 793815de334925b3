"""schemarag.assets.lib.markdown_docs: token-stream sectioning of the docs markdown format."""

from __future__ import annotations

import pytest

from schemarag.assets.lib.markdown_docs import parse_markdown
from schemarag.runtime.core.errors import DocParseError

DOC = """# Table: orders

## Purpose
One row per order.

## Columns

### id
- **Type:** INTEGER

### `status`
- **Type:** TEXT
- **Notes:** a `## not a heading` inside code

## Common Queries

### Query Pattern: Recent
Latest orders.
```sql
-- ## a comment that looks like a heading
SELECT * FROM orders ORDER BY id DESC
```
**Use case:** dashboards

## Notes
The end.
"""


def test_sections_children_lines_and_sql_blocks() -> None:
    doc = parse_markdown(DOC, "orders.md")
    assert (doc.kind, doc.name, doc.title) == ("table", "orders", "Table: orders")
    assert [s.title for s in doc.sections] == ["Purpose", "Columns", "Common Queries", "Notes"]
    purpose, columns, queries, notes = doc.sections
    assert purpose.body == "One row per order."
    assert purpose.start_line == 3
    assert [c.title for c in columns.children] == ["id", "`status`"]
    assert columns.children[0].body == "- **Type:** INTEGER"
    assert columns.children[0].start_line == 8
    (pattern,) = queries.children
    assert pattern.title == "Query Pattern: Recent"
    assert pattern.sql_blocks == [
        "-- ## a comment that looks like a heading\nSELECT * FROM orders ORDER BY id DESC\n"
    ]
    assert "**Use case:** dashboards" in pattern.body
    assert notes.body == "The end."


def test_h3_body_stops_at_next_heading() -> None:
    doc = parse_markdown("# Table: t\n## Columns\n### a\nA\n### b\nB\n## Notes\nN\n")
    a, b = doc.sections[0].children
    assert (a.body, b.body) == ("A", "B")


def test_table_name_in_backticks_and_index_doc() -> None:
    assert parse_markdown("# Table: `users`\n").name == "users"
    idx = parse_markdown("# Database: shop\n\n## Overview\nA shop.\n", "_index.md", index=True)
    assert (idx.kind, idx.name, [s.title for s in idx.sections]) == ("database", "shop", ["Overview"])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("## Purpose\nno title\n", "no level-1 heading"),
        ("# Orders\n## Purpose\nx\n", "it must be '# Table: <table_name>'"),
        ("# Table:   \n", "it must be '# Table: <table_name>'"),
        ("# Table: t\n## Examples\n```sql\nSELECT 1\n", "unterminated code fence"),
        ("# Table: t\n## Examples\n```\ncode\n```python\n", "unterminated code fence"),
        ("# Table: t\n```", "unterminated code fence"),
        ("# Table: t\nA\x00B\n", "NUL bytes"),
    ],
)
def test_malformed_docs_raise_doc_parse_error_naming_the_file(text: str, reason: str) -> None:
    with pytest.raises(DocParseError) as info:
        parse_markdown(text, "docs/bad.md")
    assert str(info.value).startswith("docs/bad.md")
    assert reason in str(info.value)


def test_unterminated_fence_error_names_the_opening_line() -> None:
    with pytest.raises(DocParseError, match=r"^bad\.md:4: unterminated code fence '```'"):
        parse_markdown("# Table: t\n## Examples\ntext\n```sql\nSELECT 1\n", "bad.md")


def test_fence_inside_blockquote_is_closed() -> None:
    # Bug fix: the closing '> ```' used to be reported as an unterminated fence.
    doc = parse_markdown("# Table: t\n## Examples\n> ```sql\n> SELECT 1\n> ```\n\nafter\n")
    assert doc.sections[0].sql_blocks == ["SELECT 1\n"]


def test_longer_closing_fence_and_tildes_are_fine() -> None:
    doc = parse_markdown("# Table: t\n## Examples\n~~~\nx\n~~~~~\n## Notes\nn\n")
    assert [s.title for s in doc.sections] == ["Examples", "Notes"]


@pytest.mark.parametrize("sep", ["\x0c", "\u2028", "\x85", "\x1e"])
def test_unicode_line_separators_do_not_shift_sections(sep: str) -> None:
    # Bug fix: str.splitlines() split at these but markdown-it does not, so bodies and fence
    # checks read the wrong lines.
    text = f"# Table: t\n## Purpose\nA{sep}B\n## Columns\n### a\nbody a\n```sql\nselect 1\n```\n"
    doc = parse_markdown(text)
    purpose, columns = doc.sections
    assert purpose.body == f"A{sep}B"
    assert columns.children[0].body == "body a\n```sql\nselect 1\n```"


def test_crlf_and_bom() -> None:
    text = "\ufeff# Table: t\r\n## Purpose\r\nwhy\r\n```sql\r\nselect 1\r\n```\r\n## Notes\r\nn\r\n"
    doc = parse_markdown(text)
    assert doc.name == "t"
    assert [(s.title, s.body) for s in doc.sections] == [
        ("Purpose", "why\n```sql\nselect 1\n```"),
        ("Notes", "n"),
    ]


def test_setext_heading_body_excludes_underline() -> None:
    doc = parse_markdown("# Table: t\nPurpose\n-------\nbody\n")
    assert [(s.title, s.body) for s in doc.sections] == [("Purpose", "body")]


def test_h3_before_any_h2_and_deep_headings_are_ignored() -> None:
    doc = parse_markdown("# Table: t\n### stray\nx\n## Purpose\ny\n#### deep\nz\n")
    assert [s.title for s in doc.sections] == ["Purpose"]
    assert doc.sections[0].body == "y\n#### deep\nz"


# ---------------------------------------------------------------- linear cost (issue 13, finding 5)
def _naive_ends(headings: list[tuple[int, str, int]], n_lines: int) -> list[int]:
    """The definition, quadratically: the next heading of the same or a higher level."""
    return [
        next((ln for lv, _, ln in headings[i + 1 :] if lv <= level), n_lines)
        for i, (level, _, _) in enumerate(headings)
    ]


@pytest.mark.parametrize("seed", range(20))
def test_section_ends_sweep_equals_the_definition(seed: int) -> None:
    import random

    from schemarag.assets.lib.markdown_docs import _section_ends

    rng = random.Random(seed)
    headings = [(rng.randint(1, 6), "", line) for line in sorted(rng.sample(range(500), rng.randint(0, 60)))]
    assert _section_ends(headings, 500) == _naive_ends(headings, 500)


def test_many_sections_each_get_exactly_their_own_fences() -> None:
    parts = ["# Table: t"]
    for i in range(300):
        parts += [f"## s{i}", f"### q{i}", "```sql", f"SELECT {i}", "```", "```python", "x = 1", "```"]
    doc = parse_markdown("\n".join(parts) + "\n", "t.md")
    assert len(doc.sections) == 300
    for i, sec in enumerate(doc.sections):
        assert sec.sql_blocks == [f"SELECT {i}\n"]  # the H2 holds its H3's fence, python excluded
        assert sec.children[0].sql_blocks == [f"SELECT {i}\n"]


def test_a_doc_of_nothing_but_headings_is_refused_before_parsing() -> None:
    """2 MB of headings (the probe: quadratic, > 60 s at 700 KB) is refused by a count, not parsed."""
    text = "# Table: t\n" + "".join(f"## h{i}\n" if i % 3 else f"### x{i}\n" for i in range(300_000))
    with pytest.raises(DocParseError, match=r"big.md: [\d,]+ heading lines, more than the limit of 20,000"):
        parse_markdown(text[: 2 * 1024 * 1024], "big.md")


@pytest.mark.slow
def test_a_doc_at_the_heading_limit_parses() -> None:
    """Just under the limit: parsed, linear (its time is printed by the hostile-input bench)."""
    from schemarag.assets.lib.markdown_docs import MAX_HEADINGS

    body = "".join(f"## h{i}\n" if i % 3 else f"### x{i}\n" for i in range(MAX_HEADINGS - 1))
    doc = parse_markdown("# Table: t\n" + body, "wide.md")
    assert len(doc.sections) == sum(1 for i in range(MAX_HEADINGS - 1) if i % 3)  # the H2s
