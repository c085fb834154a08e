"""Pruning: functions that map a fitted :class:`~treelearn._tree.Tree` to a smaller one.

* :mod:`~treelearn.pruning.cost_complexity`: the weakest-link path (scikit-learn's with
  ``risk="impurity"``, rpart's with ``"misclassification"``), rpart's CP table.
* :class:`Pruner`: walk that path forward and back, cost-complexity curves, estimators out.
* :func:`choose_alpha` / :class:`CVPruning`: alpha by cross-validation, rules "min" / "1se".
* :func:`reduced_error_prune`, :func:`pessimistic_prune` (C4.5, :func:`u_cf`),
  :func:`mdl_prune`, and C4.5's rule post-pruning :class:`RuleSet` / :func:`extract_rules`.

Estimators run them through ``fit`` with ``prune=...``.
"""

from .cost_complexity import CostComplexityPath, cost_complexity_path, prune_to_alpha
from .cv import CVPruning, choose_alpha
from .mdl import description_length, mdl_prune
from .pessimistic import pessimistic_prune, u_cf
from .pruner import Pruner
from .reduced_error import reduced_error_prune
from .rules import RuleSet, extract_rules

__all__ = [
    "CVPruning",
    "CostComplexityPath",
    "Pruner",
    "RuleSet",
    "choose_alpha",
    "cost_complexity_path",
    "description_length",
    "extract_rules",
    "mdl_prune",
    "pessimistic_prune",
    "prune_to_alpha",
    "reduced_error_prune",
    "u_cf",
]
