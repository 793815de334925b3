"""The runtime's environment settings: one typed model, errors that name the variable and value."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemarag.runtime.core.config import VARIABLES, RetrievalSettings, runtime_settings
from schemarag.runtime.core.errors import ConfigError
from schemarag.runtime.core.paths import artifacts_dir, data_dir


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_defaults_without_variables(env: pytest.MonkeyPatch) -> None:
    s = runtime_settings()
    assert (s.schemarag_refresh_seconds, s.schemarag_blas_threads, s.schemarag_max_open_indexes) == (
        2.0,
        1,
        32,
    )
    assert (s.enable_doc_retrieval, s.retrieval_table_threshold, s.doc_retrieval_top_k) == (True, 10, None)
    assert data_dir() == Path("data/schemas") and artifacts_dir() == Path("artifacts")


def test_process_environment_is_read_and_changes_are_seen(env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env.setenv("SCHEMARAG_ARTIFACTS", str(tmp_path))
    env.setenv("SCHEMARAG_REFRESH_SECONDS", "0.25")
    assert artifacts_dir() == tmp_path
    assert artifacts_dir("explicit") == Path("explicit")  # the argument wins
    assert runtime_settings().schemarag_refresh_seconds == 0.25
    env.setenv("SCHEMARAG_REFRESH_SECONDS", "7")
    assert runtime_settings().schemarag_refresh_seconds == 7.0


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("SCHEMARAG_REFRESH_SECONDS", "soon", "SCHEMARAG_REFRESH_SECONDS='soon' is not a number"),
        ("SCHEMARAG_REFRESH_SECONDS", "-1", "SCHEMARAG_REFRESH_SECONDS='-1' is too small; use a value >= 0"),
        ("SCHEMARAG_BLAS_THREADS", "1.5", "SCHEMARAG_BLAS_THREADS='1.5' is not an integer"),
        ("SCHEMARAG_MAX_OPEN_INDEXES", "0", "SCHEMARAG_MAX_OPEN_INDEXES='0' is too small"),
        (
            "ENABLE_DOC_RETRIEVAL",
            "perhaps",
            "ENABLE_DOC_RETRIEVAL='perhaps' is not a boolean; use true",
        ),
        ("DOC_RELEVANCE_THRESHOLD", "2", "DOC_RELEVANCE_THRESHOLD='2' is out of range; use a value <= 1"),
    ],
)
def test_bad_value_names_variable_and_value(
    env: pytest.MonkeyPatch, name: str, value: str, fragment: str
) -> None:
    env.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        runtime_settings()
    assert fragment in str(info.value)
    with pytest.raises(ConfigError, match=name):
        RetrievalSettings.resolve() if name.startswith("DOC_") else data_dir()


def test_blank_is_unset_and_explicit_mapping_ignores_the_process(env: pytest.MonkeyPatch) -> None:
    env.setenv("DOC_RETRIEVAL_TOP_K", "  ")
    env.setenv("RETRIEVAL_TABLE_THRESHOLD", "3")
    assert runtime_settings().doc_retrieval_top_k is None
    assert runtime_settings().retrieval_table_threshold == 3
    assert runtime_settings({}).retrieval_table_threshold == 10  # only the mapping counts
    assert runtime_settings({"RETRIEVAL_TABLE_THRESHOLD": "4"}).retrieval_table_threshold == 4


def test_several_bad_values_are_reported_together(env: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as info:
        runtime_settings({"SCHEMARAG_BLAS_THREADS": "x", "DOC_RETRIEVAL_TOP_K": "0"})
    assert "SCHEMARAG_BLAS_THREADS='x'" in str(info.value) and "DOC_RETRIEVAL_TOP_K='0'" in str(info.value)
