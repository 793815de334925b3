"""Property: arbitrary markdown never crashes the parser or the chunker, and chunks stay well-formed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schemarag.assets.lib.chunking import chunk_database
from schemarag.assets.lib.markdown_docs import parse_markdown
from schemarag.runtime.artifact.chunk_model import CHUNK_FIELDS, CHUNK_TYPES
from schemarag.runtime.core.errors import DocParseError
from schemarag.runtime.core.schema import parse_schema

DB = parse_schema(
    {
        "name": "shop",
        "tables": [
            {"name": "users", "columns": [{"name": "id", "primary_key": True}, {"name": "email"}]},
            {
                "name": "orders",
                "columns": [
                    {"name": "id", "primary_key": True},
                    {"name": "user_id", "foreign_key": {"table": "users", "column": "id"}},
                ],
            },
        ],
    }
)
TABLES = {t.name for t in DB.tables}

names = st.sampled_from(["users", "orders", "ghost", "id", "email", "user_id", "`users`", "", "Table"])
free_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40
)  # any code point, incl. NUL, \r, \x0c, \u2028
words = st.text(alphabet="abcdefghij _`*-#>|:.0123456789", max_size=30)
sections = st.sampled_from(
    ["Purpose", "Business Context", "Columns", "Common Queries", "Relationships", "Examples", "Notes", "Misc"]
)
sql = st.sampled_from(
    [
        "SELECT * FROM orders JOIN users ON users.id = orders.user_id",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "SELEC broken ((",
        "",
    ]
)

line = st.one_of(
    st.builds(lambda n: f"# Table: {n}", names),
    st.builds(lambda n: f"# Database: {n}", names),
    st.builds(lambda s: f"## {s}", sections),
    st.builds(lambda n: f"### {n}", names),
    st.builds(lambda n: f"### Query Pattern: {n}", words),
    st.builds(lambda w: f"#### {w}", words),
    st.builds(lambda info, body: f"```{info}\n{body}\n```", st.sampled_from(["sql", "", "python"]), sql),
    st.sampled_from(["```", "~~~", "```sql", "> ```", "    ```"]),  # stray fences: maybe unterminated
    st.builds(lambda w: f"- **Type:** {w}", words),
    st.builds(lambda w: f"> {w}", words),
    st.builds(lambda w: f"{w}\n---", words),  # setext heading or thematic break
    st.just(""),
    words,
    free_text,
)
documents = st.builds(
    lambda lines, sep: sep.join(lines), st.lists(line, max_size=25), st.sampled_from(["\n", "\r\n"])
)


def _check_chunks(chunks: list) -> None:
    ids = [c.chunk_id for c in chunks]
    assert len(ids) == len(set(ids))
    for c in chunks:
        assert c.text and c.text.strip() == c.text
        assert c.chunk_type in CHUNK_TYPES
        assert c.tokens > 0
        assert c.database == "shop"
        if c.chunk_type == "database":
            assert c.table is None
        else:
            assert c.table in TABLES
        assert (c.column is not None) == (c.chunk_type == "column")
        if c.column is not None:
            assert c.column
        assert c.table not in c.related_tables
        assert set(c.related_tables) <= TABLES
        assert tuple(c.to_dict()) == CHUNK_FIELDS


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents, index=st.booleans())
def test_parse_never_raises_anything_but_doc_parse_error(doc: str, index: bool) -> None:
    try:
        parsed = parse_markdown(doc, "prop.md", index=index)
    except DocParseError as exc:
        assert str(exc).startswith("prop.md")
        return
    assert parsed.kind == ("database" if index else "table")
    for sec in parsed.sections:
        assert sec.level == 2 and sec.start_line >= 1
        assert all(child.level == 3 for child in sec.children)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.dictionaries(
        st.sampled_from(["users.md", "orders.md", "x.md", "_index.md"]), documents, max_size=4
    )
)
def test_chunk_database_never_raises_and_chunks_are_well_formed(files: dict[str, str]) -> None:
    result = chunk_database(DB, files)
    _check_chunks(result.chunks)
    assert len(result.warnings) + len(result.doc_files) == len(files)
    # Schema-derived table chunks are always there, whatever the docs contain.
    assert {c.table for c in result.chunks if c.chunk_type == "table"} == TABLES
