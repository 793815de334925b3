"""``python -m schemarag``: the same as the ``schemarag`` console script."""

import sys

from schemarag.cli import main

sys.exit(main())
