"""Map the design card's top-level folders into one import root, ``schemarag``.

``runtime/`` installs as ``schemarag.runtime``, ``assets/`` as ``schemarag.assets``,
``pipelines/`` as ``schemarag.pipelines`` and ``tools/`` as ``schemarag.tools``: nothing installs
a generic top-level ``runtime``. Subpackages are found here, so the list never goes stale; wheel
and editable installs both honour ``package_dir``. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

ROOTS = {
    "schemarag": "schemarag",
    "schemarag.runtime": "runtime",
    "schemarag.assets": "assets",
    "schemarag.pipelines": "pipelines",
    "schemarag.tools": "tools",
}

packages = []
for name, folder in ROOTS.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]

setup(
    packages=packages,
    package_dir=ROOTS,
    package_data={"schemarag.runtime": ["py.typed", "search/model/*"]},
)
