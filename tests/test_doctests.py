"""Run the docstring examples of every runtime module (they are part of the public docs).

Collected explicitly rather than with ``--doctest-modules`` so pytest never imports the
per-directory ``conftest.py`` files a second time as plain modules.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import runtime

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(runtime.__path__, prefix="runtime.")
    if not m.name.endswith("__main__")
)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {module_name}"
