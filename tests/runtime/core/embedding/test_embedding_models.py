"""The model catalogue: the static encoder, paraphrase-MiniLM-L3, and "an index is queried with
the model it was built with". Real ONNX Runtime, real tokenizer, real Dagster builds.

The static table is derived once per machine (~15-50 s of CPU, cached under the temp folder),
so the first run of this module on a fresh machine is slower than the next ones.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from retrieval_support import REPO, write_chain_data

from schemarag.cli import main
from schemarag.runtime.core.embedding.embedder import Embedder, ModelSpec, StaticEmbedder
from schemarag.runtime.core.embedding.model_catalog import L3_MODEL_NAME
from schemarag.runtime.core.embedding.model_files import DEFAULT_MODEL_NAME
from schemarag.runtime.core.embedding.static_model import STATIC_MODEL_NAME, TABLE_FILE, StaticEncoder
from schemarag.runtime.core.errors import EmbeddingModelError, ManifestMismatchError
from schemarag.runtime.search.index_model import STATIC_CALIBRATION
from schemarag.runtime.search.retriever import Retriever

SIMILAR = ("how many orders were shipped last month", "number of orders shipped per month")
UNRELATED = "the marketing name of a sales region"


def _cos(v: np.ndarray, i: int, j: int) -> float:
    return float(v[i] @ v[j])


@pytest.fixture(scope="module")
def static() -> Embedder:
    return Embedder.get(ModelSpec(name="minilm-l6-static"))


def test_static_vectors_are_normalised_deterministic_and_semantic(static: Embedder) -> None:
    assert isinstance(static, StaticEmbedder)
    texts = [*SIMILAR, UNRELATED]
    v = static.query_embed(texts)
    assert v.shape == (3, 256) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    # same vectors again, from a second encoder over the same table, and as passages
    fresh = StaticEncoder(static.model_dir / TABLE_FILE, REPO / "runtime/core/embedding/model/tokenizer.json")
    np.testing.assert_array_equal(v, static.query_embed(texts))
    np.testing.assert_allclose(fresh.encode(texts), v, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(static.passage_embed(texts), v)
    assert _cos(v, 0, 1) > _cos(v, 0, 2) + 0.2


def test_static_identity_is_the_table_checksum(static: Embedder) -> None:
    table = static.model_dir / TABLE_FILE
    ident = static.identity
    assert ident["name"] == STATIC_MODEL_NAME and ident["dimension"] == 256
    assert ident["onnx_sha256"] == hashlib.sha256(table.read_bytes()).hexdigest()
    # same tokenizer files as the default model: the same token ids
    assert ident["tokenizer_sha256"] == Embedder.get().identity["tokenizer_sha256"]


def test_l3_loads_and_matches_its_packaged_pooling() -> None:
    """int8 L3 through fastembed (mean pooling, our tokenizer) against the package's own float32
    graph's pooled output fed the same token ids: the ids and the pooling are the model's."""
    import importlib.metadata

    import onnxruntime as ort
    from tokenizers import Tokenizer

    from schemarag.runtime.core.embedding.model_catalog import L3_DISTRIBUTION, L3_ONNX

    e = Embedder.get(ModelSpec(name="minilm-l3"))
    assert e.identity["name"] == L3_MODEL_NAME and e.dimension == 384
    texts = [*SIMILAR, UNRELATED]
    v = e.query_embed(texts)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    assert _cos(v, 0, 1) > _cos(v, 0, 2) + 0.2
    src = importlib.metadata.distribution(L3_DISTRIBUTION).locate_file(L3_ONNX)
    session = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(REPO / "runtime/core/embedding/model/tokenizer.json"))
    tok.no_padding()
    for text, got in zip(texts, v, strict=True):
        ids = np.array([tok.encode(text).ids], dtype=np.int64)
        pooled = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[3][0]
        assert float(got @ (pooled / np.linalg.norm(pooled))) > 0.97  # int8 vs float32 weights


def test_unknown_model_name_names_the_choices() -> None:
    with pytest.raises(EmbeddingModelError) as info:
        Embedder.get(ModelSpec(name="BAAI/bge-small-en-v1.5"))
    msg = str(info.value)
    assert "BAAI/bge-small-en-v1.5" in msg and "minilm-l6-static" in msg and "minilm-l3" in msg


def test_index_is_queried_with_the_model_it_was_built_with(tmp_path: Path, static: Embedder) -> None:
    """``schemarag build --model minilm-l6-static``: the manifest names the static model, a plain
    ``Retriever.open`` embeds with it, and pinning another model is a mismatch naming both."""
    data = write_chain_data(tmp_path / "schemas")
    arts = tmp_path / "artifacts"
    args = ["build", "-q", "--data", str(data), "--artifacts", str(arts), "--model", "minilm-l6-static"]
    assert main(args) == 0
    r = Retriever.open("chain", artifacts=arts)
    assert r.embedder is static
    assert r.artifact.manifest["model"] == static.identity
    res = r.search("Which parcel has this courier tracking number?", top_k=1, relevance_threshold=0.0)
    assert res.chunks[0].chunk.table == "a"
    assert r.calibration == STATIC_CALIBRATION  # its cosines sit higher than MiniLM-L6's
    with pytest.raises(ManifestMismatchError) as info:
        Retriever.open("chain", artifacts=arts, model=ModelSpec(name="minilm-l6"))
    assert STATIC_MODEL_NAME in str(info.value) and DEFAULT_MODEL_NAME in str(info.value)
