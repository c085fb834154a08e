"""Pruning: functions that map a fitted :class:`~treelearn._tree.Tree` to a smaller one."""

from .cost_complexity import CostComplexityPath, cost_complexity_path, prune_to_alpha

__all__ = ["CostComplexityPath", "cost_complexity_path", "prune_to_alpha"]
