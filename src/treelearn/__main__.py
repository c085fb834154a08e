"""``python -m treelearn``: the same as the ``treelearn`` command."""

from treelearn.cli import run

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in tests
    run()
