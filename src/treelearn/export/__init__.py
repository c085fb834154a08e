"""Reading a tree: exporters read only the flat :class:`~treelearn._tree.Tree`."""

from .text import export_text

__all__ = ["export_text"]
