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


def per_artifact(compute: Callable[..., T]) -> Callable[..., T]:
    """Memoize ``compute(art, *args)`` per artifact object (weak-keyed) and hashable ``args``
    (the ranking config's values that shape the derived structure, e.g. a family's minimum size)."""
    cache: weakref.WeakKeyDictionary[Any, dict[tuple, T]] = weakref.WeakKeyDictionary()

    @functools.wraps(compute)
    def cached(art: Any, *args: Any) -> T:
        with contextlib.suppress(KeyError, TypeError):
            return cache[art][args]
        value = compute(art, *args)
        with contextlib.suppress(TypeError):  # not weak-referenceable: just do not cache
            cache.setdefault(art, {})[args] = value
        return value

    return cached
