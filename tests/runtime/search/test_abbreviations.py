"""Warehouse abbreviations: general ones, ones learned from the schema's own names and comments,
and nothing learned from a single coincidence."""

from __future__ import annotations

from schemarag.runtime.core.schema import Database
from schemarag.runtime.core.text_tokens import tokenize
from schemarag.runtime.search.abbreviations import GENERAL, is_abbreviation, learned_pairs


def _db(tables: list[dict]) -> Database:
    return Database.model_validate({"name": "wh", "tables": tables})


def test_general_list_is_stemmed_like_the_index() -> None:
    (customer,) = tokenize("customers")
    assert GENERAL[customer] == ("cust",)
    assert tokenize("qty")[0] in GENERAL[tokenize("quantity")[0]]  # both stemmed


def test_shapes() -> None:
    assert is_abbreviation("dept", "depart") and is_abbreviation("cust", "custom")
    assert not is_abbreviation("cust", "cut")  # the long form must be clearly longer
    assert not is_abbreviation("org", "region")  # must start with the same letter
    assert not is_abbreviation("id2", "identifi")


def test_pairs_are_learned_from_tables_that_use_both_forms() -> None:
    db = _db(
        [
            {"name": "CUST_DIM", "columns": [{"name": "CUST_KEY", "description": "Customer surrogate key"}]},
            {"name": "SALES", "columns": [{"name": "CUST_ID", "description": "The customer who bought"},
                                          {"name": "DEPT_CD", "description": "Department code"}]},
        ]
    )  # fmt: skip
    pairs = learned_pairs(db.tables)
    assert pairs["cust"] == tokenize("customer")[0]  # two tables use both forms
    assert "dept" not in pairs  # one table only: a coincidence is not a rule
