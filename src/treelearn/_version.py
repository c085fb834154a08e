"""The version of treelearn (read by pyproject.toml, written into exported files)."""

__version__ = "0.1.0"
