"""Typo and form tolerance: misspellings, identifiers, SQL snippets, long, empty and non-English questions."""

from __future__ import annotations

import pytest

from schemarag.runtime.core.errors import QuestionError, SchemaragError
from schemarag.runtime.search.results import RetrievalResult
from schemarag.runtime.search.retriever import Retriever

# A realistic, off-topic preamble: the part of a long question that does not matter.
PREAMBLE_SENTENCE = (
    "I am writing a long note before my actual request because our team meeting ran late and the "
    "coffee machine on the third floor was broken again, which made everyone a little grumpy. "
)


def _preamble(min_chars: int) -> str:
    text = ""
    while len(text) < min_chars:
        text += PREAMBLE_SENTENCE
    return text


def _columns(res: RetrievalResult) -> list[tuple[str | None, str | None]]:
    return [(c.chunk.table, c.chunk.column) for c in res.chunks if c.chunk.chunk_type == "column"]


def _ids(res: RetrievalResult) -> list[tuple[str | None, str, str | None]]:
    return [(c.chunk.table, c.chunk.chunk_type, c.chunk.column) for c in res.chunks]


def test_typos_still_find_orders_created_at(ecommerce: Retriever) -> None:
    res = ecommerce.search("shwo me ordres from lsat month")
    assert res.chunks, "a misspelt on-topic question returned nothing"
    assert ("orders", "created_at") in _columns(res)[:1] or (
        res.chunks[0].chunk.table == "orders" and "created_at" in res.chunks[0].chunk.text
    ), _ids(res)


@pytest.mark.parametrize(
    ("question", "table", "column"),
    [
        ("what does discount_amount mean", "orders", "discount_amount"),
        ("what does discountAmount mean", "orders", "discount_amount"),
        ("orders created_at", "orders", "created_at"),
        ("orders createdAt", "orders", "created_at"),
        ("orders.createdAt", "orders", "created_at"),
        ("products stock_quantity", "products", "stock_quantity"),
        ("products stockQuantity", "products", "stock_quantity"),
        ("users.marketingOptIn", "users", "marketing_opt_in"),
    ],
)
def test_identifiers_in_snake_or_camel_case_match_their_column(
    ecommerce: Retriever, question: str, table: str, column: str
) -> None:
    """The named column's chunk is among the top 3 (ties at the score ceiling make rank 1 arbitrary)."""
    res = ecommerce.search(question)
    assert (table, column) in _columns(res)[:3], _ids(res)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT total_amount, currency FROM orders", {("orders", "total_amount"), ("orders", "currency")}),
        (
            "SELECT created_at FROM orders WHERE user_id = 5",
            {("orders", "created_at"), ("orders", "user_id")},
        ),
        ("select sku, stock_quantity from products where is_active", {("products", "stock_quantity")}),
    ],
)
def test_sql_snippets_match_the_columns_they_name(
    ecommerce: Retriever, sql: str, expected: set[tuple[str, str]]
) -> None:
    res = ecommerce.search(sql)  # defaults: top 5 at 0.3
    missing = expected - set(_columns(res))
    assert not missing, (missing, _ids(res))


def test_long_question_with_relevant_sentence_at_the_end(ecommerce: Retriever) -> None:
    """Over 1,000 characters: the part that matters comes last and must not be truncated away."""
    question = _preamble(1500) + "Show me all orders from last month."
    assert len(question) > 1500
    res = ecommerce.search(question)
    assert res.chunks, "relevant sentence at the end of a long question was not found at threshold 0.3"
    assert res.chunks[0].chunk.table == "orders", _ids(res)


def test_long_question_end_ranks_like_its_start(ecommerce: Retriever) -> None:
    """Independent of the threshold: the relevant sentence wins the ranking wherever it sits."""
    for sentence, table in [
        ("Show me all orders from last month.", "orders"),
        ("Which products are low on stock?", "products"),
    ]:
        for question in (_preamble(1500) + sentence, sentence + " " + _preamble(1500)):
            res = ecommerce.search(question, top_k=3, relevance_threshold=0.0)
            assert res.chunks[0].chunk.table == table, (question[:40], _ids(res))


def test_long_question_with_relevant_sentence_at_the_end_b2b(b2b: Retriever) -> None:
    question = _preamble(1200) + "Which invoice line items belong to each invoice?"
    res = b2b.search(question)
    assert res.chunks, "relevant sentence at the end of a long question was not found at threshold 0.3"
    assert res.chunks[0].chunk.table == "invoice_line_items", _ids(res)


def test_very_long_question_does_not_crash(ecommerce: Retriever) -> None:
    question = ("orders revenue " * 700).strip()  # 10,500 characters, many query windows
    res = ecommerce.search(question, debug=True)
    assert res.chunks and res.chunks[0].chunk.table == "orders"


@pytest.mark.parametrize("question", ["", " ", "   \t\n  ", "\u3000"])
def test_empty_or_whitespace_question_is_a_value_error(ecommerce: Retriever, question: str) -> None:
    with pytest.raises(ValueError, match="empty") as info:
        ecommerce.search(question)
    assert isinstance(info.value, QuestionError)
    assert isinstance(info.value, SchemaragError)


def test_non_string_question_is_rejected(ecommerce: Retriever) -> None:
    with pytest.raises(ValueError):
        ecommerce.search(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "question",
    [
        "Quelle est la météo à Paris?",
        "Wie viele Bestellungen gab es letzten Monat?",
        "¿Cuántos pedidos hubo el mes pasado?",
        "注文の一覧を表示して",
        "Покажи все заказы за прошлый месяц",
        "أظهر لي جميع الطلبات من الشهر الماضي",
        "📦📦📦 ???",
        "commandes orders 注文 created_at",
        "\x00\x01 orders",
    ],
)
def test_non_english_question_returns_results_or_empty(ecommerce: Retriever, question: str) -> None:
    res = ecommerce.search(question)
    assert isinstance(res, RetrievalResult)
    assert res.metadata.chunks_returned == len(res.chunks) <= 5
    assert all(0.3 <= c.score <= 1.0 for c in res.chunks)
    assert res.metadata.nothing_relevant == (not res.chunks)


def test_punctuation_only_question_returns_empty_not_error(ecommerce: Retriever) -> None:
    res = ecommerce.search("?!?! ... ---")
    assert res.chunks == []
    assert res.metadata.nothing_relevant
