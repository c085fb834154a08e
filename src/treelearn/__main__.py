"""``python -m treelearn``: the same as the ``treelearn`` command."""

import sys

from treelearn.cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in tests
    sys.exit(main())
