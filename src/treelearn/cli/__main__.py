"""``python -m treelearn.cli``: the ``treelearn`` command."""

import sys

from . import main

sys.exit(main())
