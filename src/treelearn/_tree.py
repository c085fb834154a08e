"""The fitted tree as a struct of arrays, with scikit-learn's names and meanings.

Binary trees on numeric features use scikit-learn's layout unchanged. Categorical splits,
multiway nodes and missing-value routing add four arrays (always present, derived from the
binary layout when a tree has none of them):

``branch_ptr``, ``branch_child``
    The children of node ``i`` are ``branch_child[branch_ptr[i]:branch_ptr[i + 1]]``, in branch
    order (none for a leaf). A binary node has two, ``children_left[i]`` and
    ``children_right[i]``; a multiway node (ID3/C4.5 categorical split) has one per level seen at
    the node, and ``children_left[i]`` / ``children_right[i]`` hold its first and last child.
``cat_ptr``, ``cat_branch``
    For a node splitting a categorical feature with ``L`` levels,
    ``cat_branch[cat_ptr[i]:cat_ptr[i] + L]`` is the branch taken by each level code
    (``-1``: the level had no training case at the node, so it is routed like a missing value).
    Numeric nodes have an empty range and compare ``x <= threshold`` (branch 0) as scikit-learn
    does; categorical nodes have ``threshold == -2``.
``missing_branch``
    The branch a missing value takes at an internal node, or ``-1`` to follow every branch with
    weight proportional to the branch's training weight (C4.5's fractional cases; prediction then
    averages the leaf values by those weights). ``-2`` at leaves. scikit-learn's
    ``missing_go_to_left`` is ``missing_branch == 0`` for binary nodes.

Linear leaves (model trees, :mod:`treelearn.model_trees`) add five optional arrays; a tree
without them predicts its leaves' ``value``:

``lin_ptr``, ``lin_feature``, ``lin_coef``, ``lin_fill``
    The terms of node ``i``'s linear model are ``t in range(lin_ptr[i], lin_ptr[i + 1])``:
    ``lin_coef[t] * x[lin_feature[t]]``, with ``lin_fill[t]`` in place of a missing ``x``
    (M5': the mean of the feature's known values at the leaf). Internal nodes have none.
``lin_intercept``
    The intercept of each node's model (internal nodes: their ``value``, unused). A leaf
    predicts ``lin_intercept[i] + c_1 x_1 + c_2 x_2 + ...``, summed left to right in float64
    from the float32 ``x``.
``lin_set_ptr``, ``lin_set_code``, ``lin_set_one``
    A term on a categorical feature (M5's synthetic binary attribute) reads not ``x`` but
    an indicator: ``lin_set_code[lin_set_ptr[t]:lin_set_ptr[t + 1]]`` are the level codes
    seen at fit and ``lin_set_one`` their 0/1 values; a level not listed (or missing) reads
    ``lin_fill[t]``. A numeric term has an empty range. Optional with the linear arrays
    (default: every term numeric).

Oblique splits (:mod:`treelearn.oblique`) add three optional arrays; a tree without them
splits on one feature at every node:

``obl_ptr``, ``obl_feature``, ``obl_weight``
    The terms of node ``i``'s split are ``t in range(obl_ptr[i], obl_ptr[i + 1])``: the node
    sends a row to branch 0 when ``sum_t obl_weight[t] * x[obl_feature[t]] <= threshold[i]``,
    summed left to right in float64 from the float32 ``x`` (the order the exporters write),
    and to branch 1 otherwise. A row whose sum is NaN (a missing value in a term, or
    infinities of opposite signs) takes ``missing_branch[i]``. A node with no terms splits
    on ``feature[i]`` as usual. At an oblique node ``feature[i]`` is the feature of the
    term of largest ``|weight|`` (the first of them on ties), so that readers asking for one
    feature per node get one. The terms of a node name distinct features, in increasing
    order, with finite nonzero weights. An oblique tree is binary and numeric: no
    categorical node, no fractional missing-value routing.

Invariants (checked by :meth:`Tree.check`, relied on by pruning, export and persistence):

* ``node_count >= 1``; node 0 is the root; every array has ``node_count`` rows.
* A leaf has ``children_left == children_right == -1``, no branches, ``feature == -2`` and
  ``threshold == -2.0``. An internal node has at least two children, each with
  ``i < child < node_count`` (children come after their parent, so the table has no cycles),
  and ``0 <= feature < n_features``.
* Every node except the root is the child of exactly one node.
* ``weighted_n_node_samples`` of an internal node is the sum of its children's; so is
  ``n_node_samples`` unless the node sends missing values down every branch (a case with a
  missing value is then counted in each child it reaches with positive weight).
* ``value`` has shape ``(node_count, 1, n_values)``: class fractions (each row sums to 1) for
  classifiers, like scikit-learn >= 1.4, or the predicted value (mean or median) for regressors.
* ``max_depth`` is the depth of the deepest node (the root has depth 0).

Samples go left when ``x[feature] <= threshold`` with ``x`` converted to float32 (scikit-learn's
rule, so that both libraries route every sample identically). Categorical features reach the
tree as level codes (float32 ``0, 1, ...``; NaN for missing or unseen levels), see
:mod:`treelearn.engine.columns`.
"""

from __future__ import annotations

import math
import os
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ._interrupt import check as check_interrupt
from .engine.columns import sparse_value
from .engine.config import X_DTYPE, njit, pjit, prange, tiny
from .engine.linear import linear_values

#: Predictions for at least this many rows are spread over the threads.
PARALLEL_MIN_ROWS = 100_000
#: Rows per call of the general router (a Ctrl-C is taken between calls).
ROUTE_ROWS = 65_536

TREE_LEAF = -1
TREE_UNDEFINED = -2
#: ``missing_branch`` value of a node that sends missing values down every branch (C4.5).
MISSING_FRACTIONAL = -1


@tiny
def _leaf_of_row(X, i, left, right, feature, threshold):
    """Leaf reached by row ``i`` of a dense ``X`` (inlined into both loops over rows)."""
    node = 0
    while left[node] != TREE_LEAF:
        if X[i, feature[node]] <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return node


@njit
def apply_dense(X, left, right, feature, threshold, out):
    """Leaf index of every row of a dense float32 ``X``."""
    for i in range(X.shape[0]):
        out[i] = _leaf_of_row(X, i, left, right, feature, threshold)


@pjit
def apply_dense_parallel(X, left, right, feature, threshold, out):
    """:func:`apply_dense` over row blocks on all threads (for large X; compiled on first use)."""
    n = X.shape[0]
    n_blocks = (n + 4095) // 4096
    for b in prange(n_blocks):
        for i in range(b * 4096, min(n, (b + 1) * 4096)):
            out[i] = _leaf_of_row(X, i, left, right, feature, threshold)


@tiny
def _oblique_leaf(X, i, left, right, feature, threshold, obl_ptr, obl_feature, obl_weight,
                  missing_branch):
    """Leaf reached by row ``i`` of a dense ``X`` in a tree with oblique splits."""
    node = 0
    while left[node] != TREE_LEAF:
        a = obl_ptr[node]
        b = obl_ptr[node + 1]
        if a == b:
            x = np.float64(X[i, feature[node]])
        else:
            x = 0.0
            for t in range(a, b):
                x += obl_weight[t] * np.float64(X[i, obl_feature[t]])
        if math.isnan(x):
            node = left[node] if missing_branch[node] == 0 else right[node]
        elif x <= threshold[node]:
            node = left[node]
        else:
            node = right[node]
    return node


@tiny
def _oblique_branch(X, i, node, feature, threshold, obl_ptr, obl_feature, obl_weight,
                    missing_branch):
    """Branch (0 or 1) row ``i`` of a dense ``X`` takes at ``node`` of a tree with oblique
    splits: the weighted sum of its float32 values, summed in double (one feature's value at
    an axis-aligned node), against the threshold; NaN takes the missing branch. The same
    rule as :func:`_oblique_leaf`, which keeps its own copy: calling this there made
    ``apply`` four times slower (123-node tree, 200,000 rows: 29 ms -> 127 ms, 2026-12-06;
    the inlined call's loop is not optimised as the written-out one is), and calling it
    compiled apart (``njit``) slower still (58 ms -> 250 ms with another job running)."""
    a = obl_ptr[node]
    b = obl_ptr[node + 1]
    if a == b:
        x = np.float64(X[i, feature[node]])
    else:
        x = 0.0
        for t in range(a, b):
            x += obl_weight[t] * np.float64(X[i, obl_feature[t]])
    if math.isnan(x):
        return 0 if missing_branch[node] == 0 else 1
    return 0 if x <= threshold[node] else 1


@njit
def apply_oblique(X, left, right, feature, threshold, obl_ptr, obl_feature, obl_weight,
                  missing_branch, out):
    """Leaf index of every row of a dense float32 ``X`` in a tree with oblique splits."""
    for i in range(X.shape[0]):
        out[i] = _oblique_leaf(X, i, left, right, feature, threshold, obl_ptr, obl_feature,
                               obl_weight, missing_branch)


@njit
def apply_sparse(indptr, indices, data, left, right, feature, threshold, out):
    """Leaf index of every row of a CSR matrix (sorted indices, float32 data)."""
    for i in range(out.shape[0]):
        node = 0
        while left[node] != TREE_LEAF:
            if sparse_value(indptr, indices, data, i, feature[node]) <= threshold[node]:
                node = left[node]
            else:
                node = right[node]
        out[i] = node


@tiny
def _branch_of(x, node, threshold, cat_ptr, cat_branch, missing_branch):
    """Branch taken at ``node`` by value ``x`` (``-1``: every branch, fractionally). Inlined:
    the pruning's walks call it once per case and level from kernels that count no
    references."""
    if math.isnan(x):
        return missing_branch[node]
    c0 = cat_ptr[node]
    n_levels = cat_ptr[node + 1] - c0
    if n_levels > 0:
        code = int(x)
        b = -1
        if 0 <= code < n_levels:
            b = cat_branch[c0 + code]
        return b if b >= 0 else missing_branch[node]
    return 0 if x <= threshold[node] else 1


@njit
def _branch_ratio(node, b, branch_ptr, branch_child, wnode):
    """Share of branch ``b`` in the training weight of ``node``'s branches (summed in order)."""
    total = 0.0
    for k in range(branch_ptr[node], branch_ptr[node + 1]):
        total += wnode[branch_child[k]]
    return wnode[branch_child[branch_ptr[node] + b]] / total


@njit
def route(X, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch, missing_branch,
          wnode, value, out_value, out_leaf, path_ptr, path_nodes, row_stats, node_acc):
    """General prediction: categorical and multiway nodes, missing values, fractional cases.

    The value of a leaf is its ``value`` row; the value of an internal node is its taken
    branch's, or, for a missing value at a fractional node, ``sum_b r_b * value(child_b)``
    summed in branch order, with ``r_b`` the branch's share of the node's training weight.
    ``out_value[i]`` is the root's value for row ``i``. (This nested form is what the SQL
    and Python exporters compute, operation for operation, so their predictions are exact.)
    A row's weight at a node is the product of the shares on its path; ``out_leaf[i]`` is the
    leaf of largest weight (the first one on ties). When ``path_ptr`` has ``n + 1`` entries,
    the nodes reached are written to ``path_nodes[path_ptr[i]:]`` (if ``path_nodes`` is
    empty, only counted into ``path_ptr[i + 1]``). When ``node_acc`` has rows, ``row_stats[i]``
    times the row's weight at a node is added to ``node_acc[node]`` for every node reached
    (the per-node sums that pruning with held-out data needs).
    """
    n = X.shape[0]
    V = value.shape[1]
    S = row_stats.shape[1]
    accumulate = node_acc.shape[0] > 0
    record = path_ptr.shape[0] == n + 1
    write = record and path_nodes.shape[0] > 0
    # One frame per fractional node being summed: node, branch under way, weight, partial sum.
    cap = 16
    fnode = np.empty(cap, dtype=np.int64)
    fbranch = np.empty(cap, dtype=np.int64)
    fweight = np.empty(cap)
    facc = np.empty((cap, V))
    res = np.empty(V)
    for i in range(n):
        top = 0
        node = 0
        wt = 1.0
        best = -1.0
        n_seen = 0
        done = False
        while not done:
            # Down from ``node`` to a leaf, opening a frame at every fractional split.
            while True:
                if record:
                    if write:
                        path_nodes[path_ptr[i] + n_seen] = node
                    n_seen += 1
                if accumulate:
                    for q in range(S):
                        node_acc[node, q] += wt * row_stats[i, q]
                b0 = branch_ptr[node]
                if branch_ptr[node + 1] == b0:
                    break
                b = _branch_of(X[i, feature[node]], node, threshold, cat_ptr, cat_branch,
                               missing_branch)
                if b >= 0:
                    node = branch_child[b0 + b]
                    continue
                if top == cap:
                    cap *= 2
                    fnode2 = np.empty(cap, dtype=np.int64)
                    fbranch2 = np.empty(cap, dtype=np.int64)
                    fweight2 = np.empty(cap)
                    facc2 = np.empty((cap, V))
                    for q in range(top):
                        fnode2[q] = fnode[q]
                        fbranch2[q] = fbranch[q]
                        fweight2[q] = fweight[q]
                        for v in range(V):
                            facc2[q, v] = facc[q, v]
                    fnode, fbranch, fweight, facc = fnode2, fbranch2, fweight2, facc2
                fnode[top] = node
                fbranch[top] = 0
                fweight[top] = wt
                for v in range(V):
                    facc[top, v] = 0.0
                top += 1
                wt = wt * _branch_ratio(node, np.int64(0), branch_ptr, branch_child, wnode)
                node = branch_child[b0]
            if wt > best:
                best = wt
                out_leaf[i] = node
            for v in range(V):
                res[v] = value[node, v]
            # Up: add the finished branch to its frame; go down the frame's next branch or
            # close the frame and pass its sum further up.
            done = True
            while top > 0:
                f = top - 1
                p = fnode[f]
                b = fbranch[f]
                r = _branch_ratio(p, b, branch_ptr, branch_child, wnode)
                for v in range(V):
                    facc[f, v] += r * res[v]
                b += 1
                if b < branch_ptr[p + 1] - branch_ptr[p]:
                    fbranch[f] = b
                    wt = fweight[f] * _branch_ratio(p, b, branch_ptr, branch_child, wnode)
                    node = branch_child[branch_ptr[p] + b]
                    done = False
                    break
                for v in range(V):
                    res[v] = facc[f, v]
                top -= 1
        for v in range(V):
            out_value[i, v] = res[v]
        if record and not write:
            path_ptr[i + 1] = path_ptr[i] + n_seen


@njit
def split_decreases(branch_ptr, branch_child, weight, impurity, cat_ptr, missing_branch, out):
    """``out[i]`` = the weighted impurity decrease of split node ``i`` (leaves are left as
    given): ``w * imp - w_l * imp_l - w_r * imp_r`` in a binary tree (scikit-learn's order of
    operations; every split binary and numeric, none fractional), ``w * imp - (sum over the
    children of w_c * imp_c)`` in any other. One pass without the GIL: the NumPy version took
    1 ms of a forest's 47k-node tree. The caller attributes each decrease to its feature(s),
    so axis-aligned and oblique trees share this one formula."""
    n = branch_ptr.shape[0] - 1
    binary = True
    for i in range(n):
        a = branch_ptr[i]
        if a != branch_ptr[i + 1] and (branch_ptr[i + 1] - a != 2 or cat_ptr[i + 1] != cat_ptr[i]
                                       or missing_branch[i] == MISSING_FRACTIONAL):
            binary = False
            break
    for i in range(n):
        a = branch_ptr[i]
        b = branch_ptr[i + 1]
        if a == b:
            continue
        if binary:
            left = branch_child[a]
            right = branch_child[a + 1]
            out[i] = (weight[i] * impurity[i] - weight[left] * impurity[left]
                      - weight[right] * impurity[right])
        else:
            kids = 0.0
            for k in range(a, b):
                kids += weight[branch_child[k]] * impurity[branch_child[k]]
            out[i] = weight[i] * impurity[i] - kids
    return out


@njit
def node_depths(branch_ptr, branch_child):
    """Depth of every node (parents precede children, so one forward pass suffices)."""
    n = branch_ptr.shape[0] - 1
    depth = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for k in range(branch_ptr[i], branch_ptr[i + 1]):
            depth[branch_child[k]] = depth[i] + 1
    return depth


@njit
def node_parents(branch_ptr, branch_child):
    """Parent of every node (-1 for the root)."""
    n = branch_ptr.shape[0] - 1
    parent = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for k in range(branch_ptr[i], branch_ptr[i + 1]):
            parent[branch_child[k]] = i
    return parent


@njit
def _path_indices(leaves, branch_ptr, branch_child, depth):
    """CSR pieces of the decision path: the nodes from the root to each sample's leaf."""
    n = leaves.shape[0]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        indptr[i + 1] = indptr[i] + depth[leaves[i]] + 1
    indices = np.empty(indptr[n], dtype=np.int64)
    parent = node_parents(branch_ptr, branch_child)
    for i in range(n):
        node = leaves[i]
        p = indptr[i + 1] - 1
        while node >= 0:
            indices[p] = node
            p -= 1
            node = parent[node]
    return indptr, indices


def expected_costs(proba: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Expected cost of predicting each class: ``sum_i proba[:, i] * cost[i, :]``.

    Summed over the true classes ``i`` in order, one fixed order of operations (a BLAS product
    may group them differently), so that exported code computing the same sum in the same
    order picks the same least-cost class even where two classes nearly tie.
    """
    proba = np.atleast_2d(proba)
    out = proba[:, :1] * cost[0]
    for i in range(1, cost.shape[0]):
        out = out + proba[:, i:i + 1] * cost[i]
    return out


def binary_branches(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(branch_ptr, branch_child)`` of a binary tree given by its child arrays."""
    inner = left != TREE_LEAF
    ptr = np.zeros(left.shape[0] + 1, dtype=np.intp)
    ptr[1:] = np.cumsum(2 * inner)
    child = np.empty(int(ptr[-1]), dtype=np.intp)
    child[0::2] = left[inner]
    child[1::2] = right[inner]
    return ptr, child


def larger_child_branch(left, right, n_node_samples) -> np.ndarray:
    """scikit-learn's rule for nodes that saw no missing value: the child with more samples
    (left only when strictly larger). ``-2`` at leaves."""
    out = np.full(left.shape[0], TREE_UNDEFINED, dtype=np.intp)
    inner = np.flatnonzero(left != TREE_LEAF)
    out[inner] = np.where(n_node_samples[left[inner]] > n_node_samples[right[inner]], 0, 1)
    return out


_NODE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "impurity",
                "n_node_samples", "weighted_n_node_samples", "value")
_EXTRA_ARRAYS = ("branch_ptr", "branch_child", "cat_ptr", "cat_branch", "missing_branch",
                 "missing_seen")
#: The arrays of linear leaves (all present or all None).
LINEAR_ARRAYS = ("lin_ptr", "lin_feature", "lin_coef", "lin_fill", "lin_intercept",
                 "lin_set_ptr", "lin_set_code", "lin_set_one")
#: The arrays of oblique splits (all present or all None).
OBLIQUE_ARRAYS = ("obl_ptr", "obl_feature", "obl_weight")


def _optional(a, dtype):
    """An optional tree array as the kernels read it (None stays None)."""
    return None if a is None else np.ascontiguousarray(a, dtype=dtype)


#: Check even the trees of treelearn's own growers (set by the test suite).
CHECK_TRUSTED = os.environ.get("TREELEARN_CHECK_TREES") == "1"


class Tree:
    """A fitted decision tree: flat arrays, one row per node (see module docstring).

    Parameters
    ----------
    n_features : int
        Number of input features.
    n_classes : ndarray of shape (1,)
        Number of classes (1 for regression), scikit-learn's convention.
    children_left, children_right, feature, threshold, impurity, n_node_samples,
    weighted_n_node_samples, value : ndarray
        The node arrays.
    branch_ptr, branch_child : ndarray, optional
        Children of every node (CSR). Default: from ``children_left``/``children_right``.
    cat_ptr, cat_branch : ndarray, optional
        Branch of each level at categorical nodes (CSR). Default: no categorical node.
    missing_branch : ndarray, optional
        Branch of missing values per node (``-1``: all branches, fractionally). Default:
        scikit-learn's rule for a tree fitted without missing values (the child with more
        samples).
    missing_seen : ndarray of bool, optional
        Whether the split of each node met missing values of its feature at fit, so that
        ``missing_branch`` was learned from data (False at leaves). Readers say "or missing"
        only where it is True. Default (a tree from elsewhere, or a model file of an earlier
        version): True at every split node, as nothing tells otherwise.
    lin_ptr, lin_feature, lin_coef, lin_fill, lin_intercept : ndarray, optional
        Linear models at the leaves (see module docstring), all five or none.
    lin_set_ptr, lin_set_code, lin_set_one : ndarray, optional
        The level sets of categorical terms (default: none, every term numeric).
    obl_ptr, obl_feature, obl_weight : ndarray, optional
        The weighted sums of oblique splits (see module docstring), all three or none.
    """

    n_outputs = 1

    def __init__(self, n_features, n_classes, children_left, children_right, feature, threshold,
                 impurity, n_node_samples, weighted_n_node_samples, value, *, branch_ptr=None,
                 branch_child=None, cat_ptr=None, cat_branch=None, missing_branch=None,
                 missing_seen=None, lin_ptr=None, lin_feature=None, lin_coef=None,
                 lin_fill=None, lin_intercept=None, lin_set_ptr=None, lin_set_code=None,
                 lin_set_one=None, obl_ptr=None, obl_feature=None, obl_weight=None,
                 _trusted=False):
        self.n_features = int(n_features)
        self.n_classes = np.asarray(n_classes, dtype=np.intp).reshape(1)
        self.children_left = np.ascontiguousarray(children_left, dtype=np.intp)
        self.children_right = np.ascontiguousarray(children_right, dtype=np.intp)
        self.feature = np.ascontiguousarray(feature, dtype=np.intp)
        self.threshold = np.ascontiguousarray(threshold, dtype=np.float64)
        self.impurity = np.ascontiguousarray(impurity, dtype=np.float64)
        self.n_node_samples = np.ascontiguousarray(n_node_samples, dtype=np.intp)
        self.weighted_n_node_samples = np.ascontiguousarray(weighted_n_node_samples,
                                                            dtype=np.float64)
        value = np.asarray(value, dtype=np.float64)
        if value.ndim == 2:
            value = value[:, None, :]
        self.value = np.ascontiguousarray(value)
        n = self.children_left.shape[0]
        if (branch_ptr is None) != (branch_child is None):
            raise ValueError("branch_ptr and branch_child must be given together")
        if branch_ptr is None:
            if self.children_right.shape[0] != n:
                raise ValueError(f"tree array children_right has {self.children_right.shape[0]} "
                                 f"rows, expected {n}")
            branch_ptr, branch_child = binary_branches(self.children_left, self.children_right)
        if (cat_ptr is None) != (cat_branch is None):
            raise ValueError("cat_ptr and cat_branch must be given together")
        if cat_ptr is None:
            cat_ptr, cat_branch = np.zeros(n + 1, dtype=np.intp), np.zeros(0, dtype=np.intp)
        self.branch_ptr = np.ascontiguousarray(branch_ptr, dtype=np.intp)
        self.branch_child = np.ascontiguousarray(branch_child, dtype=np.intp)
        self.cat_ptr = np.ascontiguousarray(cat_ptr, dtype=np.intp)
        self.cat_branch = np.ascontiguousarray(cat_branch, dtype=np.intp)
        if missing_branch is None:
            if self.n_node_samples.shape[0] != n:
                raise ValueError(f"tree array n_node_samples has {self.n_node_samples.shape[0]} "
                                 f"rows, expected {n}")
            self.check_branches()
            missing_branch = larger_child_branch(self.children_left, self.children_right,
                                                 self.n_node_samples)
        self.missing_branch = np.ascontiguousarray(missing_branch, dtype=np.intp)
        if missing_seen is None:
            missing_seen = self.children_left != TREE_LEAF
        self.missing_seen = np.ascontiguousarray(missing_seen, dtype=np.bool_)
        lin = (lin_ptr, lin_feature, lin_coef, lin_fill, lin_intercept)
        if any(a is not None for a in lin) and any(a is None for a in lin):
            raise ValueError("the linear-leaf arrays (lin_ptr, lin_feature, lin_coef, lin_fill, "
                             "lin_intercept) must be given together")
        self.lin_ptr = _optional(lin_ptr, np.intp)
        self.lin_feature = _optional(lin_feature, np.intp)
        self.lin_coef = _optional(lin_coef, np.float64)
        self.lin_fill = _optional(lin_fill, np.float64)
        self.lin_intercept = _optional(lin_intercept, np.float64)
        sets = (lin_set_ptr, lin_set_code, lin_set_one)
        if any(a is not None for a in sets) and (any(a is None for a in sets)
                                                 or lin_ptr is None):
            raise ValueError("lin_set_ptr, lin_set_code and lin_set_one must be given together, "
                             "with the linear-leaf arrays")
        if lin_ptr is not None and lin_set_ptr is None:
            lin_set_ptr = np.zeros(self.lin_feature.shape[0] + 1, dtype=np.intp)
            lin_set_code = np.zeros(0, dtype=np.intp)
            lin_set_one = np.zeros(0, dtype=np.bool_)
        self.lin_set_ptr = _optional(lin_set_ptr, np.intp)
        self.lin_set_code = _optional(lin_set_code, np.intp)
        self.lin_set_one = _optional(lin_set_one, np.bool_)
        obl = (obl_ptr, obl_feature, obl_weight)
        if any(a is not None for a in obl) and any(a is None for a in obl):
            raise ValueError("the oblique-split arrays (obl_ptr, obl_feature, obl_weight) must "
                             "be given together")
        self.obl_ptr = _optional(obl_ptr, np.intp)
        self.obl_feature = _optional(obl_feature, np.intp)
        self.obl_weight = _optional(obl_weight, np.float64)
        # Validated before any kernel reads the arrays: a kernel following a bad child index
        # would read out of bounds, so no Tree exists that breaks the invariants. Trees
        # assembled by treelearn's own growers (``_trusted``) hold them by construction and
        # skip the check (a sixth of a small fully grown fit); the test suite sets
        # TREELEARN_CHECK_TREES=1 so that every one of them is checked there too.
        if not _trusted or CHECK_TRUSTED:
            self.check()

    @cached_property
    def max_depth(self) -> int:
        """Depth of the deepest node (the root: 0); computed when first read (a pass over the
        nodes that a forest's trees, packed and dropped at once, never need)."""
        return int(self.node_depths().max())

    # -- size ------------------------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        """Number of nodes."""
        return int(self.children_left.shape[0])

    @property
    def capacity(self) -> int:
        """Same as ``node_count`` (scikit-learn compatibility)."""
        return self.node_count

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def max_n_classes(self) -> int:
        """Width of ``value`` (scikit-learn compatibility)."""
        return int(self.value.shape[2])

    @cached_property
    def n_branches(self) -> np.ndarray:
        """Number of children of every node (0 for leaves); computed once (readers ask per
        node, and ``branch_ptr`` never changes after construction), read-only."""
        out = np.diff(self.branch_ptr)
        out.flags.writeable = False
        return out

    @property
    def has_linear_leaves(self) -> bool:
        """True when the leaves hold linear models (a model tree)."""
        return self.lin_ptr is not None

    def leaf_model(self, node: int) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """``(intercept, features, coefficients, fill values)`` of ``node``'s linear model
        (a constant tree: the node's first value and no terms)."""
        if self.lin_ptr is None:
            empty = np.zeros(0)
            return float(self.value[node, 0, 0]), np.zeros(0, dtype=np.intp), empty, empty
        a, b = self.lin_ptr[node], self.lin_ptr[node + 1]
        return (float(self.lin_intercept[node]), self.lin_feature[a:b], self.lin_coef[a:b],
                self.lin_fill[a:b])

    def term_levels(self, t: int) -> tuple[np.ndarray, np.ndarray] | None:
        """``(level codes, 0/1 values)`` of linear term ``t`` on a categorical feature, None
        for a numeric term."""
        a, b = self.lin_set_ptr[t], self.lin_set_ptr[t + 1]
        if a == b:
            return None
        return self.lin_set_code[a:b], self.lin_set_one[a:b]

    @property
    def is_oblique(self) -> bool:
        """True when some node splits on a weighted sum of features."""
        return self.obl_ptr is not None and bool(self.obl_ptr[-1] > 0)

    @cached_property
    def is_oblique_node(self) -> np.ndarray:
        """Boolean mask of the nodes that split on a weighted sum of features (read-only)."""
        out = (np.diff(self.obl_ptr) > 0 if self.obl_ptr is not None
               else np.zeros(self.node_count, dtype=bool))
        out.flags.writeable = False
        return out

    def split_terms(self, node: int) -> tuple[np.ndarray, np.ndarray]:
        """``(features, weights)`` of ``node``'s split: its oblique terms, or at a node on one
        feature that feature with weight 1 (empty at leaves)."""
        if self.children_left[node] == TREE_LEAF:
            return np.zeros(0, dtype=np.intp), np.zeros(0)
        if self.obl_ptr is not None and self.obl_ptr[node + 1] > self.obl_ptr[node]:
            a, b = self.obl_ptr[node], self.obl_ptr[node + 1]
            return self.obl_feature[a:b], self.obl_weight[a:b]
        return self.feature[node:node + 1].copy(), np.ones(1)

    @property
    def missing_go_to_left(self) -> np.ndarray:
        """scikit-learn's flag: missing values take the first branch."""
        return self.missing_branch == 0

    @property
    def is_categorical_node(self) -> np.ndarray:
        """Boolean mask of the nodes that split a categorical feature."""
        return np.diff(self.cat_ptr) > 0

    @property
    def is_binary(self) -> bool:
        """True when the tree has scikit-learn's layout: binary numeric splits on one feature
        only and no fractional missing-value routing."""
        return not self.is_oblique and bool(
            np.all(self.n_branches[self.children_left != TREE_LEAF] == 2)
            and not self.is_categorical_node.any()
            and not np.any(self.missing_branch == MISSING_FRACTIONAL))

    @property
    def _numeric_binary(self) -> bool:
        return bool(np.all(self.n_branches[self.children_left != TREE_LEAF] == 2)
                    and not self.is_categorical_node.any())

    def children(self, node: int) -> np.ndarray:
        """Children of ``node`` in branch order (empty for a leaf)."""
        return self.branch_child[self.branch_ptr[node]:self.branch_ptr[node + 1]]

    def is_leaf(self) -> np.ndarray:
        """Boolean mask of the leaves."""
        return self.children_left == TREE_LEAF

    def node_depths(self) -> np.ndarray:
        """Depth of every node."""
        return node_depths(self.branch_ptr, self.branch_child)

    def node_parents(self) -> np.ndarray:
        """Parent of every node (-1 for the root)."""
        return node_parents(self.branch_ptr, self.branch_child)

    # -- prediction ------------------------------------------------------------------------------
    def _prepare(self, X):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=X_DTYPE)
            X.sort_indices()
            return X
        return np.ascontiguousarray(X, dtype=X_DTYPE)

    def _needs_route(self, X) -> bool:
        if sp.issparse(X):
            if not self._numeric_binary:
                raise TypeError("sparse X is supported for binary numeric trees only.")
            if np.isnan(X.data).any():
                raise ValueError("sparse X with NaN values is not supported; use dense X.")
            return False
        return not self._numeric_binary or bool(np.isnan(X).any())

    def _route(self, X, path: bool = False, row_stats=None):
        n = X.shape[0]
        V = self.value.shape[2]
        out_value = np.empty((n, V))
        out_leaf = np.empty(n, dtype=np.intp)
        ptr = np.zeros(n + 1 if path else 0, dtype=np.int64)
        args = (self.feature, self.threshold, self.branch_ptr, self.branch_child, self.cat_ptr,
                self.cat_branch, self.missing_branch, self.weighted_n_node_samples,
                self.value[:, 0, :])
        no_stats = np.zeros((0, 0))
        no_nodes = np.zeros(0, dtype=np.int64)
        if not path:
            # Blocks of rows, so a Ctrl-C is taken between them (a fully grown tree routes
            # 1M rows in about a second).
            acc = no_stats
            if row_stats is not None:
                acc = np.zeros((self.node_count, row_stats.shape[1]))
                row_stats = np.ascontiguousarray(row_stats, dtype=np.float64)
            for a in range(0, n, ROUTE_ROWS):
                b = min(n, a + ROUTE_ROWS)
                route(X[a:b], *args, out_value[a:b], out_leaf[a:b], ptr, no_nodes,
                      no_stats if row_stats is None else row_stats[a:b], acc)
                check_interrupt()
            if row_stats is not None:
                return acc
            return out_value, out_leaf, ptr, None
        route(X, *args, out_value, out_leaf, ptr, no_nodes, no_stats, no_stats)
        nodes = None
        if path:
            nodes = np.empty(int(ptr[-1]), dtype=np.int64)
            route(X, *args, out_value, out_leaf, ptr, nodes, no_stats, no_stats)
        return out_value, out_leaf, ptr, nodes

    def apply(self, X) -> np.ndarray:
        """Index of the leaf each row of ``X`` lands in (X: array or sparse, already validated).

        A row split fractionally over several leaves (missing value at a C4.5 node) gets the
        leaf holding its largest weight.
        """
        X = self._prepare(X)
        if self.is_oblique:
            return self._oblique_apply(X)
        if self._needs_route(X):
            return self._route(X)[1]
        out = np.empty(X.shape[0], dtype=np.intp)
        if sp.issparse(X):
            apply_sparse(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data,
                         self.children_left, self.children_right, self.feature, self.threshold,
                         out)
        else:
            kernel = apply_dense_parallel if X.shape[0] >= PARALLEL_MIN_ROWS else apply_dense
            kernel(X, self.children_left, self.children_right, self.feature, self.threshold, out)
        return out

    def _oblique_apply(self, X) -> np.ndarray:
        """Leaf of every row (X prepared) of a tree with oblique splits, in blocks of rows (a
        Ctrl-C is taken between them; sparse rows are made dense a block at a time)."""
        out = np.empty(X.shape[0], dtype=np.intp)
        args = (self.children_left, self.children_right, self.feature, self.threshold,
                self.obl_ptr, self.obl_feature, self.obl_weight, self.missing_branch)
        for a in range(0, X.shape[0], ROUTE_ROWS):
            b = min(X.shape[0], a + ROUTE_ROWS)
            block = X[a:b]
            if sp.issparse(block):
                block = np.ascontiguousarray(block.toarray(), dtype=X_DTYPE)
            apply_oblique(block, *args, out[a:b])
            check_interrupt()
        return out

    def predict(self, X) -> np.ndarray:
        """Value of each row, shape (n_samples, 1, n_values): its leaf's ``value``, or the
        weight-averaged values of the leaves a row reaches fractionally."""
        X = self._prepare(X)
        if self.lin_ptr is not None:
            return self._linear_predict(X)[:, None, None]
        if self.is_oblique:
            return self.value[self._oblique_apply(X)]
        if self._needs_route(X):
            return self._route(X)[0][:, None, :]
        return self.value[self.apply(X)]

    def _linear_predict(self, X) -> np.ndarray:
        """Each row's leaf model (X prepared)."""
        leaf = self.apply(X)
        out = np.empty(X.shape[0])
        lin_feature = self.lin_feature
        if sp.issparse(X):
            # only the columns the models read, dense
            cols, lin_feature = np.unique(self.lin_feature, return_inverse=True)
            X = np.ascontiguousarray(X[:, cols].toarray(), dtype=X_DTYPE)
            lin_feature = lin_feature.astype(np.intp)
        for a in range(0, X.shape[0], ROUTE_ROWS):
            b = min(X.shape[0], a + ROUTE_ROWS)
            linear_values(X[a:b], leaf[a:b], self.lin_ptr, lin_feature,
                          self.lin_coef, self.lin_fill, self.lin_intercept, self.lin_set_ptr,
                          self.lin_set_code, self.lin_set_one, out[a:b])
            check_interrupt()
        return out

    def decision_path(self, X) -> sp.csr_matrix:
        """Indicator matrix (n_samples, node_count): nonzero where a row passes through a node
        (every node reached with positive weight)."""
        X = self._prepare(X)
        if not self.is_oblique and self._needs_route(X):
            _, _, indptr, indices = self._route(X, path=True)
            data = np.ones(indices.shape[0], dtype=np.intp)
            m = sp.csr_matrix((data, indices, indptr), shape=(X.shape[0], self.node_count))
            m.sort_indices()
            return m
        leaves = self.apply(X)
        indptr, indices = _path_indices(leaves, self.branch_ptr, self.branch_child,
                                        self.node_depths())
        data = np.ones(indices.shape[0], dtype=np.intp)
        return sp.csr_matrix((data, indices, indptr), shape=(leaves.shape[0], self.node_count))

    def node_sums(self, X, row_stats: np.ndarray) -> np.ndarray:
        """Sums over the rows of ``X`` reaching each node of ``row_stats`` (n_samples, S).

        A row split fractionally (missing value at a C4.5 node) adds its share at each node it
        reaches. Pruning with held-out data uses it: with ``row_stats`` one-hot classes times
        weights, row ``t`` of the result is the class weight of the held-out cases at node
        ``t``.
        """
        X = self._prepare(X)
        row_stats = np.asarray(row_stats, dtype=np.float64)
        if row_stats.ndim != 2 or row_stats.shape[0] != X.shape[0]:
            raise ValueError(f"row_stats must have shape ({X.shape[0]}, S); got "
                             f"{row_stats.shape}.")
        if self.is_oblique or sp.issparse(X):
            if not self._numeric_binary:
                raise TypeError("sparse X is supported for binary numeric trees only.")
            return np.asarray(self.decision_path(X).T.astype(np.float64) @ row_stats)
        return self._route(X, row_stats=row_stats)

    # -- importances -----------------------------------------------------------------------------
    def compute_feature_importances(self, normalize: bool = True) -> np.ndarray:
        """Weighted impurity decrease per feature (mean decrease in impurity).

        For each internal node: ``w * imp - sum over children c of w_c * imp_c``, summed per
        feature, divided by the root's weight and, with ``normalize``, scaled to sum to one.
        """
        dec = split_decreases(self.branch_ptr, self.branch_child, self.weighted_n_node_samples,
                              self.impurity, self.cat_ptr, self.missing_branch,
                              np.empty(self.node_count))
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        # bincount adds in node order, as scikit-learn's loop does: the same sums, bit for bit
        out = self._by_feature(internal, dec[internal])
        out /= self.weighted_n_node_samples[0]
        if normalize:
            total = out.sum()
            if total > 0.0:
                out /= total
        return out

    def _by_feature(self, internal: np.ndarray, dec: np.ndarray) -> np.ndarray:
        """The amounts ``dec`` of the split nodes ``internal`` summed per feature."""
        if self.is_oblique:
            return self._oblique_importances(internal, dec)
        return np.bincount(self.feature[internal], weights=dec, minlength=self.n_features)

    def held_out_decreases(self, X, targets: np.ndarray) -> np.ndarray:
        """Per feature, the sum over the rows of ``X`` of what the splits on it move each
        row's prediction towards its target: at every split node ``t`` a row passes,
        ``(value(child) - value(t)) . target``, where ``child`` is the branch the row takes
        and ``value`` the node's training prediction (class fractions, or the mean).

        Li, Wang, Basu, Kumbier & Yu (2019, "A debiased MDI feature importance measure for
        random forests", NeurIPS) show that over a tree's own training rows (``targets`` the
        one-hot classes or the values, times the weights) this is the weighted Gini or
        squared-error decrease of :meth:`compute_feature_importances` (unnormalized, times
        the root weight); over rows the tree did not see it is their MDI-oob, free of the
        impurity importance's preference for many-valued features.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        targets : ndarray of shape (n_samples, n_values)
            One-hot classes (columns in the order of the tree's classes) or ``y[:, None]``,
            each row times its weight.

        Returns
        -------
        decreases : ndarray of shape (n_features,)
        """
        targets = np.asarray(targets, dtype=np.float64)
        V = self.value[:, 0, :]
        if targets.ndim != 2 or targets.shape[1] != V.shape[1]:
            raise ValueError(f"targets must have shape (n_samples, {V.shape[1]}); got "
                             f"{targets.shape}.")
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        if internal.size == 0:
            return np.zeros(self.n_features)
        if self.n_classes[0] > 1:  # class fractions, whatever the tree stores
            s = V.sum(axis=1, keepdims=True)
            V = V / np.where(s > 0, s, 1.0)
        A = self.node_sums(X, targets)  # each node's sum of the targets of the rows reaching it
        counts = self.n_branches[internal]
        owner = np.repeat(np.arange(internal.size), counts)
        first = np.cumsum(counts) - counts  # each node's first edge among the edges
        kids = self.branch_child[np.repeat(self.branch_ptr[internal], counts)
                                 + np.arange(owner.size) - np.repeat(first, counts)]
        edge = np.einsum("ij,ij->i", V[kids] - V[internal[owner]], A[kids])
        dec = np.bincount(owner, weights=edge, minlength=internal.size)
        return self._by_feature(internal, dec)

    def _oblique_importances(self, internal: np.ndarray, dec: np.ndarray) -> np.ndarray:
        """Impurity decreases per feature when some splits are oblique: an oblique split's
        decrease is shared equally by the features of its terms. Equal shares, not shares by
        ``|weight|``, because a weight is per unit of its feature: rescaling a column (metres
        to millimetres) would move the shares while the split stays the same."""
        ptr = self.obl_ptr
        n_terms = np.diff(ptr)[internal]
        axis = n_terms == 0
        out = np.bincount(self.feature[internal[axis]], weights=dec[axis],
                          minlength=self.n_features)
        obl = ~axis
        share = np.repeat(dec[obl] / n_terms[obl], n_terms[obl])
        feats = np.concatenate([self.obl_feature[ptr[i]:ptr[i + 1]] for i in internal[obl]]
                               or [np.zeros(0, dtype=np.intp)])
        return out + np.bincount(feats, weights=share, minlength=self.n_features)

    # -- invariants ------------------------------------------------------------------------------
    def check_branches(self) -> None:
        """Check the child arrays and the branch lists (the part of :meth:`check` that the
        constructor needs before deriving ``missing_branch``)."""
        n = self.node_count
        if n < 1:
            raise ValueError("tree has no nodes")
        if self.children_right.shape[0] != n:
            raise ValueError(f"tree array children_right has {self.children_right.shape[0]} "
                             f"rows, expected {n}")
        left, right = self.children_left, self.children_right
        leaf = left == TREE_LEAF
        if np.any((right == TREE_LEAF) != leaf):
            raise ValueError("a node has exactly one child")
        ptr, kids = self.branch_ptr, self.branch_child
        if ptr.shape[0] != n + 1 or ptr[0] != 0 or np.any(np.diff(ptr) < 0) \
                or ptr[-1] != kids.shape[0]:
            raise ValueError("branch_ptr is not a valid CSR pointer over branch_child")
        nb = np.diff(ptr)
        if np.any(nb[leaf] != 0) or np.any(nb[~leaf] < 2):
            raise ValueError("a leaf has branches or an internal node has fewer than two")
        idx = np.repeat(np.arange(n), nb)
        if np.any(kids <= idx) or np.any(kids >= n):
            raise ValueError("a child index does not come after its parent or is out of range")
        counts = np.bincount(kids, minlength=n)
        if counts[0] != 0 or np.any(counts[1:] != 1):
            raise ValueError("a node is not the child of exactly one node")
        inner = np.flatnonzero(~leaf)
        if np.any(left[inner] != kids[ptr[inner]]) or \
                np.any(right[inner] != kids[ptr[inner + 1] - 1]):
            raise ValueError("children_left/children_right are not the first/last branch")

    def check(self) -> None:
        """Raise ValueError naming the first broken invariant (see module docstring).

        Called by the constructor; pure NumPy, it never follows an index it has not checked.
        """
        n = self.node_count
        if n < 1:
            raise ValueError("tree has no nodes")
        arrays = {
            "children_right": self.children_right, "feature": self.feature,
            "threshold": self.threshold, "impurity": self.impurity,
            "n_node_samples": self.n_node_samples,
            "weighted_n_node_samples": self.weighted_n_node_samples, "value": self.value,
            "missing_branch": self.missing_branch, "missing_seen": self.missing_seen,
        }
        for name, a in arrays.items():
            if a.shape[0] != n:
                raise ValueError(f"tree array {name} has {a.shape[0]} rows, expected {n}")
        if self.value.ndim != 3 or self.value.shape[1] != 1:
            raise ValueError("tree value must have shape (node_count, 1, n_values)")
        if self.value.shape[2] != self.n_classes[0]:
            raise ValueError(f"tree value has {self.value.shape[2]} columns but n_classes is "
                             f"{self.n_classes[0]}")
        if not np.all(np.isfinite(self.value)):
            raise ValueError("a node value is not finite")
        self.check_branches()
        leaf = self.children_left == TREE_LEAF
        inner = ~leaf
        if np.any(self.feature[leaf] != TREE_UNDEFINED):
            raise ValueError("a leaf has a split feature")
        if np.any(self.threshold[leaf] != TREE_UNDEFINED):
            raise ValueError("a leaf has a threshold")
        f = self.feature[inner]
        if np.any(f < 0) or np.any(f >= self.n_features):
            raise ValueError("a split feature is out of range")
        if np.any(np.isnan(self.threshold[inner])) or np.any(self.threshold[inner] == -np.inf):
            raise ValueError("a threshold is NaN or -inf")
        nb = self.n_branches
        cptr = self.cat_ptr
        if cptr.shape[0] != n + 1 or cptr[0] != 0 or np.any(np.diff(cptr) < 0) \
                or cptr[-1] != self.cat_branch.shape[0]:
            raise ValueError("cat_ptr is not a valid CSR pointer over cat_branch")
        is_cat = np.diff(cptr) > 0
        if np.any(is_cat & leaf):
            raise ValueError("a leaf has a categorical branch table")
        if np.any(nb[inner & ~is_cat] != 2):
            raise ValueError("a numeric split does not have exactly two branches")
        owner = np.repeat(np.arange(n), np.diff(cptr))
        cb = self.cat_branch
        if np.any(cb < -1) or np.any(cb >= nb[owner]):
            raise ValueError("a categorical level is routed to a branch that does not exist")
        mb = self.missing_branch
        if np.any(mb[leaf] != TREE_UNDEFINED) or np.any(mb[inner] < MISSING_FRACTIONAL) \
                or np.any(mb[inner] >= nb[inner]):
            raise ValueError("missing_branch must be -2 at leaves and a branch or -1 elsewhere")
        if np.any(self.n_node_samples <= 0) or np.any(self.weighted_n_node_samples <= 0):
            raise ValueError("a node has no samples")
        kids = self.branch_child
        inner_idx = np.flatnonzero(inner)
        owner = np.repeat(np.arange(n), nb)
        nsum = np.zeros(n, dtype=np.intp)
        np.add.at(nsum, owner, self.n_node_samples[kids])
        exact = inner & (mb != MISSING_FRACTIONAL)
        if np.any(self.n_node_samples[exact] != nsum[exact]) or \
                np.any(self.n_node_samples[inner] > nsum[inner]):
            raise ValueError("n_node_samples of a node is not the sum of its children's")
        w = self.weighted_n_node_samples
        wsum = np.zeros(n)
        np.add.at(wsum, owner, w[kids])
        if not np.allclose(w[inner_idx], wsum[inner_idx], rtol=1e-9, atol=0.0):
            raise ValueError("weighted_n_node_samples of a node is not the sum of its children's")
        if self.lin_ptr is not None:
            self._check_linear(leaf)
        if self.obl_ptr is not None:
            self._check_oblique(leaf, is_cat)

    def _check_oblique(self, leaf: np.ndarray, is_cat: np.ndarray) -> None:
        n = self.node_count
        op = self.obl_ptr
        if op.ndim != 1 or op.shape[0] != n + 1 or op[0] != 0 or np.any(np.diff(op) < 0):
            raise ValueError("obl_ptr is not a valid CSR pointer over the oblique terms")
        t = int(op[-1])
        for name in ("obl_feature", "obl_weight"):
            a = getattr(self, name)
            if a.ndim != 1 or a.shape[0] != t:
                raise ValueError(f"tree array {name} has {a.shape[0]} entries, expected {t}")
        nt = np.diff(op)
        if np.any(nt[leaf] != 0):
            raise ValueError("a leaf has oblique terms")
        if t == 0:
            return
        if np.any(is_cat) or np.any(self.missing_branch == MISSING_FRACTIONAL):
            raise ValueError("a tree with oblique splits must be binary and numeric (no "
                             "categorical node, no fractional missing-value routing)")
        f = self.obl_feature
        if np.any(f < 0) or np.any(f >= self.n_features):
            raise ValueError("an oblique term's feature is out of range")
        wt = self.obl_weight
        if not np.all(np.isfinite(wt)) or np.any(wt == 0.0):
            raise ValueError("an oblique term's weight is zero or not finite")
        owner = np.repeat(np.arange(n), nt)
        same = owner[1:] == owner[:-1]
        if np.any(f[1:][same] <= f[:-1][same]):
            raise ValueError("the terms of an oblique split do not name distinct features in "
                             "increasing order")
        nodes = np.flatnonzero(nt)
        if not np.all(np.isfinite(self.threshold[nodes])):
            raise ValueError("an oblique split's threshold is not finite")
        # the feature of the largest |weight| (the first on ties) stands for the node
        mag = np.abs(wt)
        best = np.maximum.reduceat(mag, op[nodes])
        first = np.array([a + int(np.argmax(mag[a:b] == m)) for a, b, m in
                          zip(op[nodes].tolist(), op[nodes + 1].tolist(), best.tolist(),
                              strict=True)], dtype=np.intp)
        if np.any(self.feature[nodes] != f[first]):
            raise ValueError("the feature of an oblique node is not its term of largest "
                             "|weight|")

    def _check_linear(self, leaf: np.ndarray) -> None:
        n = self.node_count
        lp = self.lin_ptr
        if lp.ndim != 1 or lp.shape[0] != n + 1 or lp[0] != 0 or np.any(np.diff(lp) < 0):
            raise ValueError("lin_ptr is not a valid CSR pointer over the linear terms")
        t = int(lp[-1])
        for name in ("lin_feature", "lin_coef", "lin_fill"):
            a = getattr(self, name)
            if a.ndim != 1 or a.shape[0] != t:
                raise ValueError(f"tree array {name} has {a.shape[0]} entries, expected {t}")
        if self.lin_intercept.ndim != 1 or self.lin_intercept.shape[0] != n:
            raise ValueError(f"tree array lin_intercept has {self.lin_intercept.shape[0]} rows, "
                             f"expected {n}")
        if np.any(np.diff(lp)[~leaf] != 0):
            raise ValueError("an internal node has linear terms")
        if np.any(self.missing_branch == MISSING_FRACTIONAL):
            # a row would reach several leaves, and their models are not averaged
            raise ValueError("a tree with linear leaves cannot send missing values down every "
                             "branch")
        f = self.lin_feature
        if np.any(f < 0) or np.any(f >= self.n_features):
            raise ValueError("a linear term's feature is out of range")
        for name in ("lin_coef", "lin_fill", "lin_intercept"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(f"a value of {name} is not finite")
        sp_ = self.lin_set_ptr
        if sp_.ndim != 1 or sp_.shape[0] != t + 1 or sp_[0] != 0 or np.any(np.diff(sp_) < 0) \
                or sp_[-1] != self.lin_set_code.shape[0]:
            raise ValueError("lin_set_ptr is not a valid CSR pointer over the level sets")
        if self.lin_set_one.ndim != 1 or self.lin_set_one.shape[0] != self.lin_set_code.shape[0]:
            raise ValueError("lin_set_one and lin_set_code differ in length")
        if np.any(self.lin_set_code < 0):
            raise ValueError("a level code of a linear term is negative")

    # -- copies ----------------------------------------------------------------------------------
    def kept_order(self, keep_leaf: np.ndarray) -> np.ndarray:
        """The nodes :meth:`subtree` keeps, in its new numbering: ``order[k]`` is the node
        that becomes node ``k``."""
        ptr, kids = self.branch_ptr, self.branch_child
        order = []
        stack = [0]
        while stack:
            i = stack.pop()
            order.append(i)
            if ptr[i + 1] > ptr[i] and not keep_leaf[i]:
                stack.extend(kids[ptr[i]:ptr[i + 1]][::-1].tolist())
        return np.asarray(order, dtype=np.intp)

    def subtree(self, keep_leaf: np.ndarray, order: np.ndarray | None = None) -> Tree:
        """The tree cut at the nodes where ``keep_leaf`` is True, renumbered in preorder.

        Nodes below a cut disappear; a cut node becomes a leaf with its own value. The new tree's
        nodes are numbered depth-first, first branch first (scikit-learn's pruned-tree order).
        Linear leaves are not carried over (a cut node has no model of its own): the result
        is a constant tree; :func:`treelearn.model_trees.fit_linear_leaves` fits models to it.
        ``order``: :meth:`kept_order` of ``keep_leaf`` when the caller has it already.
        """
        ptr, kids = self.branch_ptr, self.branch_child
        if order is None:
            order = self.kept_order(keep_leaf)
        new_id = np.full(self.node_count, -1, dtype=np.intp)
        new_id[order] = np.arange(order.size)
        cut = keep_leaf[order] | (self.children_left[order] == TREE_LEAF)
        nb = np.where(cut, 0, np.diff(ptr)[order])
        new_ptr = np.zeros(order.size + 1, dtype=np.intp)
        new_ptr[1:] = np.cumsum(nb)
        kept = order[~cut]
        new_kids = new_id[np.concatenate([kids[ptr[i]:ptr[i + 1]] for i in kept])
                          if kept.size else np.zeros(0, dtype=np.intp)]
        ncat = np.where(cut, 0, np.diff(self.cat_ptr)[order])
        new_cptr = np.zeros(order.size + 1, dtype=np.intp)
        new_cptr[1:] = np.cumsum(ncat)
        cats = [self.cat_branch[self.cat_ptr[i]:self.cat_ptr[i + 1]] for i in kept]
        new_cat = np.concatenate(cats) if cats else np.zeros(0, dtype=np.intp)
        first = np.where(cut, TREE_LEAF, new_id[self.children_left[order]])
        last = np.where(cut, TREE_LEAF, new_id[self.children_right[order]])
        obl = {}
        if self.obl_ptr is not None:
            nt = np.where(cut, 0, np.diff(self.obl_ptr)[order])
            optr = np.zeros(order.size + 1, dtype=np.intp)
            optr[1:] = np.cumsum(nt)
            take = np.concatenate([np.arange(self.obl_ptr[i], self.obl_ptr[i + 1])
                                   for i in kept] or [np.zeros(0, dtype=np.intp)])
            obl = {"obl_ptr": optr, "obl_feature": self.obl_feature[take],
                   "obl_weight": self.obl_weight[take]}
        return Tree(
            self.n_features, self.n_classes, first, last,
            np.where(cut, TREE_UNDEFINED, self.feature[order]),
            np.where(cut, float(TREE_UNDEFINED), self.threshold[order]),
            self.impurity[order], self.n_node_samples[order],
            self.weighted_n_node_samples[order], self.value[order],
            branch_ptr=new_ptr, branch_child=new_kids, cat_ptr=new_cptr, cat_branch=new_cat,
            missing_branch=np.where(cut, TREE_UNDEFINED, self.missing_branch[order]),
            missing_seen=np.where(cut, False, self.missing_seen[order]), **obl, _trusted=True,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        if (self.lin_ptr is None) != (other.lin_ptr is None) or \
                (self.obl_ptr is None) != (other.obl_ptr is None):
            return False
        lin = LINEAR_ARRAYS if self.lin_ptr is not None else ()
        obl = OBLIQUE_ARRAYS if self.obl_ptr is not None else ()
        return self.n_features == other.n_features and all(
            np.array_equal(getattr(self, a), getattr(other, a))
            for a in _NODE_ARRAYS + _EXTRA_ARRAYS + lin + obl
        )

    __hash__ = None  # mutable container of arrays

    def __repr__(self) -> str:
        lin = ", linear leaves" if self.lin_ptr is not None else ""
        lin += ", oblique splits" if self.is_oblique else ""
        return (f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves}, "
                f"max_depth={self.max_depth}, n_features={self.n_features}{lin})")
