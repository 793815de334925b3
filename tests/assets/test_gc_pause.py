"""schemarag.assets.lib.gc_pause: the collector is paused inside and restored after, always."""

from __future__ import annotations

import gc

import pytest

from schemarag.assets.lib.gc_pause import paused_gc, without_gc


def test_nested_pauses_resume_at_the_outermost() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_exception_still_resumes_the_collector() -> None:
    @without_gc
    def fails() -> None:
        assert not gc.isenabled()
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        fails()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
