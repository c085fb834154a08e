"""M5′'s missing values: a case with an unknown split value is routed by its target.

Wang & Witten (1997; Witten & Frank, *Data Mining*, §6.5) treat missing values in a model tree
in three steps, and ``missing="m5"`` follows them:

1. **Choosing a split**: ``SDR = m/|T| * (sd(T) - sum_j |T_j|/|T| * sd(T_j))`` as Witten &
   Frank print it, ``T`` the cases at the node, ``m`` those whose value is known and ``T_j``
   the known cases of branch ``j`` (:func:`treelearn.engine.levels.known_gain`,
   ``KNOWN_M5``; the growers search as for C4.5, with this score). The book's factor
   ``beta(i)`` concerns splits on M5's synthetic binaries of a nominal attribute, which
   this library does not make (nominal features split into subsets of levels): it is 1.
2. **Partitioning**: the target is the surrogate attribute. A case with an unknown value
   goes to the branch of the larger mean target of the known cases when its own target is
   above the average of the two branch means, else to the other (for a multiway split,
   which M5 never makes, the branch of the nearest mean). :func:`route_entries` (presorted
   lists) and :func:`route_rows` (histogram rows) do this inside the growers
   (``params.mode == MISSING_M5``), so every later split sees these cases in their
   branch.
3. **Prediction**: the target is not known, so an unknown value is replaced by the average
   value of the attribute over the training cases that reached the node (weighted by their
   weights; for a nominal feature the most frequent level) and follows that value.
   :func:`replay` walks the grown tree with the training rows, repeating step 2 with the
   tree's splits, and returns each node's branch for missing values (what prediction reads)
   and each row's leaf (what the leaf models are fitted to).

The replay recomputes the branch means from the rows in row order, the growers in the order
of their lists: the sums may differ in the last bit, so a target within rounding of a
midpoint could in principle take the other branch in the replay; with unit weights and
integer targets the sums are exact and the two agree always.
"""

from __future__ import annotations

import math

import numpy as np

from .config import njit, noref, pjit, prange, tiny


@tiny
def nearest_branch(y, sums, k):
    """The branch of a case with target ``y`` whose split value is unknown: ``sums[b]`` is
    branch ``b``'s known weight, ``sums[k + b]`` its weighted target sum. Two branches (the
    book's rule): the branch of the larger mean when ``y`` is above the average of the two
    means, else the other. More branches (a multiway split, which M5 does not make): the
    nearest mean, the first on ties. 0 when no branch has weight."""
    if k == 2 and sums[0] > 0.0 and sums[1] > 0.0:
        m0 = sums[2] / sums[0]
        m1 = sums[3] / sums[1]
        upper = 1 if m1 > m0 else 0
        return upper if y > (m0 + m1) / 2.0 else 1 - upper
    best = 0
    gap = np.inf
    for b in range(k):
        if sums[b] > 0.0:
            d = abs(y - sums[k + b] / sums[b])
            if d < gap:
                gap = d
                best = b
    return best


@noref
def route_entries(I, R, W, f, lo, hi, bmap, counts, k, sums):
    """Presorted lists: every entry of the split feature's list ``f`` in ``[lo, hi)`` with
    ``bmap[row] == -1`` (a missing value) gets the branch of :func:`nearest_branch`;
    ``counts`` follow. ``sums`` is scratch of at least ``2 k``. (Classification has no
    targets ``R``; the test on ``None`` removes the body when compiled for it.)"""
    if R is not None:
        for b in range(2 * k):
            sums[b] = 0.0
        for i in range(lo, hi):
            b = bmap[I[f, i]]
            if b >= 0:
                x = 1.0 if W is None else W[f, i]
                sums[b] += x
                sums[k + b] += x * R[f, i]
        for i in range(lo, hi):
            s = I[f, i]
            if bmap[s] < 0:
                b = nearest_branch(R[f, i], sums, k)
                bmap[s] = b
                counts[b] += 1


@noref
def route_rows(R, W, lo, hi, bmark, counts, k, sums):
    """Histogram rows: :func:`route_entries` for rows ``[lo, hi)`` with branches in
    ``bmark[i - lo]`` and targets ``R[i]``."""
    if R is not None:
        for b in range(2 * k):
            sums[b] = 0.0
        for i in range(lo, hi):
            b = bmark[i - lo]
            if b >= 0:
                x = 1.0 if W is None else W[i]
                sums[b] += x
                sums[k + b] += x * R[i]
        for i in range(lo, hi):
            if bmark[i - lo] < 0:
                b = nearest_branch(R[i], sums, k)
                bmark[i - lo] = b
                counts[b] += 1


@njit
def _known_branch(x, node, threshold, cat_ptr, cat_branch):
    """Branch of a known value at ``node``; -1 for a missing value or a level the node does
    not map (at fit, every level present at a node is mapped)."""
    if math.isnan(x):
        return -1
    c0 = cat_ptr[node]
    n_levels = cat_ptr[node + 1] - c0
    if n_levels > 0:
        code = int(x)
        if 0 <= code < n_levels:
            return cat_branch[c0 + code]
        return -1
    return 0 if x <= threshold[node] else 1


@njit
def average_branch(X, w, rows, lo, hi, node, threshold, feature, cat_ptr, cat_branch):
    """Prediction's branch for a missing value at ``node``, whose training rows are
    ``rows[lo:hi]``: the branch of the weighted average of the split feature's known values
    (a categorical feature: of its most frequent level; 0 when no value is known)."""
    f = feature[node]
    c0 = cat_ptr[node]
    n_levels = cat_ptr[node + 1] - c0
    if n_levels > 0:
        level_w = np.zeros(n_levels)
        for i in range(lo, hi):
            r = rows[i]
            x = X[r, f]
            if not math.isnan(x) and 0 <= int(x) < n_levels:
                level_w[int(x)] += w[r]
        top_level = 0
        for c in range(n_levels):
            if level_w[c] > level_w[top_level]:
                top_level = c
        return max(cat_branch[c0 + top_level], 0)
    xw = 0.0
    xs = 0.0
    for i in range(lo, hi):
        r = rows[i]
        x = X[r, f]
        if not math.isnan(x):
            xw += w[r]
            xs += w[r] * np.float64(x)
    if xw > 0.0 and xs / xw > threshold[node]:
        return 1
    return 0


@pjit
def average_branches(X, w, rows, lo, hi, inner, threshold, feature, cat_ptr, cat_branch):
    """:func:`average_branch` of every node in ``inner`` (node ``i``'s rows are
    ``rows[lo[i]:hi[i]]``), on all threads; -2 elsewhere. Without missing values at fit the
    training rows reach the nodes as prediction routes them, and this is the replay's
    answer without its partitioning."""
    mb = np.full(feature.shape[0], -2, dtype=np.int64)
    for j in prange(inner.shape[0]):
        node = inner[j]
        mb[node] = average_branch(X, w, rows, lo[node], hi[node], node, threshold, feature,
                                  cat_ptr, cat_branch)
    return mb


@njit
def replay(X, y, w, feature, threshold, branch_ptr, branch_child, cat_ptr, cat_branch):
    """The training rows walked down the grown tree as M5′ partitions them (module docstring).

    Returns ``(leaf, missing_branch)``: each row's leaf, and each internal node's branch for
    a missing value at prediction (:func:`average_branch`); -2 at leaves."""
    n = X.shape[0]
    n_nodes = feature.shape[0]
    leaf = np.empty(n, dtype=np.int64)
    mb = np.full(n_nodes, -2, dtype=np.int64)
    rows = np.arange(n)
    tmp = np.empty(n, dtype=np.int64)
    br = np.empty(n, dtype=np.int64)
    kmax = 2
    for node in range(n_nodes):
        kmax = max(kmax, branch_ptr[node + 1] - branch_ptr[node])
    sums = np.empty(2 * kmax)
    pos = np.empty(kmax + 1, dtype=np.int64)
    stack = np.empty((n_nodes + 1, 3), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    stack[0, 2] = n
    top = 1
    while top > 0:
        top -= 1
        node = stack[top, 0]
        lo = stack[top, 1]
        hi = stack[top, 2]
        k = branch_ptr[node + 1] - branch_ptr[node]
        if k == 0:
            for i in range(lo, hi):
                leaf[rows[i]] = node
            continue
        f = feature[node]
        for b in range(2 * k):
            sums[b] = 0.0
        for i in range(lo, hi):
            r = rows[i]
            b = _known_branch(X[r, f], node, threshold, cat_ptr, cat_branch)
            br[i] = b
            if b >= 0:
                sums[b] += w[r]
                sums[k + b] += w[r] * y[r]
        for i in range(lo, hi):
            if br[i] < 0:
                br[i] = nearest_branch(y[rows[i]], sums, k)
        mb[node] = average_branch(X, w, rows, lo, hi, node, threshold, feature, cat_ptr,
                                  cat_branch)
        # stable partition of the node's rows into its branches
        for b in range(k + 1):
            pos[b] = 0
        for i in range(lo, hi):
            pos[br[i] + 1] += 1
        pos[0] = lo
        for b in range(k):
            pos[b + 1] += pos[b]
        for b in range(k - 1, -1, -1):
            stack[top, 0] = branch_child[branch_ptr[node] + b]
            stack[top, 1] = pos[b]
            stack[top, 2] = pos[b + 1]
            top += 1
        for i in range(lo, hi):
            b = br[i]
            tmp[pos[b]] = rows[i]
            pos[b] += 1
        for i in range(lo, hi):
            rows[i] = tmp[i]
    return leaf, mb


__all__ = ["nearest_branch", "route_entries", "route_rows", "average_branch",
           "average_branches", "replay"]
