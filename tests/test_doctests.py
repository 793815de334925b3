"""Run the docstring examples of every runtime, build-library and tools module (public docs).

Collected explicitly rather than with ``--doctest-modules`` so pytest never imports the
per-directory ``conftest.py`` files a second time as plain modules.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import schemarag
import schemarag.assets.lib
import schemarag.runtime
import schemarag.tools

PACKAGES = (schemarag.runtime, schemarag.assets.lib, schemarag.tools)
MODULES = sorted(
    {"schemarag", "schemarag._extras", "schemarag.cli"}
    | {
        m.name
        for package in PACKAGES
        for m in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}.")
        if not m.name.endswith("__main__")
    }
)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name: str) -> None:
    module = importlib.import_module(module_name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {module_name}"
