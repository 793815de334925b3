"""Sibling schemas (runtime/search/sibling_schemas.py): the same table under several schemas,
told apart by how well each schema's name fits the question."""

from __future__ import annotations

import numpy as np
from ranking_support import rank_with
from tiny_support import in_memory_artifact

from schemarag.runtime.search.named_tables import question_words
from schemarag.runtime.search.sibling_schemas import (
    SiblingGroups,
    schema_fit,
    sibling_groups,
    sibling_prior,
    siblings_of,
)

TX = ["hash", "block_number", "from_address", "to_address", "value"]
BLOCKS = ["number", "timestamp", "miner", "gas_used"]


def test_a_table_of_the_same_name_and_columns_in_two_schemas_has_a_sibling() -> None:
    cols = {
        "CRYPTO_ETHEREUM.TRANSACTIONS": TX,
        "crypto_ethereum_classic. transactions": [c.upper() for c in TX],  # case, whitespace aside
        "CRYPTO_ETHEREUM.TOKENS": TX,  # same columns, another name: no sibling
        "CRYPTO_BITCOIN.BLOCKS": BLOCKS,
        "CRYPTO_ZCASH.BLOCKS": ["block_hash", "size", "version", "nonce"],  # same name, other columns
    }
    sib = siblings_of(cols)
    assert sorted(sib) == ["CRYPTO_ETHEREUM.TRANSACTIONS", "crypto_ethereum_classic. transactions"]
    assert len(set(sib.values())) == 1


def test_a_lookup_copied_into_another_schema_makes_no_sibling_schemas() -> None:
    regions = ["region_id", "name", "state", "geometry"]
    cols = {
        f"geo.{t}": [f"{t}_{c}" for c in ("id", "name", "area", "geom")] for t in ("zips", "states", "cbsa")
    }
    cols |= {"geo.regions": regions, "storms.regions": regions}
    cols |= {f"storms.{t}": ["event_id", "time", "lat", "lon", t] for t in ("hail", "wind", "tornado")}
    assert siblings_of(cols) == {}  # one shared table of geo's four, storms' four
    cols |= {f"storms_prelim.{t}": ["event_id", "time", "lat", "lon", t] for t in ("hail", "wind")}
    assert sorted(siblings_of(cols)) == [
        "storms.hail", "storms.wind", "storms_prelim.hail", "storms_prelim.wind",
    ]  # fmt: skip


def test_unqualified_tables_and_one_schema_have_no_siblings() -> None:
    assert siblings_of({"orders": TX, "ORDERS ": TX}) == {}
    assert siblings_of({"shop.orders": TX, "shop.ORDERS": TX}) == {}


def test_a_schema_fits_by_the_name_words_the_question_holds_minus_those_it_lacks() -> None:
    q = question_words("Daily Bitcoin block intervals in 2023")
    assert schema_fit("CRYPTO_BITCOIN", q) == 0  # bitcoin named, crypto not
    assert schema_fit("CRYPTO_BITCOIN_CASH", q) == -1  # and cash not either
    assert schema_fit("analytics", question_words("analytics of signups")) == 1
    assert schema_fit("analytics_dev", question_words("analytics of signups")) == 0


def test_every_table_of_a_worse_fitting_sibling_schema_scores_the_prior() -> None:
    names = [
        "CRYPTO_BITCOIN_CASH.BLOCKS",
        "CRYPTO_BITCOIN_CASH.TX",
        "CRYPTO_BITCOIN.BLOCKS",
        "CRYPTO_BITCOIN.TX",
    ]
    names.append("CRYPTO_BITCOIN_CASH.TOKENS")  # the cash chain's own table
    columns = {t: (BLOCKS if t.endswith("BLOCKS") else TX) for t in names[:4]} | {
        names[4]: ["token", "supply"]
    }
    groups = SiblingGroups(names, siblings_of(columns))
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5], dtype=np.float32)
    got = sibling_prior(scores, groups, "Bitcoin block sizes", 0.5)
    assert got.tolist() == np.array([0.45, 0.4, 0.7, 0.6, 0.25], dtype=np.float32).tolist()
    assert scores[0] == np.float32(0.9)  # the caller's scores are not changed
    got = sibling_prior(scores, groups, "Bitcoin Cash block sizes", 0.5)  # names cash: bitcoin's copies
    assert got.tolist() == np.array([0.9, 0.8, 0.35, 0.3, 0.5], dtype=np.float32).tolist()
    assert sibling_prior(scores, groups, "Bitcoin block sizes", 1.0) is scores  # 1: off


def test_siblings_the_question_fits_alike_keep_their_scores() -> None:
    names = ["prod_eu.orders", "prod_us.orders", "prod_eu.users", "prod_us.users"]
    groups = SiblingGroups(names, siblings_of(dict.fromkeys(names, TX)))
    assert groups.outfitted("orders per customer") == []
    assert groups.outfitted("orders per customer in the EU") == ["prod_us"]
    assert SiblingGroups(names, {}).outfitted("orders in the EU") == []


def test_the_ranking_keeps_the_copies_of_the_schema_the_question_names() -> None:
    tables = [
        ("CRYPTO_ETHEREUM_CLASSIC.TRANSACTIONS", TX),
        ("CRYPTO_ETHEREUM_CLASSIC.BALANCES", ["address", "eth_balance"]),
        ("CRYPTO_ETHEREUM.TRANSACTIONS", TX),
        ("CRYPTO_ETHEREUM.BLOCKS", BLOCKS),
        ("CRYPTO_ETHEREUM_CLASSIC.BLOCKS", BLOCKS),
    ]
    schema = {
        "name": "CRYPTO",
        "tables": [{"name": t, "columns": [{"name": c} for c in cols]} for t, cols in tables],
    }
    art = in_memory_artifact(schema, [(t, "table", None) for t, _ in tables])
    # the classic chain's tables score a hair above: it leads, the schema prior does the rest
    scores = np.array([0.9, 0.88, 0.85, 0.6, 0.62], dtype=np.float32)
    kw = {
        "fk_expand": False,
        "question": "Ethereum balances per block",
        "coverage_power": 0.0,
        "name_boost": 0.0,
    }
    off = rank_with(art, scores, 3, sibling_prior=1.0, **kw).tables
    classic = "CRYPTO_ETHEREUM_CLASSIC."
    assert off == [classic + "TRANSACTIONS", classic + "BALANCES", classic + "BLOCKS"]
    on = rank_with(art, scores, 3, sibling_prior=0.5, **kw).tables
    assert on == [
        "CRYPTO_ETHEREUM.TRANSACTIONS",
        "CRYPTO_ETHEREUM.BLOCKS",
        "CRYPTO_ETHEREUM_CLASSIC.TRANSACTIONS",
    ]
    kw["question"] = "Ethereum Classic balances per block"
    assert rank_with(art, scores, 3, sibling_prior=0.5, **kw).tables == off


def _index(tables: list[tuple[str, list[str], str | None]]):
    schema = {
        "name": "shop",
        "tables": [
            {"name": t, "columns": [{"name": c} for c in cols]} | ({"layer": layer} if layer else {})
            for t, cols, layer in tables
        ],
    }
    return in_memory_artifact(schema, [(t, "table", None) for t, _, _ in tables])


def test_a_dbt_index_has_no_sibling_schemas_its_layers_order_the_copies() -> None:
    plain = [("analytics.orders", TX, None), ("analytics_dev.orders", TX, None)]
    assert sibling_groups(_index(plain)).outfitted("orders of the dev team") == ["analytics"]
    dbt = [("analytics.orders", TX, "marts"), ("analytics_dev.orders", TX, "staging")]
    groups = sibling_groups(_index(dbt))
    assert groups.groups == [] and groups.outfitted("orders of the dev team") == []
