"""Map the design card's top-level folders into one import root, ``schemarag``.

``src/schemarag/`` (the facade and CLI) installs as ``schemarag``, ``runtime/`` as
``schemarag.runtime``, ``assets/`` as ``schemarag.assets``, ``pipelines/`` as
``schemarag.pipelines`` and ``tools/`` as ``schemarag.tools``: nothing installs a generic top-level
``runtime``, and no folder named ``schemarag`` sits in the repository root, where it would shadow
the installed package for any interpreter started there (``python -c "from schemarag import ..."``
in a Dockerfile's ``WORKDIR``). Subpackages are found here, so the list never goes stale; wheel and
editable installs both honour ``package_dir``. Everything else is in pyproject.toml.

The build's scratch folders (``build/``, the ``.egg-info``) go to a fresh temporary folder that is
removed when the build ends, so ``pip install .`` leaves the tree as it found it and can never pick
up a stale module from an earlier build.
"""

import atexit
import shutil
import tempfile
import warnings
from pathlib import Path

from setuptools import find_packages, setup

ROOTS = {
    "schemarag": "src/schemarag",
    "schemarag.runtime": "runtime",
    "schemarag.assets": "assets",
    "schemarag.pipelines": "pipelines",
    "schemarag.tools": "tools",
}
# Folders of package data without an __init__.py: listed as packages so setuptools installs them
# as data on purpose (otherwise it warns that each is "absent from the packages configuration").
DATA_PACKAGES = {"schemarag.runtime.core.embedding.model": ["*.json", "*.md"]}

packages = [*DATA_PACKAGES]
for name, folder in ROOTS.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]

# An editable install always gets setuptools' "be careful with folders in your working directory
# with the same name as your package" notice. None exists here (that is what src/ is for, and
# `make check-base-install` proves it from the repository root), so the notice is noise in a quiet
# install; every other warning still prints.
warnings.filterwarnings("ignore", message=r"Editable installation\.")

scratch = Path(tempfile.mkdtemp(prefix="schemarag-setup-"))
atexit.register(shutil.rmtree, scratch, ignore_errors=True)

setup(
    packages=packages,
    package_dir=ROOTS,
    package_data={"schemarag.runtime": ["py.typed"], **DATA_PACKAGES},
    options={
        "build": {"build_base": str(scratch / "build")},
        "egg_info": {"egg_base": str(scratch)},
    },
)
