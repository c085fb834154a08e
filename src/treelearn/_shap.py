"""Exact SHAP values of a tree's predictions: path-dependent TreeSHAP, for every split we grow.

What a row's SHAP value for a column is (Lundberg, Erion et al. 2020, *Nature Machine
Intelligence* 2:56-67, "path-dependent" TreeSHAP): the Shapley value of the column in the game
whose value for a set ``S`` of known columns is

    v(S) = sum over leaves l of value(l) * prod over the nodes j on the path to l of
           (o_j if the column of node j is in S else z_j),

with ``z_j`` the share of the training weight that went down the path's branch at node ``j``
(what a tree does with an unknown column: every branch, weighted by the training cases) and
``o_j`` the share of *this row* that goes down it: 1 for the branch its value takes, 0 for
the others, and, where the tree sends a row down every branch fractionally (a missing value
at a C4.5 node), the branch's training share again. So ``v(all columns)`` is exactly the
prediction (``Tree.predict``'s routing, fractional cases included) and ``v(none)`` the
expected value (:func:`expected_values`), and the values add up: ``expected_value +
sum(shap_values) == prediction``.

Why this works for subset, multiway and missing-value splits: the algorithm needs from a node
only which branch (or branches, with which shares) the row takes and each branch's training
weight; the branch is the one :func:`treelearn._tree._branch_of` gives, the same function the
tree predicts with, so a category subset, a multiway split, a learned missing direction and an
unseen level all go where the prediction goes. A column a node splits on contributes once per
path even where it is split on again (the path keeps one entry per column, the textbook
``UNWIND`` of a repeated column), and a category column gets one value, not one per level.

The kernel is the algorithm of Lundberg et al.'s Algorithm 2 (``EXTEND``, ``UNWIND``, the
unwound sum), run as an explicit stack over the nodes instead of recursion (Numba compiles
recursion poorly and caches it not at all), with the path of each depth in a row of its own:
a child copies its parent's row and extends it, so a sibling finds its parent's path
untouched. Rows are independent and run in parallel, in blocks between which a Ctrl-C is
taken. The path helpers are inlined into the row's walk (``tiny``): called, they made it
1.3-1.7x slower (10k x 28, depth 10, 2,000 rows: 0.50-0.64 s against 0.34-0.45 s, while
another process shared the machine; SHAP's C++ explainer 0.36-0.42 s in the same run). The
unwound sums at a leaf, three quarters of the work, are written out in the walk with their
ratios from per-leaf tables (see the comment there): one thread went from 0.43 s to 0.26 s on
4,000 rows of that tree, two threads 0.13 s; SHAP's explainer, one thread, 0.24 s.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._interrupt import check as check_interrupt
from ._memory import check as check_memory
from ._tree import Tree, _branch_of
from .engine.config import njit, pjit, prange, tiny

#: Rows per call of the compiled kernel: a Ctrl-C is taken between calls.
SHAP_ROWS = 4096


@tiny
def _extend(feat, zf, of, pw, ud, p_z, p_o, p_i):
    """Lundberg et al.'s ``EXTEND``: the path ``[0, ud)`` grows by column ``p_i`` with zero
    fraction ``p_z`` and one fraction ``p_o``; ``pw`` are the path's permutation weights."""
    feat[ud] = p_i
    zf[ud] = p_z
    of[ud] = p_o
    pw[ud] = 1.0 if ud == 0 else 0.0
    for i in range(ud - 1, -1, -1):
        pw[i + 1] += p_o * pw[i] * (i + 1) / (ud + 1)
        pw[i] = p_z * pw[i] * (ud - i) / (ud + 1)


@tiny
def _unwind(feat, zf, of, pw, ud, k):
    """``UNWIND``: entry ``k`` taken out of the path ``[0, ud]`` (its weights undone)."""
    o = of[k]
    z = zf[k]
    nxt = pw[ud]
    for i in range(ud - 1, -1, -1):
        if o != 0.0:
            t = pw[i]
            pw[i] = nxt * (ud + 1) / ((i + 1) * o)
            nxt = t - pw[i] * z * (ud - i) / (ud + 1)
        else:
            pw[i] = pw[i] * (ud + 1) / (z * (ud - i))
    for i in range(k, ud):
        feat[i] = feat[i + 1]
        zf[i] = zf[i + 1]
        of[i] = of[i + 1]


@njit
def _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
              missing_branch, wnode, value, feat, zf, of, pw, uds, stack_n, stack_lv, stack_z,
              stack_o, stack_f, up, down, back, phi):
    """Add row ``i``'s SHAP values (``phi[column, output]``) of one tree.

    ``feat``/``zf``/``of``/``pw`` hold one path per depth (row ``L``: the path at a node of
    depth ``L - 1`` after its ``EXTEND``), ``uds[L]`` its last index; the stack holds the
    nodes still to visit with their parent's depth and the fractions their entry adds;
    ``up``/``down``/``back``: a leaf's ratio tables, ``(ud + 1) / (j + 1)``, ``(ud - j) /
    (ud + 1)`` and ``(ud + 1) / (ud - j)``."""
    V = value.shape[1]
    top = 0
    stack_n[0] = 0
    stack_lv[0] = -1
    stack_z[0] = 1.0
    stack_o[0] = 1.0
    stack_f[0] = -1
    top = 1
    while top > 0:
        top -= 1
        node = stack_n[top]
        parent = stack_lv[top]
        lv = parent + 1
        ud = 0
        if parent >= 0:
            ud = uds[parent] + 1
            for q in range(ud):
                feat[lv, q] = feat[parent, q]
                zf[lv, q] = zf[parent, q]
                of[lv, q] = of[parent, q]
                pw[lv, q] = pw[parent, q]
        _extend(feat[lv], zf[lv], of[lv], pw[lv], ud, stack_z[top], stack_o[top],
                stack_f[top])
        b0 = branch_ptr[node]
        k = branch_ptr[node + 1] - b0
        if k == 0:
            # the ratios of the unwound sums, shared by every entry (one table per leaf)
            for q in range(ud):
                up[q] = (ud + 1) / (q + 1)
                down[q] = (ud - q) / (ud + 1)
                back[q] = (ud + 1) / (ud - q)
            for q in range(1, ud + 1):
                # Lundberg et al.'s UNWOUND-SUM of entry q, written out here: the printed form
                # divides twice per step, and these sums are three quarters of a row's time
                # (one thread, depth-10 tree, 4,000 rows: 0.43 s dividing, 0.26 s from the
                # tables; as a helper taking the path's rows, 0.58 s; SHAP's C++ 0.24 s)
                o = of[lv, q]
                z = zf[lv, q]
                nxt = pw[lv, ud]
                w = 0.0
                if o != 0.0:
                    inv_o = 1.0 / o
                    for j in range(ud - 1, -1, -1):
                        t = nxt * up[j] * inv_o
                        w += t
                        nxt = pw[lv, j] - t * z * down[j]
                elif z != 0.0:
                    inv_z = 1.0 / z
                    for j in range(ud - 1, -1, -1):
                        w += pw[lv, j] * inv_z * back[j]
                scale = w * (o - z)
                c = feat[lv, q]
                for v in range(V):
                    phi[c, v] += scale * value[node, v]
            continue
        d = feature[node]
        iz = 1.0
        io = 1.0
        for q in range(1, ud + 1):
            if feat[lv, q] == d:
                iz = zf[lv, q]
                io = of[lv, q]
                _unwind(feat[lv], zf[lv], of[lv], pw[lv], ud, q)
                ud -= 1
                break
        uds[lv] = ud
        total = 0.0
        for b in range(k):
            total += wnode[branch_child[b0 + b]]
        taken = _branch_of(X[i, d], node, threshold, cat_ptr, cat_branch, missing_branch)
        for b in range(k):
            z = wnode[branch_child[b0 + b]] / total
            if taken >= 0:
                o = 1.0 if b == taken else 0.0
            else:  # every branch, by its training share: the prediction's fractional case
                o = z
            if z * iz == 0.0 and o * io == 0.0:
                continue  # every weight below would be zero: nothing to add
            stack_n[top] = branch_child[b0 + b]
            stack_lv[top] = lv
            stack_z[top] = z * iz
            stack_o[top] = o * io
            stack_f[top] = d
            top += 1


@pjit
def tree_shap(X, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
              missing_branch, wnode, value, max_depth, n_parts, phi):
    """Add every row's SHAP values of one tree to ``phi`` (rows x columns x outputs); the rows
    in ``n_parts`` parts run in parallel, each with its own paths and stack."""
    n = X.shape[0]
    n_nodes = feature.shape[0]
    levels = max_depth + 2
    per = (n + n_parts - 1) // n_parts
    for part in prange(n_parts):
        feat = np.empty((levels, levels), dtype=np.int64)
        zf = np.empty((levels, levels))
        of = np.empty((levels, levels))
        pw = np.empty((levels, levels))
        uds = np.empty(levels, dtype=np.int64)
        stack_n = np.empty(n_nodes + 1, dtype=np.int64)
        stack_lv = np.empty(n_nodes + 1, dtype=np.int64)
        stack_z = np.empty(n_nodes + 1)
        stack_o = np.empty(n_nodes + 1)
        stack_f = np.empty(n_nodes + 1, dtype=np.int64)
        up = np.empty(levels)
        down = np.empty(levels)
        back = np.empty(levels)
        for i in range(part * per, min(n, (part + 1) * per)):
            _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
                      missing_branch, wnode, value, feat, zf, of, pw, uds, stack_n, stack_lv,
                      stack_z, stack_o, stack_f, up, down, back, phi[i])


@njit
def expected_values(branch_ptr, branch_child, wnode, value, out):
    """``out[node]``: the node's expected prediction when no column is known, its leaves'
    values weighted by the training shares of the branches down to them (children are
    numbered after their parents, so one pass from the last node up does it)."""
    for node in range(branch_ptr.shape[0] - 2, -1, -1):
        b0 = branch_ptr[node]
        k = branch_ptr[node + 1] - b0
        if k == 0:
            for v in range(value.shape[1]):
                out[node, v] = value[node, v]
            continue
        total = 0.0
        for b in range(k):
            total += wnode[branch_child[b0 + b]]
        for v in range(value.shape[1]):
            acc = 0.0
            for b in range(k):
                c = branch_child[b0 + b]
                acc += wnode[c] / total * out[c, v]
            out[node, v] = acc


def _check_tree(tree: Tree) -> None:
    if tree.is_oblique:
        raise TypeError("SHAP values are not defined here for oblique splits (a split on a "
                        "weighted sum of columns is not a split on one column); use an "
                        "axis-aligned tree.")
    if tree.has_linear_leaves:
        raise TypeError("SHAP values of model trees (linear leaves) are not computed: a "
                        "leaf's prediction depends on columns beyond its path, which "
                        "path-dependent TreeSHAP does not attribute.")


def leaf_values(tree: Tree, classifier: bool) -> np.ndarray:
    """The node values the prediction reads (n_nodes x outputs): a classifier's leaves as
    the class fractions ``predict_proba`` returns (each leaf normalised, as it normalises a
    row), a regressor's as stored."""
    value = np.array(tree.value[:, 0, :], dtype=np.float64)
    if classifier:
        total = value.sum(axis=1, keepdims=True)
        total[total == 0.0] = 1.0
        value /= total
    return value


def tree_expected_value(tree: Tree, value: np.ndarray) -> np.ndarray:
    """The tree's expected prediction with no column known (one per output of ``value``,
    :func:`leaf_values`)."""
    _check_tree(tree)
    out = np.empty((tree.node_count, value.shape[1]))
    expected_values(tree.branch_ptr, tree.branch_child, tree.weighted_n_node_samples, value,
                    out)
    return out[0]


def tree_shap_values(tree: Tree, X: np.ndarray, value: np.ndarray,
                     out: np.ndarray | None = None, n_threads: int | None = None) -> np.ndarray:
    """SHAP values of the tree's predictions (its node values ``value``, :func:`leaf_values`)
    for the rows of ``X`` (validated: float32, dense or CSR): shape ``(n_samples, n_features,
    n_outputs)``, added to ``out`` when given."""
    _check_tree(tree)
    import numba

    sparse = sp.issparse(X)
    if not sparse:
        X = np.ascontiguousarray(X, dtype=np.float32)
    n = X.shape[0]
    if out is None:
        out = np.zeros((n, tree.n_features, value.shape[1]))
    threads = numba.get_num_threads() if n_threads is None else n_threads
    args = (tree.feature, tree.threshold, tree.branch_ptr, tree.branch_child, tree.cat_ptr,
            tree.cat_branch, tree.missing_branch, tree.weighted_n_node_samples,
            np.ascontiguousarray(value), np.int64(tree.max_depth))
    for a in range(0, n, SHAP_ROWS):
        b = min(n, a + SHAP_ROWS)
        parts = max(1, min(threads * 4, b - a))
        # sparse rows made dense a block at a time (the kernel reads a row's value per node)
        block = np.ascontiguousarray(X[a:b].toarray(), dtype=np.float32) if sparse else X[a:b]
        tree_shap(block, *args, np.int64(parts), out[a:b])
        check_interrupt()
    return out


def check_output_memory(n: int, p: int, outputs: int, what: str) -> None:
    """Refuse, before allocating it, an output of ``n x p x outputs`` floats that does not
    fit in memory."""
    check_memory(8.0 * n * p * outputs, f"{what} for {n:,} rows x {p:,} columns",
                 "Explain fewer rows at a time.")


def estimator_shap(model, X: np.ndarray, classifier: bool) -> np.ndarray:
    """A fitted single-tree estimator's SHAP values for its validated ``X``: ``(n, p)`` for a
    regressor, ``(n, p, n_classes)`` for a classifier."""
    tree = model.tree_
    _check_tree(tree)
    value = leaf_values(tree, classifier)
    check_output_memory(X.shape[0], tree.n_features, value.shape[1], "SHAP values")
    phi = tree_shap_values(tree, X, value)
    return phi if classifier else phi[:, :, 0]


def estimator_expected_value(model, classifier: bool):
    """A fitted single-tree estimator's expected value: a float for a regressor, one per
    class for a classifier."""
    ev = tree_expected_value(model.tree_, leaf_values(model.tree_, classifier))
    return ev if classifier else float(ev[0])


def ensemble_shap(model, X, classifier: bool) -> np.ndarray:
    """An averaging ensemble's SHAP values (forests, extra trees, bagging): the mean over its
    trees of each tree's values (the prediction is the mean of the trees' values, and a
    Shapley value is linear in the game), each tree's columns put back where bagging's random
    subspaces took them from. ``(n, p)`` for a regressor, ``(n, p, n_classes)`` for a
    classifier."""
    trees = model.estimators_
    feats = getattr(model, "estimators_features_", None)
    n, p = X.shape
    V = len(model.classes_) if classifier else 1
    check_output_memory(n, p, V, "SHAP values")
    out = np.zeros((n, p, V))
    for k, member in enumerate(trees):
        tree = member.tree_
        value = leaf_values(tree, classifier)
        if feats is None:
            tree_shap_values(tree, X, value, out=out)
        else:  # a random subspace: the tree's column j is the ensemble's feats[k][j]
            phi = tree_shap_values(tree, X[:, feats[k]], value)
            np.add.at(out, (slice(None), np.asarray(feats[k])), phi)
    out /= len(trees)
    return out if classifier else out[:, :, 0]


def ensemble_expected_value(model, classifier: bool):
    """The mean of the trees' expected values (a float, or one per class)."""
    total = 0.0
    for member in model.estimators_:
        total = total + tree_expected_value(member.tree_, leaf_values(member.tree_, classifier))
    ev = total / len(model.estimators_)
    return ev if classifier else float(ev[0])
