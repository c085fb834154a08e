"""Losses of a fitted tree's nodes on given data (held-out folds, validation sets), the raw
material of reduced-error pruning and of cross-validated alpha choice.

Every node is scored as if it were a leaf: for classifiers the weight of the cases it would
misclassify (or their cost under a misclassification cost matrix), for regressors the
weighted sum of squared errors around its value. The loss of any pruned subtree is then the
sum over its leaves (see :func:`~treelearn.pruning.cost_complexity.sequence_errors`). A case
split fractionally over several branches (missing value at a C4.5 node) counts with its share
at each node, so for such trees this is the expected loss of the leaves a case reaches.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from .._tree import Tree, expected_costs


def tree_node_losses(tree: Tree, X, codes=None, y=None, w=None, cost=None) -> np.ndarray:
    """Loss of every node of ``tree`` as a leaf; shape (node_count,).

    ``X`` is encoded (what the tree routes). Classification: ``codes`` are class codes in the
    tree's value columns, ``-1`` for a class the tree never saw (always an error);
    regression: ``y`` the targets. ``w``: case weights (default ones).
    """
    n = X.shape[0]
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    value = tree.value[:, 0, :]
    nodes = np.arange(tree.node_count)
    if codes is not None:
        K = value.shape[1]
        stats = np.zeros((n, K + 1))
        known = codes >= 0
        stats[np.flatnonzero(known), codes[known]] = w[known]
        stats[~known, K] = w[~known]
        acc = tree.node_sums(X, stats)
        if cost is not None:
            if (~known).any():
                raise ValueError("y holds classes the model never saw; their "
                                 "misclassification cost is undefined.")
            per_pred = acc[:, :K] @ cost
            return per_pred[nodes, np.argmin(expected_costs(value, cost), axis=1)]
        return acc.sum(axis=1) - acc[nodes, np.argmax(value, axis=1)]
    y = np.asarray(y, dtype=np.float64)
    acc = tree.node_sums(X, np.column_stack([w, w * y, w * y * y]))
    v = value[:, 0]
    return np.maximum(acc[:, 2] - 2.0 * v * acc[:, 1] + v * v * acc[:, 0], 0.0)


def node_losses(est, X, y, sample_weight=None) -> np.ndarray:
    """:func:`tree_node_losses` of a fitted estimator on raw ``(X, y)``."""
    Xe = est._validate_X_predict(X)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != Xe.shape[0]:
        raise ValueError(f"y must be 1-d with one entry per row of X ({Xe.shape[0]}); got "
                         f"shape {y.shape}.")
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    if is_classifier(est):
        labels = est.classes_
        pos = np.clip(np.searchsorted(labels, y), 0, labels.shape[0] - 1)
        codes = np.where(labels[pos] == y, pos, -1)
        return tree_node_losses(est.tree_, Xe, codes=codes, w=sample_weight,
                                cost=getattr(est, "cost_matrix_", None))
    return tree_node_losses(est.tree_, Xe, y=y, w=sample_weight)
