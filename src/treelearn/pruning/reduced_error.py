"""Reduced-error pruning (Quinlan 1987): with a validation set, replace a subtree by a leaf
whenever that does not increase the validation error.

Bottom-up in one pass: a node's validation loss as a leaf (misclassified weight, or cost;
squared error for regressors; see :mod:`treelearn.pruning._loss`) is compared with the loss of
its already pruned subtree, and ties prune. The result is the smallest subtree of least
validation loss (Esposito, Malerba & Semeraro 1997), so pruning never lowers validation
accuracy. Nodes no validation case reaches have loss 0 either way and are pruned: the
validation set holds no evidence for them.
"""

from __future__ import annotations

from .._tree import Tree
from ._bottom_up import collapse_bottom_up
from ._loss import node_losses


def reduced_error_prune(estimator, X_val, y_val, sample_weight=None) -> Tree:
    """The pruned tree of a fitted treelearn ``estimator`` (which is not modified).

    Parameters
    ----------
    estimator : fitted treelearn estimator
    X_val, y_val : validation data (not used to grow the tree)
    sample_weight : array-like, optional
        Weights of the validation cases.

    Returns
    -------
    Tree
        Pruned; ``Pruner``-free way to an estimator: ``copy.deepcopy(estimator)`` and set its
        ``tree_``, or fit with ``prune="reduced_error"``.
    """
    loss = node_losses(estimator, X_val, y_val, sample_weight)
    keep_leaf, _ = collapse_bottom_up(estimator.tree_, loss)
    return estimator.tree_.subtree(keep_leaf)
