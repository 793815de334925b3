"""Which embedding model a published index is queried with, and where that model's cosines lie.

The query side of the catalogue (:mod:`schemarag.runtime.core.embedding.model_catalog`): the
catalogue only knows the models and their folders (the build uses it too, so it stays in the
core and reads no artifact), while this module reads an index's manifest to pin its encoder and
holds each model's relevance :class:`~schemarag.runtime.search.scoring.Calibration`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from schemarag.runtime.artifact.manifest import read_manifest
from schemarag.runtime.artifact.reader import current_key
from schemarag.runtime.core.embedding.embedder import ModelSpec
from schemarag.runtime.core.embedding.model_catalog import choices, known_model
from schemarag.runtime.core.embedding.static_model import STATIC_MODEL_NAME
from schemarag.runtime.core.errors import ArtifactError, EmbeddingModelError
from schemarag.runtime.search.scoring import DEFAULT_CALIBRATION, Calibration

# A static model's cosines sit higher: mean-pooled token rows share a common direction. On the
# bundled sample questions (data/questions, not BIRD), off-topic question/chunk pairs have a
# 95th-percentile cosine of 0.404 (MiniLM-L6: 0.113) and on-topic questions a median top-1
# cosine of 0.741 (MiniLM-L6: 0.618); the L6 floor (0.15) and full (0.70) moved by those
# differences give 0.44 and 0.82 (docs/embedding-model.md, "Model comparison").
STATIC_CALIBRATION = replace(DEFAULT_CALIBRATION, cos_floor=0.44, cos_full=0.82)

# catalogue name -> where its cosines of unrelated and of matching text lie; a catalogue model
# not listed here (MiniLM-L6, MiniLM-L3) uses the default's
CALIBRATIONS: dict[str, Calibration] = {STATIC_MODEL_NAME: STATIC_CALIBRATION}


def calibration_for(name: str | None) -> Calibration:
    """The relevance calibration of a catalogue model (the default's for any other model)."""
    known = known_model(name) if name else None
    return CALIBRATIONS.get(known.name, DEFAULT_CALIBRATION) if known else DEFAULT_CALIBRATION


def index_model_spec(db_root: Path, spec: ModelSpec) -> ModelSpec:
    """``spec`` pinned to the model the published index under ``db_root`` was built with, when
    ``spec.name`` is None: the query side then loads that index's encoder, whatever the build's
    setting was. An unpublished or unreadable index leaves ``spec`` as is (opening it reports why)."""
    if spec.name is not None:
        return spec
    try:
        key = current_key(db_root)
        if key is None:
            return spec
        info, _ = read_manifest(db_root / key)
    except ArtifactError:
        return spec
    if known_model(info.model.name) is None and spec.model_dir is None:
        raise EmbeddingModelError(
            f"{db_root / key}: built with embedding model {info.model.name!r}, which is not in the "
            f"catalogue ({choices()}); open it with model=ModelSpec(name=..., model_dir=<its folder>)"
        )
    return replace(spec, name=info.model.name, dimension=spec.dimension or info.model.dimension)
