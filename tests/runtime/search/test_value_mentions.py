"""Value mentions: question words the schema does not know, embedded alone, find their table."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from ranking_support import rank_with
from tiny_support import in_memory_artifact

from schemarag.runtime.search.retriever import Retriever
from schemarag.runtime.search.value_mentions import (
    MAX_MENTIONS,
    MentionHit,
    mention_hits,
    mention_spans,
    move_mentions,
)

TABLES = ["roads", "nodes", "layers", "history", "states", "counties"]
SCHEMA: dict[str, Any] = {"name": "geo", "tables": [{"name": t, "columns": [{"name": "id"}]} for t in TABLES]}


def _art(vectors: np.ndarray | None = None, vocab: tuple[str, ...] = ("road", "state", "node")):
    """One chunk per table; chunk vectors ``vectors`` (rows in TABLES order) or zeros."""
    art = in_memory_artifact(SCHEMA, [(t, "table", None) for t in TABLES], vocab=list(vocab))
    if vectors is not None:
        art = dataclasses.replace(art, embeddings=np.asarray(vectors, dtype=np.float32))
    return art


def _common(word: str) -> int:
    """A stand-in for the model's WordPiece count: only 'psoriasis' is rare."""
    return 3 if word == "psoriasis" else 1


def test_a_mention_is_an_unknown_value_like_run_of_words() -> None:
    art = _art()
    question = "Which roads in San Bernardino cross state lines? Ohio roads, and psoriasis too."
    # "Which" / "Ohio" open a sentence; "roads"/"state" are the schema's words; "lines" is an
    # unknown but common lowercase word; "San Bernardino" and the rare "psoriasis" are mentions
    assert mention_spans(art, question, _common) == ["San Bernardino", "psoriasis"]
    assert mention_spans(art, "roads of Ohio near Ohio", _common) == ["Ohio"]  # once each
    many = " ".join(f"x Place{c}" for c in "ABCDEF")
    assert len(mention_spans(art, many, _common)) == MAX_MENTIONS
    assert mention_spans(art, "roads built in 2015 near Route 66", _common) == ["Route"]  # digits split


def test_each_mention_finds_the_table_of_its_best_chunk_and_how_clearly() -> None:
    vectors = np.zeros((len(TABLES), 4), dtype=np.float32)
    vectors[0], vectors[1] = [1.0, 0, 0, 0], [0, 1.0, 0, 0]  # roads, nodes
    vectors[4] = [0.0, 0.0, 0.6, 0.8]  # states
    vectors[5] = [0.0, 0.0, 0.8, 0.6]  # counties
    art = _art(vectors)
    hits = mention_hits(
        art, ["California", "Kern"], np.array([[0, 0, 0.6, 0.8], [0, 0, 1.0, 0]], dtype=np.float32)
    )
    assert [(h.text, TABLES[h.table]) for h in hits] == [("California", "states"), ("Kern", "counties")]
    assert (round(hits[0].best, 4), round(hits[0].runner_up, 4)) == (1.0, 0.96)
    assert hits[0].clear(0.0) and not hits[0].clear(0.05)  # leads counties by 4 %
    assert mention_hits(art, [], np.zeros((0, 4))) == []


def test_a_clear_mention_moves_its_table_just_after_the_lead_places() -> None:
    art = _art()
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.1, 0.05], dtype=np.float32)
    kw: dict[str, Any] = {"fk_expand": False, "question": "roads in California", "coverage_power": 0.0}
    states = MentionHit("California", TABLES.index("states"), best=0.4, runner_up=0.2)
    plain = rank_with(art, scores, 3, **kw).tables
    assert "states" not in plain
    moved = rank_with(art, scores, 3, mentions=[states], mention_lead=2, **kw).tables
    assert moved == ["roads", "nodes", "states"]
    # a mention whose table barely leads the runner-up moves nothing; nor does lead None (off)
    unclear = dataclasses.replace(states, runner_up=0.39)
    assert rank_with(art, scores, 3, mentions=[unclear], mention_margin=0.05, **kw).tables == plain
    assert rank_with(art, scores, 3, mentions=[states], mention_lead=None, **kw).tables == plain
    # a table already in the lead places stays where it is
    assert move_mentions(["a", "b", "c"], ["a"], 2) == ["a", "b", "c"]


def test_the_retriever_embeds_mentions_alone_with_the_index_model(ecommerce: Retriever) -> None:
    art = ecommerce.artifact
    question = "How many orders were shipped to customers in Wisconsin last month?"
    hits = ecommerce.mention_hits(question, art)
    assert [h.text for h in hits] == ["Wisconsin"]
    assert 0 <= hits[0].table < len(art.table_names) and hits[0].best >= hits[0].runner_up
    assert ecommerce.embedder.word_pieces("orders") == 1 and ecommerce.embedder.word_pieces("psoriasis") > 1
    assert ecommerce.mention_hits("How many orders were placed last month?", art) == []


def test_the_lexical_only_method_embeds_no_mention(ecommerce: Retriever, monkeypatch) -> None:
    question = "How many orders were shipped to customers in Wisconsin last month?"
    embed = ecommerce.embedder.query_embed
    calls: list[list[str]] = []

    def counted(texts: list[str]):  # the real model, counted
        calls.append(list(texts))
        return embed(texts)

    monkeypatch.setattr(ecommerce.embedder, "query_embed", counted)
    ecommerce.clear_query_cache()
    ecommerce.rank_tables(question, 5, method="bm25")
    assert calls == []  # neither the question nor its mention reached the model
    ecommerce.rank_tables(question, 5)
    assert ["Wisconsin"] in calls  # the hybrid method embeds the mention alone
