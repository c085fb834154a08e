"""MDL pruning after Mehta, Rissanen & Agrawal (1995), "MDL-based decision tree pruning"
(KDD-95; the pruning of SLIQ): keep a split only if it shortens the description of the tree
plus the class labels of the training cases.

Encoding, in bits, for a node with ``n`` cases (training weights) and class counts ``n_i``
over ``k`` classes:

* every node: 1 bit (leaf or split);
* a leaf's class labels, Rissanen's stochastic complexity of a multinomial sequence:
  ``sum_i n_i log2(n / n_i) + (k - 1) / 2 * log2(n / 2) + log2(pi ** (k / 2) / Gamma(k / 2))``
  (the middle term is taken as 0 for ``n < 2``, where the asymptotic formula goes negative);
* a split: ``log2(n_features)`` to name the feature, plus the test's parameters:
  ``log2(n - 1)`` for a threshold (at most ``n - 1`` cut points), ``log2(2 ** (L - 1) - 1)``
  for a subset of the ``L`` levels routed at a binary categorical node, nothing for a multiway
  node (its branches follow from the feature).

Bottom-up, a subtree becomes a leaf when ``1 + leaf bits <= 1 + split bits + children's
bits`` (their "full" pruning strategy).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from .._tree import Tree
from ._bottom_up import check_classification, collapse_bottom_up

LOG2 = np.log(2.0)


def leaf_bits(tree: Tree) -> np.ndarray:
    """Bits to describe every node as a leaf: 1 (node type) + its cases' class labels."""
    check_classification(tree, "MDL pruning")
    n = tree.weighted_n_node_samples
    counts = tree.value[:, 0, :] * n[:, None]
    k = tree.value.shape[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(counts > 0, counts * np.log2(n[:, None] / counts), 0.0)
    data = terms.sum(axis=1)
    param = np.where(n >= 2, (k - 1) / 2.0 * np.log2(np.maximum(n, 2.0) / 2.0), 0.0)
    const = (k / 2.0 * np.log(np.pi) - gammaln(k / 2.0)) / LOG2
    return 1.0 + data + param + const


def split_bits(tree: Tree) -> np.ndarray:
    """Bits to describe every internal node's test (1 for the node type included)."""
    n = tree.weighted_n_node_samples
    out = np.zeros(tree.node_count)
    inner = np.flatnonzero(tree.children_left != -1)
    name = np.log2(max(tree.n_features, 1))
    for i in inner:
        levels = tree.cat_branch[tree.cat_ptr[i]:tree.cat_ptr[i + 1]]
        if levels.size == 0:
            extra = np.log2(max(n[i] - 1.0, 1.0))
        elif tree.branch_ptr[i + 1] - tree.branch_ptr[i] > 2:
            extra = 0.0
        else:
            m = int((levels >= 0).sum())
            extra = (m - 1) + np.log2(max(1.0 - 2.0 ** (1 - m), 2.0 ** -52)) if m > 1 else 0.0
        out[i] = 1.0 + name + extra
    return out


def description_length(tree: Tree) -> float:
    """Bits of the whole tree plus the training labels under the encoding above."""
    leaf = tree.children_left == -1
    return float(leaf_bits(tree)[leaf].sum() + split_bits(tree)[~leaf].sum())


def mdl_prune(tree: Tree) -> Tree:
    """The tree after MDL pruning. Never adds nodes; never lengthens the description."""
    keep_leaf, _ = collapse_bottom_up(tree, leaf_bits(tree), split_bits(tree))
    return tree.subtree(keep_leaf)
