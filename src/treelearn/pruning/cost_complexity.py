"""Minimal cost-complexity (weakest-link) pruning, Breiman et al. (1984), chapter 3.

With ``R(t) = w_t * impurity_t / w_root`` the risk of node ``t`` as a leaf and ``R(T_t)`` the sum of
``R`` over the leaves of the branch below ``t``, the effective alpha of an internal node is
``(R(t) - R(T_t)) / (|leaves(T_t)| - 1)``. Repeatedly collapsing the internal node with the
smallest effective alpha (ties: the lowest node index) gives the nested sequence of subtrees;
``ccp_alpha`` keeps the subtree reached before the first alpha larger than it. This is
scikit-learn's definition, and the path and pruned trees are identical to scikit-learn's.

scikit-learn rescans every internal node after each collapse (quadratic in the tree size); here a
heap keyed on ``(alpha, node)`` with lazy invalidation makes it ``O(n depth log n)`` while giving
the same sequence, because each alpha is recomputed with the same floating-point operations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._config import njit
from .._tree import Tree


@njit
def _hpush(ha, hi, hv, size, a, i, v):
    pos = size
    ha[pos] = a
    hi[pos] = i
    hv[pos] = v
    while pos > 0:
        p = (pos - 1) // 2
        if ha[p] < ha[pos] or (ha[p] == ha[pos] and hi[p] < hi[pos]):
            break
        ha[p], ha[pos] = ha[pos], ha[p]
        hi[p], hi[pos] = hi[pos], hi[p]
        hv[p], hv[pos] = hv[pos], hv[p]
        pos = p
    return size + 1


@njit
def _hpop(ha, hi, hv, size):
    a = ha[0]
    i = hi[0]
    v = hv[0]
    size -= 1
    ha[0] = ha[size]
    hi[0] = hi[size]
    hv[0] = hv[size]
    pos = 0
    while True:
        c = 2 * pos + 1
        if c >= size:
            break
        if c + 1 < size and (ha[c + 1] < ha[c] or (ha[c + 1] == ha[c] and hi[c + 1] < hi[c])):
            c += 1
        if ha[pos] < ha[c] or (ha[pos] == ha[c] and hi[pos] < hi[c]):
            break
        ha[c], ha[pos] = ha[pos], ha[c]
        hi[c], hi[pos] = hi[pos], hi[c]
        hv[c], hv[pos] = hv[pos], hv[c]
        pos = c
    return a, i, v, size


@njit
def weakest_link_sequence(branch_ptr, branch_child, r_node):
    """Collapse order of the weakest-link pruning.

    Returns ``(nodes, alphas, risks, initial_risk)``: at step ``k`` node ``nodes[k]`` is collapsed
    at effective alpha ``alphas[k]``, after which the tree's total leaf risk is ``risks[k]``.
    The last step collapses the root.
    """
    n = branch_ptr.shape[0] - 1
    parent = np.full(n, -1, dtype=np.int64)
    is_leaf = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        is_leaf[i] = branch_ptr[i + 1] == branch_ptr[i]
        for k in range(branch_ptr[i], branch_ptr[i + 1]):
            parent[branch_child[k]] = i
    r_branch = np.zeros(n)
    n_leaves = np.zeros(n, dtype=np.int64)
    # Same summation order as scikit-learn: leaves in index order, each bubbling up.
    for leaf in range(n):
        if not is_leaf[leaf]:
            continue
        r_branch[leaf] = r_node[leaf]
        cur = r_node[leaf]
        j = leaf
        while j != 0:
            p = parent[j]
            r_branch[p] += cur
            n_leaves[p] += 1
            j = p
    n_internal = 0
    for i in range(n):
        if not is_leaf[i]:
            n_internal += 1
    cap = 4 * n + 16
    ha = np.empty(cap)
    hi = np.empty(cap, dtype=np.int64)
    hv = np.empty(cap, dtype=np.int64)
    version = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=np.bool_)
    size = np.int64(0)
    for i in range(n):
        if not is_leaf[i]:
            size = _hpush(ha, hi, hv, size, (r_node[i] - r_branch[i]) / (n_leaves[i] - 1), i,
                          version[i])
    nodes = np.empty(n_internal, dtype=np.int64)
    alphas = np.empty(n_internal)
    risks = np.empty(n_internal)
    initial = r_branch[0]
    step = 0
    stack = np.empty(n, dtype=np.int64)
    while size > 0 and not is_leaf[0]:
        a, i, v, size = _hpop(ha, hi, hv, size)
        if not alive[i] or is_leaf[i] or v != version[i]:
            continue
        # Collapse i: its descendants leave the tree.
        top = 0
        for k in range(branch_ptr[i], branch_ptr[i + 1]):
            stack[top] = branch_child[k]
            top += 1
        while top > 0:
            top -= 1
            j = stack[top]
            alive[j] = False
            if not is_leaf[j]:
                for k in range(branch_ptr[j], branch_ptr[j + 1]):
                    stack[top] = branch_child[k]
                    top += 1
        is_leaf[i] = True
        n_pruned = n_leaves[i] - 1
        n_leaves[i] = 0
        r_diff = r_node[i] - r_branch[i]
        r_branch[i] = r_node[i]
        j = parent[i]
        while j != -1:
            n_leaves[j] -= n_pruned
            r_branch[j] += r_diff
            version[j] += 1
            if size + 1 > ha.shape[0]:
                ha2 = np.empty(2 * ha.shape[0])
                hi2 = np.empty(2 * ha.shape[0], dtype=np.int64)
                hv2 = np.empty(2 * ha.shape[0], dtype=np.int64)
                for q in range(size):
                    ha2[q] = ha[q]
                    hi2[q] = hi[q]
                    hv2[q] = hv[q]
                ha, hi, hv = ha2, hi2, hv2
            size = _hpush(ha, hi, hv, size, (r_node[j] - r_branch[j]) / (n_leaves[j] - 1), j,
                          version[j])
            j = parent[j]
        nodes[step] = i
        alphas[step] = a
        risks[step] = r_branch[0]
        step += 1
    return nodes[:step], alphas[:step], risks[:step], initial


@dataclass(frozen=True)
class CostComplexityPath:
    """The weakest-link sequence of a tree.

    Attributes
    ----------
    ccp_alphas : ndarray
        Effective alphas; ``ccp_alphas[0] == 0`` is the full tree.
    impurities : ndarray
        Total leaf risk (weighted impurity / root weight) of the subtree at each alpha.
    pruned_nodes : ndarray
        ``pruned_nodes[k]`` is the node collapsed to reach step ``k + 1``.
    """

    ccp_alphas: np.ndarray
    impurities: np.ndarray
    pruned_nodes: np.ndarray


def _risk(tree: Tree) -> np.ndarray:
    return tree.weighted_n_node_samples * tree.impurity / tree.weighted_n_node_samples[0]


def cost_complexity_path(tree: Tree) -> CostComplexityPath:
    """Weakest-link pruning path of ``tree`` (risk = impurity, scikit-learn's definition)."""
    nodes, alphas, risks, initial = weakest_link_sequence(
        tree.branch_ptr, tree.branch_child, _risk(tree)
    )
    return CostComplexityPath(
        ccp_alphas=np.concatenate([[0.0], alphas]),
        impurities=np.concatenate([[initial], risks]),
        pruned_nodes=nodes,
    )


def prune_to_alpha(tree: Tree, ccp_alpha: float) -> Tree:
    """The subtree kept by minimal cost-complexity pruning with parameter ``ccp_alpha``."""
    path = cost_complexity_path(tree)
    above = np.flatnonzero(path.ccp_alphas[1:] > ccp_alpha)
    n_steps = int(above[0]) if above.size else path.pruned_nodes.size
    keep_leaf = np.zeros(tree.node_count, dtype=bool)
    keep_leaf[path.pruned_nodes[:n_steps]] = True
    return tree.subtree(keep_leaf)
