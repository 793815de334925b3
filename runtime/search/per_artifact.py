"""Values derived once per opened index version, never per request.

The ranking needs a few things computed from an :class:`~schemarag.runtime.artifact.reader.IndexArtifact`
that the build did not store (the join graph, table families). They depend on nothing but the
artifact, so they are kept beside it in a weak-keyed cache: a superseded version that the server
drops takes its derived values with it. An object that cannot be weakly referenced is computed
each time rather than kept alive forever.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def per_artifact(compute: Callable[[Any], T]) -> Callable[[Any], T]:
    """Memoize ``compute(art)`` per artifact object (weak-keyed)."""
    cache: weakref.WeakKeyDictionary[Any, T] = weakref.WeakKeyDictionary()

    @functools.wraps(compute)
    def cached(art: Any) -> T:
        with contextlib.suppress(KeyError, TypeError):
            return cache[art]
        value = compute(art)
        with contextlib.suppress(TypeError):  # not weak-referenceable: just do not cache
            cache[art] = value
        return value

    return cached
