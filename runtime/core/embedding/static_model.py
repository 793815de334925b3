"""A static (model2vec-style) encoder distilled from the default MiniLM: a lookup table, no network.

Why: on 2 cores a transformer question embedding costs ~4.5 ms of CPU, most of an HTTP
request. A static model (Tulkens & van Dongen, 2024, "Model2Vec") replaces the transformer
by one row per vocabulary token; a text is its token ids -> mean of their rows -> L2
normalised, ~0.05 ms. The ``model2vec`` package's ``distill`` needs torch + transformers,
so the same recipe runs here on the ONNX session schemarag already has:

1. every WordPiece token alone (``[CLS] tok [SEP]``) through the int8 MiniLM-L6, mean-pooled;
2. PCA to :data:`STATIC_DIMENSION` dimensions (numpy SVD, sign-fixed so it is deterministic);
3. SIF weighting by token rank, ``w = 1e-4 / (1e-4 + p(rank))`` with Zipf ``p ∝ 1/rank``
   (BERT's vocabulary lists words roughly by frequency after its special and single-character
   entries), so frequent words count less in the mean.

The table is derived once per machine (like the int8 rewrite: ~10 s on 2 cores), written
atomically under the system temp directory, and memory-mapped afterwards; its SHA-256 is the
identity's ``onnx_sha256``. Querying a static index needs numpy and ``tokenizers`` only when the
table is already there (a pre-derived folder can be shipped with ``ModelSpec(model_dir=...)``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

from schemarag.runtime.core.embedding.model_files import TOKENIZER_DIR, default_model_dir, file_sha256
from schemarag.runtime.core.errors import EmbeddingModelError

STATIC_MODEL_NAME = "schemarag/all-MiniLM-L6-v2-static256"
STATIC_DIMENSION = 256
TABLE_FILE = "token_vectors.npy"
# Bump when the recipe changes: part of the folder's name, and the table's checksum changes too.
STATIC_RECIPE = "m2v-mean-pca256-sif1e-4-v1"
SIF_COEFFICIENT = 1e-4
_BATCH = 512
_lock = threading.Lock()


def _token_rows(onnx: Path, vocab_size: int, cls_id: int, sep_id: int) -> np.ndarray:
    """Mean-pooled output of ``[CLS] tok [SEP]`` for every token id (all length 3: no padding)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    session = ort.InferenceSession(str(onnx), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    out = np.empty((vocab_size, 384), dtype=np.float32)
    for start in range(0, vocab_size, _BATCH):
        ids = np.arange(start, min(start + _BATCH, vocab_size), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feed = {"input_ids": batch, "attention_mask": np.ones_like(batch)}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(batch)
        hidden = session.run(None, feed)[0]
        if out.shape[1] != hidden.shape[2]:
            out = np.empty((vocab_size, hidden.shape[2]), dtype=np.float32)
        out[start : start + len(ids)] = hidden.mean(axis=1)
    return out


def distill(onnx: Path, tokenizer_json: Path, dimension: int = STATIC_DIMENSION) -> np.ndarray:
    """The token table (vocab_size x dimension, float32) of the recipe in the module docstring."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_json))
    vocab_size = tok.get_vocab_size()
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise EmbeddingModelError(
            f"{tokenizer_json}: no [CLS]/[SEP] token; a BERT WordPiece tokenizer is needed"
        )
    rows = _token_rows(onnx, vocab_size, cls_id, sep_id).astype(np.float64)
    centred = rows - rows.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:dimension]
    # svd_flip: the largest-magnitude loading of each component positive, so signs are stable
    signs = np.sign(comps[np.arange(len(comps)), np.abs(comps).argmax(axis=1)])
    comps *= signs[:, None]
    table = centred @ comps.T
    inv_rank = 1.0 / np.arange(1, vocab_size + 1)
    proba = inv_rank / inv_rank.sum()
    table *= (SIF_COEFFICIENT / (SIF_COEFFICIENT + proba))[:, None]
    return table.astype(np.float32)


def static_model_dir() -> Path:
    """The folder holding :data:`TABLE_FILE`, derived once per machine from the default model."""
    source = default_model_dir() / "model.onnx"
    ident = f"{file_sha256(source)}|{STATIC_RECIPE}|{STATIC_DIMENSION}"
    tag = hashlib.sha256(ident.encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"schemarag-static-{tag}"
    if (target / TABLE_FILE).is_file():
        return target
    with _lock:
        if (target / TABLE_FILE).is_file():
            return target
        staging = Path(tempfile.mkdtemp(prefix=f"schemarag-static-{tag}.", dir=tempfile.gettempdir()))
        try:
            np.save(staging / TABLE_FILE, distill(source, TOKENIZER_DIR / "tokenizer.json"))
            os.replace(staging, target)
        except OSError:  # another process published an equivalent folder first
            shutil.rmtree(staging, ignore_errors=True)
            if not (target / TABLE_FILE).is_file():
                raise EmbeddingModelError(
                    f"cannot publish the static model folder {target}; remove it"
                ) from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


class StaticEncoder:
    """Token ids -> mean of table rows -> L2 normalised (zero vector for a text with no tokens)."""

    def __init__(self, table_path: Path, tokenizer_json: Path) -> None:
        from tokenizers import Tokenizer

        try:
            self.table = np.load(table_path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise EmbeddingModelError(
                f"{table_path}: unreadable static token table ({exc}); remove it"
            ) from None
        self.tokenizer = Tokenizer.from_file(str(tokenizer_json))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        if self.table.ndim != 2 or self.table.shape[0] != self.tokenizer.get_vocab_size():
            raise EmbeddingModelError(
                f"{table_path}: table shape {self.table.shape} does not match the tokenizer's "
                f"{self.tokenizer.get_vocab_size()} tokens; remove the folder to re-derive it"
            )

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.table.shape[1]), dtype=np.float32)
        for i, enc in enumerate(self.tokenizer.encode_batch(texts, add_special_tokens=False)):
            if enc.ids:
                out[i] = self.table[enc.ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
