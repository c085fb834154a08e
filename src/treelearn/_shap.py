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
4,000 rows of that tree, two threads 0.13 s; SHAP's explainer, one thread, 0.24 s. Two
more steps (2026-12-06, same tree and rows, one thread 0.30 s before them, SHAP 0.25-0.27 s):
a leaf's entries whose branch the row does not take all get the same value, ``-sum_j pw[j]
back[j]``, summed once per leaf (0.28 s); and the ratios come from tables made once per call
(:func:`ratio_tables`) instead of divisions at every step (0.26 s). The issue's forest (100
trees of depth 10, 2,000 rows, two threads): 6.79 s -> 6.18 s, SHAP's explainer 13.5 s
(``bench_shap.py``, best of 3: 6.52 s against 13.49 s). A first call on an empty kernel cache
compiles for about 3 s (values), 4.3 s (interaction values), 4 s (an oblique tree).

Oblique splits read several columns, and the game extends as the path-dependent value
function reads it: a node is known when every column it reads is, else the row goes down
every branch at its training share. TreeSHAP's polynomial path bookkeeping needs one column
per node, so an oblique tree is explained by multiplying its leaves' terms out: each leaf's
``prod_j (z_j + (o_j - z_j) [node j known])`` is a sum of unanimity games on the unions of
the nodes' columns, whose Shapley values are ``1 / |union|`` to each member (and the
interaction index ``1 / (|union| - 1)``, halved as SHAP reports it). A path keeps at most
``2 ** min(splits, columns)`` unions (equal ones merged), so the work is exponential in the
columns a path reads; :data:`MAX_SUBSETS` bounds it with a ValueError rather than a hang.
On an axis-aligned tree the same expansion gives TreeSHAP's values (the enumerated twin in
the tests checks both kinds of tree against the same game).

AdaBoost's decision function is a weighted sum of its learners' votes, each a function of
the leaf a row reaches, so its values are the sum of the learners' (:func:`sum_of_trees`,
with the votes as node values); its probabilities, a softmax of that sum, are not explained.

Interaction values are SHAP's (Lundberg et al. 2020, Methods): for each column ``h`` a split
reads, the row's values in the game where ``h`` is always known and in the game where it
never is, half their difference off the diagonal. Both games are the same walk with ``h``
kept off the path and its nodes' shares carried as a factor of the branch's weight, so one
kernel (``_row_shap``'s ``cond``) serves both; the values' walk pays nothing for it (4,000
rows of the depth-10 tree: 0.30 s one thread, 0.15 s two, before and after). A row costs
``2 m + 1`` walks, ``m`` the columns the tree splits on: on 200 rows of that tree 0.74 s one
thread, 0.39 s two; SHAP's explainer 0.65 s.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._interrupt import check as check_interrupt
from ._memory import check as check_memory
from ._tree import Tree, _branch_of, _oblique_branch
from .engine.config import njit, pjit, prange, tiny

#: Rows per call of the compiled kernel: a Ctrl-C is taken between calls.
SHAP_ROWS = 4096


@njit
def ratio_tables(levels):
    """The ratios the path arithmetic multiplies by, for paths of ``ud + 1`` entries (row
    ``ud``), entry ``i``: ``up = (ud + 1) / (i + 1)``, ``down = (ud - i) / (ud + 1)``,
    ``back = (ud + 1) / (ud - i)`` and ``fwd = (i + 1) / (ud + 1)``; made once per call, so
    the walk multiplies where the printed algorithm divides."""
    up = np.zeros((levels, levels))
    down = np.zeros((levels, levels))
    back = np.zeros((levels, levels))
    fwd = np.zeros((levels, levels))
    for ud in range(levels):
        for i in range(ud + 1):
            up[ud, i] = (ud + 1) / (i + 1)
            down[ud, i] = (ud - i) / (ud + 1)
            fwd[ud, i] = (i + 1) / (ud + 1)
            if i < ud:
                back[ud, i] = (ud + 1) / (ud - i)
    return up, down, back, fwd


@tiny
def _extend(feat, zf, of, pw, ud, p_z, p_o, p_i, down, fwd):
    """Lundberg et al.'s ``EXTEND``: the path ``[0, ud)`` grows by column ``p_i`` with zero
    fraction ``p_z`` and one fraction ``p_o``; ``pw`` are the path's permutation weights;
    ``down``/``fwd``: the ratio tables' row ``ud`` (:func:`ratio_tables`)."""
    feat[ud] = p_i
    zf[ud] = p_z
    of[ud] = p_o
    pw[ud] = 1.0 if ud == 0 else 0.0
    for i in range(ud - 1, -1, -1):
        pw[i + 1] += p_o * pw[i] * fwd[i]
        pw[i] = p_z * pw[i] * down[i]


@tiny
def _unwind(feat, zf, of, pw, ud, k, up, down, back):
    """``UNWIND``: entry ``k`` taken out of the path ``[0, ud]`` (its weights undone);
    ``up``/``down``/``back``: the ratio tables' row ``ud``."""
    o = of[k]
    z = zf[k]
    nxt = pw[ud]
    if o != 0.0:
        inv_o = 1.0 / o
        for i in range(ud - 1, -1, -1):
            t = pw[i]
            pw[i] = nxt * up[i] * inv_o
            nxt = t - pw[i] * z * down[i]
    else:
        inv_z = 1.0 / z
        for i in range(ud - 1, -1, -1):
            pw[i] = pw[i] * back[i] * inv_z
    for i in range(k, ud):
        feat[i] = feat[i + 1]
        zf[i] = zf[i + 1]
        of[i] = of[i + 1]


@njit
def _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
              missing_branch, wnode, value, cond, cond_feat, feat, zf, of, pw, uds, stack_n,
              stack_lv, stack_z, stack_o, stack_f, stack_c, up, down, back, fwd, phi):
    """Add row ``i``'s SHAP values (``phi[column, output]``) of one tree.

    ``cond``: 0 for the values; +1 / -1 for the values of the game in which column
    ``cond_feat`` is always known / never known (SHAP's conditioned runs, from which the
    interaction values are made): that column never enters the path, and a node splitting on
    it passes on to each branch the row's share (+1) or the training share (-1) as a factor
    of the branch's weight (``stack_c``).

    ``feat``/``zf``/``of``/``pw`` hold one path per depth (row ``L``: the path at a node of
    depth ``L - 1`` after its ``EXTEND``), ``uds[L]`` its last index; the stack holds the
    nodes still to visit with their parent's depth and the fractions their entry adds;
    ``up``/``down``/``back``/``fwd``: the ratio tables (:func:`ratio_tables`)."""
    V = value.shape[1]
    stack_n[0] = 0
    stack_lv[0] = -1
    stack_z[0] = 1.0
    stack_o[0] = 1.0
    stack_f[0] = -1
    stack_c[0] = 1.0
    top = 1
    while top > 0:
        top -= 1
        node = stack_n[top]
        parent = stack_lv[top]
        cf = stack_c[top]
        lv = parent + 1
        ud = 0
        if parent >= 0:
            ud = uds[parent] + 1
            for q in range(ud):
                feat[lv, q] = feat[parent, q]
                zf[lv, q] = zf[parent, q]
                of[lv, q] = of[parent, q]
                pw[lv, q] = pw[parent, q]
        if cond != 0 and stack_f[top] == cond_feat:
            ud -= 1  # the conditioned column stays off the path
        else:
            _extend(feat[lv], zf[lv], of[lv], pw[lv], ud, stack_z[top], stack_o[top],
                    stack_f[top], down[ud], fwd[ud])
        b0 = branch_ptr[node]
        k = branch_ptr[node + 1] - b0
        if k == 0:
            up_ = up[ud]
            down_ = down[ud]
            back_ = back[ud]
            cold = 0.0
            have_cold = False
            for q in range(1, ud + 1):
                # Lundberg et al.'s UNWOUND-SUM of entry q, written out here: the printed form
                # divides twice per step, and these sums are three quarters of a row's time
                # (one thread, depth-10 tree, 4,000 rows: 0.43 s dividing, 0.26 s from the
                # tables; as a helper taking the path's rows, 0.58 s; SHAP's C++ 0.24 s)
                o = of[lv, q]
                z = zf[lv, q]
                if o == 0.0:
                    # a branch the row does not take: the sum is (1 / z) sum_j pw[j] back[j]
                    # and its weight (o - z) = -z, so every such entry of the leaf gets the
                    # same -sum_j pw[j] back[j], summed once per leaf
                    if not have_cold:
                        for j in range(ud):
                            cold += pw[lv, j] * back_[j]
                        have_cold = True
                    scale = -cold * cf if z != 0.0 else 0.0
                else:
                    nxt = pw[lv, ud]
                    w = 0.0
                    inv_o = 1.0 / o
                    for j in range(ud - 1, -1, -1):
                        t = nxt * up_[j] * inv_o
                        w += t
                        nxt = pw[lv, j] - t * z * down_[j]
                    scale = w * (o - z) * cf
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
                _unwind(feat[lv], zf[lv], of[lv], pw[lv], ud, q, up[ud], down[ud], back[ud])
                ud -= 1
                break
        uds[lv] = ud
        conditioned = cond != 0 and d == cond_feat
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
            c = cf
            if conditioned:
                c = cf * (o if cond > 0 else z)
                if c == 0.0:
                    continue
            elif z * iz == 0.0 and o * io == 0.0:
                continue  # every weight below would be zero: nothing to add
            stack_n[top] = branch_child[b0 + b]
            stack_lv[top] = lv
            stack_z[top] = z * iz
            stack_o[top] = o * io
            stack_f[top] = d
            stack_c[top] = c
            top += 1


@tiny
def _stack_size(branch_ptr, max_depth):
    """Entries a depth-first walk can hold at once: at most every branch of each node on the
    path to the deepest leaf."""
    widest = 1
    for node in range(branch_ptr.shape[0] - 1):
        widest = max(widest, branch_ptr[node + 1] - branch_ptr[node])
    return (max_depth + 1) * widest + 1


@tiny
def _walk_sizes(X, branch_ptr, max_depth, n_parts):
    """Rows, path rows (depths), stack entries and rows per part of one call."""
    n = X.shape[0]
    return n, max_depth + 2, _stack_size(branch_ptr, max_depth), (n + n_parts - 1) // n_parts


@tiny
def _walk_buffers(levels, size):
    """One part's paths (one row per depth) and stack, for :func:`_row_shap`."""
    return (np.empty((levels, levels), dtype=np.int64), np.empty((levels, levels)),
            np.empty((levels, levels)), np.empty((levels, levels)),
            np.empty(levels, dtype=np.int64), np.empty(size, dtype=np.int64),
            np.empty(size, dtype=np.int64), np.empty(size), np.empty(size),
            np.empty(size, dtype=np.int64), np.empty(size))


@pjit
def tree_shap(X, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
              missing_branch, wnode, value, max_depth, n_parts, phi):
    """Add every row's SHAP values of one tree to ``phi`` (rows x columns x outputs); the rows
    in ``n_parts`` parts run in parallel, each with its own paths and stack."""
    n, levels, size, per = _walk_sizes(X, branch_ptr, max_depth, n_parts)
    up, down, back, fwd = ratio_tables(levels)
    for part in prange(n_parts):
        feat, zf, of, pw, uds, stack_n, stack_lv, stack_z, stack_o, stack_f, stack_c = \
            _walk_buffers(levels, size)
        for i in range(part * per, min(n, (part + 1) * per)):
            _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
                      missing_branch, wnode, value, 0, -1, feat, zf, of, pw, uds, stack_n,
                      stack_lv, stack_z, stack_o, stack_f, stack_c, up, down, back, fwd, phi[i])


@pjit
def tree_shap_interactions(X, feature, threshold, branch_ptr, branch_child, cat_ptr,
                           cat_branch, missing_branch, wnode, value, max_depth, used, n_parts,
                           out):
    """Add every row's SHAP interaction values of one tree to ``out`` (rows x columns x
    columns x outputs), as SHAP defines them (Lundberg et al. 2020, Methods): for each column
    ``h`` the tree splits on (``used``; the others' rows and columns stay zero), half the
    difference between every column's value in the game where ``h`` is always known and in
    the game where it never is, off the diagonal; on it, ``h``'s value less the rest of its
    row, so that each row of the matrix adds up to the column's SHAP value."""
    n, levels, size, per = _walk_sizes(X, branch_ptr, max_depth, n_parts)
    up, down, back, fwd = ratio_tables(levels)
    p = out.shape[1]
    V = value.shape[1]
    for part in prange(n_parts):
        feat, zf, of, pw, uds, stack_n, stack_lv, stack_z, stack_o, stack_f, stack_c = \
            _walk_buffers(levels, size)
        phi = np.empty((p, V))
        on = np.empty((p, V))
        off = np.empty((p, V))
        for i in range(part * per, min(n, (part + 1) * per)):
            phi[:] = 0.0
            _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch,
                      missing_branch, wnode, value, 0, -1, feat, zf, of, pw, uds, stack_n,
                      stack_lv, stack_z, stack_o, stack_f, stack_c, up, down, back, fwd, phi)
            for h in used:
                on[:] = 0.0
                off[:] = 0.0
                _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr,
                          cat_branch, missing_branch, wnode, value, 1, h, feat, zf, of, pw,
                          uds, stack_n, stack_lv, stack_z, stack_o, stack_f, stack_c, up, down,
                          back, fwd, on)
                _row_shap(X, i, feature, threshold, branch_ptr, branch_child, cat_ptr,
                          cat_branch, missing_branch, wnode, value, -1, h, feat, zf, of, pw,
                          uds, stack_n, stack_lv, stack_z, stack_o, stack_f, stack_c, up, down,
                          back, fwd, off)
                for v in range(V):
                    rest = 0.0
                    for j in used:
                        if j != h:
                            x = (on[j, v] - off[j, v]) / 2.0
                            out[i, h, j, v] += x
                            rest += x
                    out[i, h, h, v] += phi[h, v] - rest


#: The most subsets of columns the oblique kernel keeps on one path (see :func:`_subset_paths`).
MAX_SUBSETS = 1 << 20


@njit
def _path_subsets(X, i, feature, threshold, obl_ptr, obl_feature, obl_weight, missing_branch,
                  branch_ptr, branch_child, wnode, value, leaves, leaf_ptr, path_node,
                  path_branch, set_ptr, set_col, taken, local, cols, masks, coefs, masks2,
                  coefs2, phi, inter, interactions):
    """Add row ``i``'s SHAP values (``phi[column, output]``), or with ``interactions`` its
    interaction values (``inter[column, column, output]``), of a tree whose nodes may read
    several columns (oblique splits).

    A node is known when every column it reads is, so a leaf's term of the game is
    ``value * prod_j (z_j + (o_j - z_j) [R_j known])``, ``R_j`` node ``j``'s columns.
    Multiplied out it is a sum of unanimity games on unions of the ``R_j``: the path's
    subsets, built node by node (``masks``/``coefs``, one bit per column in order of
    appearance, equal unions merged). A unanimity game on ``U`` gives each member ``1 / |U|``
    (and, pairwise, ``1 / (2 (|U| - 1))``, SHAP's half of the interaction index)."""
    V = value.shape[1]
    for node in range(branch_ptr.shape[0] - 1):
        if branch_ptr[node + 1] > branch_ptr[node]:
            taken[node] = _oblique_branch(X, i, node, feature, threshold, obl_ptr,
                                          obl_feature, obl_weight, missing_branch)
    for q in range(leaves.shape[0]):
        leaf = leaves[q]
        s = 1
        masks[0] = 0
        coefs[0] = 1.0
        k = 0
        for t in range(leaf_ptr[q], leaf_ptr[q + 1]):
            node = path_node[t]
            b = path_branch[t]
            b0 = branch_ptr[node]
            z = wnode[branch_child[b0 + b]] / (wnode[branch_child[b0]]
                                               + wnode[branch_child[b0 + 1]])
            o = 1.0 if taken[node] == b else 0.0
            r = 0
            for e in range(set_ptr[node], set_ptr[node + 1]):
                c = set_col[e]
                if local[c] < 0:
                    local[c] = k
                    cols[k] = c
                    k += 1
                r |= 1 << local[c]
            n2 = 0
            for e in range(s):
                if z != 0.0:
                    masks2[n2] = masks[e]
                    coefs2[n2] = coefs[e] * z
                    n2 += 1
                if o != z:
                    masks2[n2] = masks[e] | r
                    coefs2[n2] = coefs[e] * (o - z)
                    n2 += 1
            order = np.argsort(masks2[:n2])
            s = 0
            for e in order:
                if s > 0 and masks[s - 1] == masks2[e]:
                    coefs[s - 1] += coefs2[e]
                else:
                    masks[s] = masks2[e]
                    coefs[s] = coefs2[e]
                    s += 1
        for e in range(s):
            m = masks[e]
            if m == 0 or coefs[e] == 0.0:
                continue  # the empty union is the expected value's share
            u = 0
            for j in range(k):
                if (m >> j) & 1:
                    u += 1
            for v in range(V):
                a = coefs[e] * value[leaf, v]
                for j in range(k):
                    if not (m >> j) & 1:
                        continue
                    if not interactions:
                        phi[cols[j], v] += a / u
                    elif u == 1:
                        inter[cols[j], cols[j], v] += a
                    else:
                        inter[cols[j], cols[j], v] += a * (1.0 / u - 0.5)
                        for j2 in range(k):
                            if j2 != j and (m >> j2) & 1:
                                inter[cols[j], cols[j2], v] += a / (2.0 * (u - 1))
        for j in range(k):
            local[cols[j]] = -1


@pjit
def subsets_shap(X, feature, threshold, obl_ptr, obl_feature, obl_weight, missing_branch,
                 branch_ptr, branch_child, wnode, value, leaves, leaf_ptr, path_node,
                 path_branch, set_ptr, set_col, n_subsets, n_parts, phi, inter, interactions):
    """Add every row's values (``phi``: rows x columns x outputs) or interaction values
    (``inter``: rows x columns x columns x outputs) of an oblique tree; the rows in
    ``n_parts`` parts run in parallel, each with its own subsets."""
    n = X.shape[0]
    p = phi.shape[1] if not interactions else inter.shape[1]
    per = (n + n_parts - 1) // n_parts
    for part in prange(n_parts):
        taken = np.zeros(branch_ptr.shape[0] - 1, dtype=np.int64)
        local = np.full(p, -1, dtype=np.int64)
        cols = np.empty(64, dtype=np.int64)
        masks = np.empty(n_subsets, dtype=np.int64)
        coefs = np.empty(n_subsets)
        masks2 = np.empty(2 * n_subsets, dtype=np.int64)
        coefs2 = np.empty(2 * n_subsets)
        for i in range(part * per, min(n, (part + 1) * per)):
            _path_subsets(X, i, feature, threshold, obl_ptr, obl_feature, obl_weight,
                          missing_branch, branch_ptr, branch_child, wnode, value, leaves,
                          leaf_ptr, path_node, path_branch, set_ptr, set_col, taken, local,
                          cols, masks, coefs, masks2, coefs2,
                          phi[i] if not interactions else phi[0],
                          inter[i] if interactions else inter[0], interactions)


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


def _used_columns(tree: Tree, feature: np.ndarray) -> np.ndarray:
    """The columns (of ``feature``, the tree's or their ensemble's mapping) some split reads."""
    inner = tree.branch_ptr[1:] > tree.branch_ptr[:-1]
    return np.unique(feature[inner]).astype(np.int64)


def _subset_paths(tree: Tree, obl_feature: np.ndarray, feature: np.ndarray):
    """What :func:`subsets_shap` walks: the leaves, each leaf's path (its nodes and the
    branch taken at each), each node's distinct columns, and how many subsets of columns a
    path can hold (at most ``2 ** min(splits, columns)`` on it). ValueError where a path reads
    more than 62 columns or would hold more than :data:`MAX_SUBSETS` subsets."""
    n = tree.node_count
    ptr, child = tree.branch_ptr, tree.branch_child
    sets = []
    for node in range(n):
        if ptr[node + 1] == ptr[node]:
            sets.append(np.zeros(0, dtype=np.int64))
        elif tree.obl_ptr[node + 1] > tree.obl_ptr[node]:
            sets.append(np.unique(obl_feature[tree.obl_ptr[node]:tree.obl_ptr[node + 1]]))
        else:
            sets.append(np.asarray([feature[node]], dtype=np.int64))
    set_ptr = np.zeros(n + 1, dtype=np.int64)
    set_ptr[1:] = np.cumsum([len(c) for c in sets])
    set_col = np.concatenate(sets).astype(np.int64) if n else np.zeros(0, np.int64)
    leaves, leaf_ptr, path_node, path_branch = [], [0], [], []
    most = 1
    stack = [(0, (), ())]
    while stack:
        node, nodes, branches = stack.pop()
        if ptr[node + 1] == ptr[node]:
            leaves.append(node)
            path_node.extend(nodes)
            path_branch.extend(branches)
            leaf_ptr.append(len(path_node))
            cols = len({int(c) for j in nodes for c in sets[j]})
            if cols > 62:
                raise ValueError(f"SHAP values of this oblique tree are not computed: the "
                                 f"path to leaf {node} reads {cols} columns, more than 62.")
            most = max(most, 1 << min(len(nodes), cols))
            continue
        for b in range(ptr[node + 1] - ptr[node] - 1, -1, -1):
            stack.append((int(child[ptr[node] + b]), nodes + (node,), branches + (b,)))
    if most > MAX_SUBSETS:
        raise ValueError(f"SHAP values of this oblique tree are not computed: a path holds up "
                         f"to {most:,} subsets of the columns it reads, more than "
                         f"{MAX_SUBSETS:,}; prune the tree or limit its depth.")
    as64 = lambda a: np.asarray(a, dtype=np.int64)  # noqa: E731
    return (as64(leaves), as64(leaf_ptr), as64(path_node), as64(path_branch), set_ptr,
            set_col, np.int64(most))


def _by_blocks(tree: Tree, X, value: np.ndarray, out: np.ndarray, columns, n_threads,
               interactions: bool) -> np.ndarray:
    """Run the kernel over blocks of rows (a Ctrl-C is taken between them), sparse rows made
    dense a block at a time (the kernel reads a row's value per node). ``columns``: the
    column of ``X`` each of the tree's columns is (None: the same)."""
    import numba

    _check_tree(tree)
    sparse = sp.issparse(X)
    if not sparse:
        X = np.ascontiguousarray(X, dtype=np.float32)
    n = X.shape[0]
    threads = numba.get_num_threads() if n_threads is None else n_threads
    feature = np.asarray(tree.feature, dtype=np.int64)
    if columns is not None:
        columns = np.asarray(columns, dtype=np.int64)
        feature = np.where(feature >= 0, columns[np.maximum(feature, 0)], -1)
    oblique = tree.is_oblique
    value = np.ascontiguousarray(value)
    if oblique:
        obl_feature = np.asarray(tree.obl_feature, dtype=np.int64)
        if columns is not None:
            obl_feature = columns[obl_feature]
        paths = _subset_paths(tree, obl_feature, feature)
        args = (feature, tree.threshold, tree.obl_ptr, obl_feature, tree.obl_weight,
                tree.missing_branch, tree.branch_ptr, tree.branch_child,
                tree.weighted_n_node_samples, value, *paths)
    else:
        args = (feature, tree.threshold, tree.branch_ptr, tree.branch_child, tree.cat_ptr,
                tree.cat_branch, tree.missing_branch, tree.weighted_n_node_samples, value,
                np.int64(tree.max_depth))
    step = SHAP_ROWS
    if interactions:
        used = _used_columns(tree, feature)
        # each row is 2 * used + 1 walks: blocks of about the values' work
        step = max(1, SHAP_ROWS // (2 * len(used) + 1))
    for a in range(0, n, step):
        b = min(n, a + step)
        # an oblique tree's parts each hold their subsets: one part per thread
        parts = np.int64(max(1, min(threads * (1 if oblique else 4), b - a)))
        block = np.ascontiguousarray(X[a:b].toarray(), dtype=np.float32) if sparse else X[a:b]
        if oblique:  # the output the call does not write is a placeholder
            if interactions:
                subsets_shap(block, *args, parts, np.zeros((1, 1, 1)), out[a:b], True)
            else:
                subsets_shap(block, *args, parts, out[a:b], np.zeros((1, 1, 1, 1)), False)
        elif interactions:
            tree_shap_interactions(block, *args, used, parts, out[a:b])
        else:
            tree_shap(block, *args, parts, out[a:b])
        check_interrupt()
    return out


def tree_shap_values(tree: Tree, X, value: np.ndarray, out: np.ndarray | None = None,
                     n_threads: int | None = None,
                     columns: np.ndarray | None = None) -> np.ndarray:
    """SHAP values of the tree's predictions (its node values ``value``, :func:`leaf_values`)
    for the rows of ``X`` (validated: float32, dense or CSR): shape ``(n_samples, n_columns,
    n_outputs)``, added to ``out`` when given. ``columns``: the column of ``X`` each of the
    tree's columns is, where they differ (an ensemble's member grown on a subspace)."""
    if out is None:
        out = np.zeros((X.shape[0], X.shape[1], value.shape[1]))
    return _by_blocks(tree, X, value, out, columns, n_threads, False)


def tree_shap_interaction_values(tree: Tree, X, value: np.ndarray,
                                 out: np.ndarray | None = None, n_threads: int | None = None,
                                 columns: np.ndarray | None = None) -> np.ndarray:
    """SHAP interaction values, shape ``(n_samples, n_columns, n_columns, n_outputs)``, added
    to ``out`` when given; arguments as :func:`tree_shap_values`."""
    if out is None:
        out = np.zeros((X.shape[0], X.shape[1], X.shape[1], value.shape[1]))
    return _by_blocks(tree, X, value, out, columns, n_threads, True)


def check_output_memory(n: int, p: int, outputs: int, what: str, square: bool = False) -> None:
    """Refuse, before allocating it, an output of ``n x p x outputs`` floats (``n x p x p x
    outputs`` with ``square``) that does not fit in memory."""
    cells = 1.0 * n * p * outputs * (p if square else 1)
    shape = f"{n:,} rows x {p:,} columns" + (f" x {p:,} columns" if square else "")
    check_memory(8.0 * cells, f"{what} for {shape}", "Explain fewer rows at a time.")


def _what(interactions: bool) -> str:
    return "SHAP interaction values" if interactions else "SHAP values"


def estimator_shap(model, X, classifier: bool, interactions: bool = False) -> np.ndarray:
    """A fitted single-tree estimator's SHAP values for its validated ``X``: ``(n, p)`` for a
    regressor, ``(n, p, n_classes)`` for a classifier; with ``interactions`` the interaction
    values, ``(n, p, p)`` and ``(n, p, p, n_classes)``."""
    tree = model.tree_
    _check_tree(tree)
    value = leaf_values(tree, classifier)
    check_output_memory(X.shape[0], tree.n_features, value.shape[1], _what(interactions),
                        interactions)
    run = tree_shap_interaction_values if interactions else tree_shap_values
    phi = run(tree, X, value)
    return phi if classifier else phi[..., 0]


def estimator_expected_value(model, classifier: bool):
    """A fitted single-tree estimator's expected value: a float for a regressor, one per
    class for a classifier."""
    ev = tree_expected_value(model.tree_, leaf_values(model.tree_, classifier))
    return ev if classifier else float(ev[0])


def sum_of_trees(trees, values, X, interactions: bool = False, columns=None) -> np.ndarray:
    """SHAP values (or interaction values) of a prediction that is a sum of trees' node
    values: ``trees`` (``Tree``), ``values`` (each tree's node values, n_nodes x outputs),
    ``columns`` (each tree's columns in ``X``, or None); shape ``(n, p, outputs)`` or ``(n,
    p, p, outputs)``, the memory checked first. A Shapley value is linear in the game, so the
    sum's values are the sum of the trees'."""
    n, p = X.shape
    V = values[0].shape[1]
    check_output_memory(n, p, V, _what(interactions), interactions)
    out = np.zeros((n, p, p, V) if interactions else (n, p, V))
    run = tree_shap_interaction_values if interactions else tree_shap_values
    for k, (tree, value) in enumerate(zip(trees, values, strict=True)):
        run(tree, X, value, out=out, columns=None if columns is None else columns[k])
    return out


def sum_expected_value(trees, values) -> np.ndarray:
    """The expected value of a sum of trees' node values (one per output)."""
    return sum(tree_expected_value(t, v) for t, v in zip(trees, values, strict=True))


def _mean_values(model, classifier: bool):
    trees = [m.tree_ for m in model.estimators_]
    return trees, [leaf_values(t, classifier) / len(trees) for t in trees]


def ensemble_shap(model, X, classifier: bool, interactions: bool = False) -> np.ndarray:
    """An averaging ensemble's SHAP values (forests, extra trees, bagging): the mean over its
    trees of each tree's values (the prediction is the mean of the trees' values). A member
    grown on a random subspace has its splits read as the ensemble's columns (no copy of the
    subspace's rows is made). Shapes as :func:`estimator_shap`."""
    trees, values = _mean_values(model, classifier)
    for t in trees:
        _check_tree(t)  # before the output's memory is checked
    out = sum_of_trees(trees, values, X, interactions,
                       getattr(model, "estimators_features_", None))
    return out if classifier else out[..., 0]


def ensemble_expected_value(model, classifier: bool):
    """The mean of the trees' expected values (a float, or one per class)."""
    ev = sum_expected_value(*_mean_values(model, classifier))
    return ev if classifier else float(ev[0])
