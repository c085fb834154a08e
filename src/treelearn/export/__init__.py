"""Reading a tree: exporters read only the flat :class:`~treelearn._tree.Tree`.

The pruning pictures (:mod:`treelearn.export.plot_pruning`) import matplotlib only when called.
"""

from .plot_pruning import plot_cost_complexity, plot_cv_pruning, plot_pruned_tree, plot_tree_size
from .text import export_text

__all__ = ["export_text", "plot_cost_complexity", "plot_cv_pruning", "plot_pruned_tree",
           "plot_tree_size"]
