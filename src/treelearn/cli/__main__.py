"""``python -m treelearn.cli``: the ``treelearn`` command."""

from . import run

run()
