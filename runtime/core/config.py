"""The query side's settings from the environment: one typed pydantic-settings model.

Every ``SCHEMARAG_*`` / retrieval variable the runtime reads is a field of
:class:`RuntimeSettings` (the LLM client has its own model, ``querygen.llm_settings``; the
server its own, ``serve.settings``). An empty variable counts as unset; a bad value is one
:class:`~schemarag.runtime.core.errors.ConfigError` naming the variable, the value and the fix.
Per-call arguments win over the environment, which wins over the defaults.

Parsing is memoised on the variables' raw values, so reading the settings on every request
costs a dozen ``os.environ`` lookups, and a changed variable is seen at once.

>>> s = runtime_settings({"SCHEMARAG_REFRESH_SECONDS": "0.5", "ENABLE_DOC_RETRIEVAL": "off"})
>>> s.schemarag_refresh_seconds, s.enable_doc_retrieval, s.retrieval_table_threshold
(0.5, False, 10)
>>> runtime_settings({"DOC_RETRIEVAL_TOP_K": "0"})
Traceback (most recent call last):
...
schemarag.runtime.core.errors.ConfigError: DOC_RETRIEVAL_TOP_K='0' is too small; use a value >= 1
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemarag.runtime.core.errors import ConfigError

DEFAULT_TOP_K = 5
DEFAULT_THRESHOLD = 0.3
DEFAULT_TABLE_THRESHOLD = 10


class RuntimeSettings(BaseSettings):
    """Field name = variable name, lower-cased (``schemarag_data`` <- ``$SCHEMARAG_DATA``)."""

    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", frozen=True)

    schemarag_data: str | None = None  # schemas folder (default data/schemas)
    schemarag_artifacts: str | None = None  # artifacts folder (default artifacts)
    schemarag_database: str | None = None  # the API's default database
    schemarag_datasources: str | None = None  # datasources.yaml of the build's live sources
    schemarag_refresh_seconds: float = Field(2.0, ge=0)  # how often a retriever stats CURRENT
    schemarag_blas_threads: int = Field(1, ge=0)  # 0 = leave OpenBLAS alone
    schemarag_max_open_indexes: int = Field(32, ge=1)  # retrievers kept mapped per process
    # the model a build embeds with (a model_catalog name or alias; default all-MiniLM-L6-v2);
    # the query side always loads the model each index's manifest names
    schemarag_embedding_model: str | None = None
    # what a build embeds column chunks with: full (default), short, bm25 (assets/lib/embed_plan.py)
    schemarag_column_vectors: str | None = None
    # dbt layer prior: consumer_first (marts/reports before staging/sources), off, or
    # layer=weight overrides (runtime.search.layer_prior)
    schemarag_layer_prior: str = "consumer_first"
    doc_retrieval_top_k: int | None = Field(None, ge=1)
    doc_relevance_threshold: float | None = Field(None, ge=0.0, le=1.0)
    enable_doc_retrieval: bool = True
    retrieval_table_threshold: int = Field(DEFAULT_TABLE_THRESHOLD, ge=0)


class _GivenOnly(RuntimeSettings):
    """The same model fed only the values passed in: BaseSettings' ``__init__`` would otherwise
    merge the process environment into them (``model_validate`` runs it too)."""

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, **_other_sources):  # type: ignore[override]
        return (init_settings,)


VARIABLES = tuple(name.upper() for name in RuntimeSettings.model_fields)


def runtime_settings(env: Mapping[str, str] | None = None) -> RuntimeSettings:
    """The settings from the process environment, or from ``env`` only (tests, embedders)."""
    if env is None:
        return _from_process(tuple(os.environ.get(name) for name in VARIABLES))
    return _validate({name: env.get(name) for name in VARIABLES})


@lru_cache(maxsize=8)
def _from_process(raw: tuple[str | None, ...]) -> RuntimeSettings:
    # The same path as an explicit mapping, so a whitespace-only variable also counts as unset
    # (pydantic-settings' ``env_ignore_empty`` only drops "").
    return _validate(dict(zip(VARIABLES, raw, strict=True)))


def _validate(raw: Mapping[str, str | None]) -> RuntimeSettings:
    values = {name.lower(): v for name, v in raw.items() if v is not None and v.strip()}
    try:
        return _GivenOnly(**values)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None


_FIX = {
    "bool_parsing": "is not a boolean; use true or false",
    "int_parsing": "is not an integer; use a whole number",
    "int_from_float": "is not an integer; use a whole number",
    "float_parsing": "is not a number",
}


def _describe(exc: ValidationError) -> str:
    """One line per bad variable: ``NAME='value' <what is wrong and the fix>``."""
    parts = []
    for err in exc.errors():
        name = str(err["loc"][0]).upper() if err["loc"] else "?"
        ctx: dict[str, Any] = err.get("ctx") or {}
        if err["type"] in _FIX:
            fix = _FIX[err["type"]]
        elif "ge" in ctx:
            fix = f"is too small; use a value >= {ctx['ge']}"
        elif "le" in ctx:
            fix = f"is out of range; use a value <= {ctx['le']}"
        else:
            fix = f"is invalid: {err['msg']}"
        parts.append(f"{name}={err.get('input')!r} {fix}")
    return "; ".join(parts)


@dataclass(frozen=True)
class RetrievalSettings:
    top_k: int
    relevance_threshold: float

    @classmethod
    def resolve(cls, top_k: int | None = None, relevance_threshold: float | None = None) -> RetrievalSettings:
        """``top_k``: argument, ``$DOC_RETRIEVAL_TOP_K``, 5.

        Threshold: argument, ``$DOC_RELEVANCE_THRESHOLD``, 0.3."""
        k: int | None = top_k
        thr: float | None = relevance_threshold
        if k is None or thr is None:
            env = runtime_settings()
            k = env.doc_retrieval_top_k if k is None else k
            thr = env.doc_relevance_threshold if thr is None else thr
        k = DEFAULT_TOP_K if k is None else int(k)
        thr = DEFAULT_THRESHOLD if thr is None else float(thr)
        if k < 1:
            raise ConfigError(f"top_k must be >= 1, got {k}")
        if not 0.0 <= thr <= 1.0:
            raise ConfigError(f"relevance threshold must be within [0, 1], got {thr}")
        return cls(top_k=k, relevance_threshold=thr)
