"""One bottom-up pass shared by reduced-error, pessimistic and MDL pruning.

Each of them gives every node a cost as a leaf and keeps a split only when the cost of the
subtree below it (plus, for MDL, the cost of describing the split) is lower. Children come
after their parents in the flat tree, so one backward pass over the nodes sees every subtree
already pruned.
"""

from __future__ import annotations

import numpy as np

from .._tree import Tree


def check_classification(tree: Tree, what: str) -> None:
    """Raise unless ``tree`` can be a classification tree (a regression tree has one value
    column; so has a classifier fitted on one class, but that tree is a single leaf)."""
    if tree.n_classes[0] < 2 and tree.node_count > 1:
        raise ValueError(f"{what} needs a classification tree.")


def collapse_bottom_up(tree: Tree, leaf_cost: np.ndarray, split_cost=None,
                       slack: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Nodes to make leaves, and the cost of each node's pruned subtree.

    Node ``t`` becomes a leaf when ``leaf_cost[t] <= split_cost[t] + sum of its pruned
    children's costs + slack`` (ties prune: the smaller tree wins).
    """
    ptr, kids = tree.branch_ptr, tree.branch_child
    n = tree.node_count
    extra = np.zeros(n) if split_cost is None else np.asarray(split_cost, dtype=np.float64)
    sub = np.asarray(leaf_cost, dtype=np.float64).copy()
    keep_leaf = np.zeros(n, dtype=bool)
    for i in range(n - 1, -1, -1):
        b0, b1 = ptr[i], ptr[i + 1]
        if b0 == b1:
            continue
        below = extra[i] + sub[kids[b0:b1]].sum()
        if leaf_cost[i] <= below + slack:
            keep_leaf[i] = True
        else:
            sub[i] = below
    return keep_leaf, sub
