"""Optimal classification trees of bounded depth: branch and bound over every midpoint.

The objective (:class:`treelearn.OptimalTreeClassifier`): the weighted misclassification of
the training rows plus ``alpha`` per leaf, over every binary tree of depth at most ``D`` whose
splits are ``x[f] <= t`` with ``t`` between two consecutive distinct values of ``f`` at the
node, and whose leaves hold at least ``min_leaf`` rows. Nothing is binarised beforehand: every
midpoint of every feature is a candidate at every node, as in ConTree.

The search (one recursive kernel, :func:`solve`, over the rows of a node kept as one sorted
list per feature, as the presorted engine keeps them):

* **Depth-first branch and bound** (the search of DL8.5, Aglin, Nijssen and Schaus, AAAI 2020,
  and MurTree, Demirović et al., JMLR 2022): a node's subproblem is solved with an upper
  bound, the cost it must beat; one child is solved with that bound less the least the
  other can cost (one leaf, ``alpha``), the other with what the first leaves; a subproblem
  that cannot beat its bound returns a proven lower bound of its optimum (the bound itself,
  or the exact optimum where the depth-2 solver below computed it).
* **The similarity bound on neighbouring thresholds** (ConTree: Brița, van der Linden and
  Demirović, "Optimal classification trees for continuous feature data using dynamic
  programming with branch-and-bound", AAAI 2025). Moving rows of total weight ``d`` from one
  side of a split to the other changes the optimal cost of the two subtrees by at most ``d``
  (the same subtrees misclassify at most the moved rows; removing rows never raises a
  subtree's optimum). So once a threshold is known to cost ``v``, every threshold within
  moved weight ``v - best`` of it is skipped. The thresholds of a feature are visited by
  bisection (middle first), so one evaluation can rule out a whole interval. The bound needs
  that removing rows keeps a tree feasible, which ``min_leaf > 1`` breaks: there every
  threshold is evaluated.
* **ConTree's subinterval bound**: removing rows never raises a subtree's optimum, so a
  threshold between two evaluated ones ``a < b`` costs at least the left side's bound at
  ``a`` plus the right side's at ``b``; an interval whose bound reaches the incumbent is
  skipped whole. The larger side of a split is solved first, and its cost limits the
  smaller one's search.
* **Good incumbents first** (ConTree's ordering): features in order of their best Gini
  split, each feature's best Gini threshold evaluated before the bisection.
* **A depth-2 solver** (MurTree's idea of a specialised solver for the last two levels, here
  for continuous features and up to :data:`SWEEP_MAX_CLASSES` classes): for a root feature
  ``f`` and a second feature ``g`` the rows move to the left side one at a time in ``f``'s
  order, and each side's best stump on ``g`` follows from the extremes, over ``g``'s cuts, of
  the differences of class weights ``a_c(t) - a_e(t)``, kept in segment trees that a moved
  row updates on a suffix of cuts: all thresholds of the node in ``O(p^2 K^2 m log m)``, and
  the exact optimum as the bound its parent prunes with. With more classes (``K^2`` trees
  per side) each threshold is evaluated by one pass over every feature's rows, both sides at
  once, with the bounds above (measured: segment, 7 classes, depth 2: 1.25 s by the sweep,
  0.23 s so).
* **Trivial bounds**: a subtree with a split costs at least ``2 alpha``, so a node whose leaf
  misclassifies at most ``alpha`` is a leaf; a pure node is a leaf.
* **An upper bound from the greedy tree** is given by the caller (the estimator fits CART of
  the same depth first).

The solution is recorded as it is found: each depth level keeps the best subtree of its
current subproblem in preorder (``res[d]``: feature, the largest rank on the left, the
smallest rank on the right; feature -1 for a leaf), and a parent copies its children's when
their sum is a new best, so the tree is known as soon as the search ends, and the incumbent
of the root is a valid tree at every moment.

Stopping: the kernel polls ``ctl[0]`` (set by the estimator's thread at the time limit or on
Ctrl-C) before every threshold it evaluates, and returns at once; nothing found after the
flag is recorded, so the root's incumbent is a complete tree. ``ctl[1]`` counts the
thresholds evaluated.
"""

from __future__ import annotations

import numpy as np

from .config import njit

#: Fields of a recorded node: feature (-1: leaf), largest rank on the left, smallest rank on
#: the right.
REC_FIELDS = 3


#: ``ctl`` fields: the stop flag, the thresholds evaluated so far.
C_STOP = 0
C_EVALS = 1
#: Most classes for which depth-2 subproblems are solved by :func:`depth_two`'s sweep.
SWEEP_MAX_CLASSES = 3


@njit
def class_weights(lst, m, y, w, cw):
    """Class weights of the rows ``lst[:m]`` into ``cw``; returns ``(total, misclassified)``
    (the weight outside the first of the largest classes)."""
    cw[:] = 0.0
    for j in range(m):
        r = lst[j]
        cw[y[r]] += w[r]
    tot = 0.0
    top = 0.0
    for c in range(cw.shape[0]):
        tot += cw[c]
        top = max(top, cw[c])
    return tot, tot - top


@njit
def side_stumps(lst, m, rank_f, thr, rank_g, g, y, w, min_leaf, alpha, tot, ntot, cum, out):
    """Both sides' best stump on feature ``g`` after the split ``rank_f <= thr`` (side 0) /
    ``> thr`` (side 1), in one pass over the node's rows ``lst[:m]`` sorted by ``g``
    (ranks ``rank_g``). ``tot[s]``/``ntot[s]``: each side's class weights and rows.
    ``out[s] = (cost, largest rank left, smallest rank right, feature)`` is improved where a
    stump of ``g`` costs less."""
    K = tot.shape[1]
    cum[:, :] = 0.0
    seen = np.zeros(2, dtype=np.int64)
    last = np.full(2, -1, dtype=np.int64)
    for j in range(m):
        r = lst[j]
        gr = np.int64(rank_g[r])
        s = 1 if rank_f[r] > thr else 0
        # a cut before this row when its value differs from the side's previous row
        if seen[s] >= min_leaf and ntot[s] - seen[s] >= min_leaf and gr != last[s]:
            lw = 0.0
            ltop = 0.0
            rw = 0.0
            rtop = 0.0
            for c in range(K):
                a = cum[s, c]
                b = tot[s, c] - a
                lw += a
                rw += b
                ltop = max(ltop, a)
                rtop = max(rtop, b)
            cost = (lw - ltop) + (rw - rtop) + 2.0 * alpha
            if cost < out[s, 0]:
                out[s, 0] = cost
                out[s, 1] = last[s]
                out[s, 2] = gr
                out[s, 3] = g
        cum[s, y[r]] += w[r]
        seen[s] += 1
        last[s] = gr


@njit
def _put(res, d, k, f, lo, hi):
    res[d, 0, k] = f
    res[d, 1, k] = lo
    res[d, 2, k] = hi


@njit
def _put_stump(res, d, k, o):
    """A side's stump ``o = (cost, rank left, rank right, feature)`` (or its leaf) in
    preorder from ``res[d, :, k]``; returns the next free place."""
    if o[3] < 0:
        _put(res, d, k, -1, -1, -1)
        return k + 1
    _put(res, d, k, np.int64(o[3]), np.int64(o[1]), np.int64(o[2]))
    _put(res, d, k + 1, -1, -1, -1)
    _put(res, d, k + 2, -1, -1, -1)
    return k + 3


@njit
def _leaf_out(tot, s, alpha, out):
    tw = 0.0
    top = 0.0
    for c in range(tot.shape[1]):
        tw += tot[s, c]
        top = max(top, tot[s, c])
    out[s, 0] = tw - top + alpha
    out[s, 1] = -1.0
    out[s, 2] = -1.0
    out[s, 3] = -1.0


@njit
def _stumps_below(data, bufs, fpar, ipar, d, f, thr, i):
    """Each side's best stump (or leaf) after splitting level ``d``'s rows at the ``i``-th
    row of feature ``f`` (``thr``: the largest rank on the left; ``f < 0``: no split, every
    row on side 0); the costs in ``out[d, s, 0]``."""
    rank, y, w = data
    lists, size = bufs[0], bufs[1]
    tot, cum, out, ntot = bufs[9], bufs[10], bufs[11], bufs[12]
    alpha, min_leaf = fpar[0], ipar[0]
    m = size[d]
    fr = rank[max(f, 0)]
    tot[d, :, :] = 0.0
    lf = lists[d, max(f, 0)]
    for j in range(m):
        r = lf[j]
        tot[d, 0 if (f < 0 or j < i) else 1, y[r]] += w[r]
    ntot[d, 0] = m if f < 0 else i
    ntot[d, 1] = 0 if f < 0 else m - i
    if f < 0:
        thr = np.int64(1) << 40
    for s in range(2):
        _leaf_out(tot[d], s, alpha, out[d])
    # a side whose leaf errs at most alpha is a leaf (any split costs 2 alpha): not searched
    if out[d, 0, 0] > 2.0 * alpha or out[d, 1, 0] > 2.0 * alpha:
        for g in range(rank.shape[0]):
            side_stumps(lists[d, g], m, fr, thr, rank[g], g, y, w, min_leaf, alpha, tot[d],
                        ntot[d], cum[d], out[d])


@njit
def _fill_positions(data, bufs, ipar, d, f):
    """The candidate thresholds of feature ``f`` at level ``d`` (a row index ``i``: the split
    leaves ``i`` sorted rows on the left) in ``pos[d]``, the prefix weights of the sorted rows
    in ``pw[d]``; returns their number."""
    rank, y, w = data
    lists, size, pos, pw = bufs[0], bufs[1], bufs[6], bufs[7]
    min_leaf = ipar[0]
    m = size[d]
    lf = lists[d, f]
    rf = rank[f]
    q = 0
    pw[d, 0] = 0.0
    for j in range(m):
        pw[d, j + 1] = pw[d, j] + w[lf[j]]
        if j >= min_leaf and m - j >= min_leaf and rf[lf[j]] != rf[lf[j - 1]]:
            pos[d, q] = j
            q += 1
    return q


@njit
def _gini_best(data, bufs, d, f, q):
    """The candidate threshold of feature ``f`` at level ``d`` (an index of ``pos[d]``, filled
    by :func:`_fill_positions`) of least weighted Gini impurity, and its score (larger is
    better). Visited first, it gives the search a good incumbent early (ConTree's ordering
    by Gini)."""
    rank, y, w = data
    lists, size, pos, tot = bufs[0], bufs[1], bufs[6], bufs[9]
    m = size[d]
    lf = lists[d, f]
    K = tot.shape[2]
    left = tot[d, 0]
    node = tot[d, 1]
    left[:] = 0.0
    node[:] = 0.0
    for j in range(m):
        node[y[lf[j]]] += w[lf[j]]
    best = -np.inf
    best_k = 0
    k = 0
    wl = 0.0
    for j in range(m):
        if k < q and pos[d, k] == j:
            sl = 0.0
            sr = 0.0
            wr = 0.0
            for c in range(K):
                sl += left[c] * left[c]
                sr += (node[c] - left[c]) * (node[c] - left[c])
                wr += node[c] - left[c]
            score = (sl / wl if wl > 0.0 else 0.0) + (sr / wr if wr > 0.0 else 0.0)
            if score > best:
                best = score
                best_k = k
            k += 1
        left[y[lf[j]]] += w[lf[j]]
        wl += w[lf[j]]
    return best_k, best


@njit
def _child_lists(data, bufs, d, f, thr, right):
    """Level ``d + 1``'s sorted lists: the rows of level ``d`` on one side of ``rank_f <= thr``."""
    rank = data[0]
    lists, size = bufs[0], bufs[1]
    m = size[d]
    rf = rank[f]
    c = 0
    for g in range(rank.shape[0]):
        src = lists[d, g]
        dst = lists[d + 1, g]
        c = 0
        for j in range(m):
            r = src[j]
            if (rf[r] > thr) == right:
                dst[c] = r
                c += 1
    size[d + 1] = c


@njit
def _copy_record(src, d_src, dst, d_dst, n, at):
    for k in range(n):
        for q in range(REC_FIELDS):
            dst[d_dst, q, at + k] = src[d_src, q, k]


@njit
def _seg_apply(mn, mx, lz, v, val):
    mn[v] += val
    mx[v] += val
    lz[v] += val


@njit
def _seg_pull(mn, mx, lz, v):
    """Recompute the ancestors of node ``v`` from their children and pending additions."""
    v >>= 1
    while v >= 1:
        mn[v] = min(mn[2 * v], mn[2 * v + 1]) + lz[v]
        mx[v] = max(mx[2 * v], mx[2 * v + 1]) + lz[v]
        v >>= 1


@njit
def seg_add_suffix(mn, mx, lz, size, lo, val):
    """Add ``val`` to leaves ``[lo, size)`` of a min/max segment tree of ``size`` leaves (a
    power of two) kept without pushing additions down (``lz``: what a node added to all of
    its leaves); the root ``mn[1]``/``mx[1]`` is then the minimum / maximum of the leaves."""
    a = lo + size
    b = 2 * size
    a0 = a
    while a < b:
        if a & 1:
            _seg_apply(mn, mx, lz, a, val)
            a += 1
        if b & 1:
            b -= 1
            _seg_apply(mn, mx, lz, b, val)
        a >>= 1
        b >>= 1
    _seg_pull(mn, mx, lz, a0)
    _seg_pull(mn, mx, lz, 2 * size - 1)


@njit
def _seg_build(mn, mx, lz, size, leaf):
    """A tree over the leaves ``leaf[:n]`` (the rest padded to stay out of min and max)."""
    n = leaf.shape[0]
    for t in range(size):
        if t < n:
            mn[size + t] = leaf[t]
            mx[size + t] = leaf[t]
        else:
            mn[size + t] = np.inf
            mx[size + t] = -np.inf
        lz[size + t] = 0.0
    for v in range(size - 1, 0, -1):
        lz[v] = 0.0
        mn[v] = min(mn[2 * v], mn[2 * v + 1])
        mx[v] = max(mx[2 * v], mx[2 * v + 1])


@njit
def _best_stump_error(tot, mn, mx, pairs_c, pairs_e):
    """The least misclassified weight of a stump (or the leaf) of one side from its class
    weights ``tot`` and the extremes over cuts of ``D_ce(t) = a_c(t) - a_e(t)`` for each pair
    ``c < e`` (tree ``j`` of ``mn``/``mx``): the error is the side's weight less the best of
    ``T_c`` (the leaf) and ``T_e + max_t D_ce``, ``T_c - min_t D_ce`` (left class, right class)."""
    W = 0.0
    keep = 0.0
    for c in range(tot.shape[0]):
        W += tot[c]
        keep = max(keep, tot[c])
    for j in range(pairs_c.shape[0]):
        c = pairs_c[j]
        e = pairs_e[j]
        keep = max(keep, tot[e] + mx[j, 1])
        keep = max(keep, tot[c] - mn[j, 1])
    return W - keep


@njit
def depth_two(data, bufs, fpar, ipar, ctl, d, target):
    """The best split of level ``d``'s rows with the best stump (or leaf) below each side,
    every threshold of every feature, if it costs less than ``target`` (recorded in
    ``res[d]``); returns the new target and the least cost of a split (exact, whatever the
    target). ``min_leaf`` must be 1.

    For a root feature ``f`` and a second feature ``g``, the rows move to the left side one at
    a time in ``f``'s order; a side's best stump on ``g`` follows from the extremes over the
    cuts ``t`` of ``g`` of the class-weight differences ``a_c(t) - a_e(t)``, kept in segment
    trees (one per class pair and side) that a moved row updates on a suffix of cuts: each
    root threshold costs ``O(p K^2 log m)`` instead of a pass over the node's rows per
    feature. A cut with an empty side scores as the leaf, so it never wins."""
    rank, y, w = data
    lists, size, res, rlen = bufs[0], bufs[1], bufs[2], bufs[3]
    pos, out = bufs[6], bufs[11]
    alpha = fpar[0]
    m = size[d]
    p = rank.shape[0]
    K = bufs[13].shape[1]
    npairs = K * (K - 1) // 2
    pairs_c = np.empty(npairs, dtype=np.int64)
    pairs_e = np.empty(npairs, dtype=np.int64)
    j = 0
    for c in range(K):
        for e in range(c + 1, K):
            pairs_c[j] = c
            pairs_e[j] = e
            j += 1
    seg = 1
    while seg < m:
        seg *= 2
    mnL = np.empty((npairs, 2 * seg))
    mxL = np.empty((npairs, 2 * seg))
    lzL = np.empty((npairs, 2 * seg))
    mnR = np.empty((npairs, 2 * seg))
    mxR = np.empty((npairs, 2 * seg))
    lzR = np.empty((npairs, 2 * seg))
    lrank = np.empty(rank.shape[1], dtype=np.int64)
    leafv = np.empty(m)
    totL = np.empty(K)
    totR = np.empty(K)
    totN = np.zeros(K)
    for jj in range(m):
        r = lists[d, 0, jj]
        totN[y[r]] += w[r]
    best_side = np.empty((2, m))
    lowest = np.inf
    best_f = np.int64(-1)
    best_i = np.int64(-1)
    for f in range(p):
        if ctl[C_STOP] != 0:
            return target, lowest
        q = _fill_positions(data, bufs, ipar, d, f)
        if q == 0:
            continue
        lf = lists[d, f]
        ctl[C_EVALS] += q
        # each side's leaf error at each threshold: the start of the best stump search
        totL[:] = 0.0
        k = 0
        for jj in range(m):
            if k < q and pos[d, k] == jj:
                errL = 0.0
                errR = 0.0
                wl = 0.0
                wr = 0.0
                for c in range(K):
                    wl += totL[c]
                    wr += totN[c] - totL[c]
                    errL = max(errL, totL[c])
                    errR = max(errR, totN[c] - totL[c])
                best_side[0, k] = wl - errL + alpha
                best_side[1, k] = wr - errR + alpha
                k += 1
            totL[y[lf[jj]]] += w[lf[jj]]
        for g in range(p):
            lg = lists[d, g]
            R = 0
            for jj in range(m):
                r = lg[jj]
                if jj > 0 and rank[g, r] != rank[g, lg[jj - 1]]:
                    R += 1
                lrank[r] = R
            R += 1
            for pj in range(npairs):
                c = pairs_c[pj]
                e = pairs_e[pj]
                # the node's D_ce at each cut of g, for the right side's start
                acc = 0.0
                for jj in range(m):
                    r = lg[jj]
                    if y[r] == c:
                        acc += w[r]
                    elif y[r] == e:
                        acc -= w[r]
                    leafv[lrank[r]] = acc
                _seg_build(mnR[pj], mxR[pj], lzR[pj], seg, leafv[:R])
                leafv[:R] = 0.0
                _seg_build(mnL[pj], mxL[pj], lzL[pj], seg, leafv[:R])
            totL[:] = 0.0
            k = 0
            for jj in range(m):
                if k < q and pos[d, k] == jj:
                    for c in range(K):
                        totR[c] = totN[c] - totL[c]
                    eL = _best_stump_error(totL, mnL, mxL, pairs_c, pairs_e)
                    eR = _best_stump_error(totR, mnR, mxR, pairs_c, pairs_e)
                    best_side[0, k] = min(best_side[0, k], eL + 2.0 * alpha)
                    best_side[1, k] = min(best_side[1, k], eR + 2.0 * alpha)
                    k += 1
                r = lf[jj]
                cr = y[r]
                wr_ = w[r]
                totL[cr] += wr_
                for pj in range(npairs):
                    if pairs_c[pj] == cr:
                        sgn = 1.0
                    elif pairs_e[pj] == cr:
                        sgn = -1.0
                    else:
                        continue
                    seg_add_suffix(mnL[pj], mxL[pj], lzL[pj], seg, lrank[r], sgn * wr_)
                    seg_add_suffix(mnR[pj], mxR[pj], lzR[pj], seg, lrank[r], -sgn * wr_)
        for k in range(q):
            v = best_side[0, k] + best_side[1, k]
            lowest = min(lowest, v)
            if v < target:
                target = v
                best_f = f
                best_i = pos[d, k]
    if best_f >= 0:
        # the winner's stumps and thresholds, by the plain per-side scan
        lf = lists[d, best_f]
        thr = np.int64(rank[best_f, lf[best_i - 1]])
        _stumps_below(data, bufs, fpar, ipar, d, best_f, thr, best_i)
        _put(res, d, 0, best_f, thr, np.int64(rank[best_f, lf[best_i]]))
        at = _put_stump(res, d, np.int64(1), out[d, 0])
        rlen[d] = _put_stump(res, d, at, out[d, 1])
        target = out[d, 0, 0] + out[d, 1, 0]
    return target, lowest


@njit
def solve(data, bufs, fpar, ipar, ctl, d, k, ub):
    """Optimal cost of a tree of depth at most ``k`` over level ``d``'s rows, if below ``ub``
    (the tree then in ``res[d]``); otherwise a lower bound of it that is at least ``ub``
    (the optimum itself when ``k <= 2``).
    Returns at once (a meaningless value) when ``ctl[C_STOP]`` is set."""
    rank, y, w = data
    lists, size, res, rlen, tmp, tmplen, pos, pw, stk, tot, cum, out, ntot, cw, lbL, lbR = bufs
    alpha, tol = fpar[0], fpar[1]
    min_leaf, prune = ipar[0], ipar[1]
    m = size[d]
    p = rank.shape[0]
    _, err = class_weights(lists[d, 0], m, y, w, cw[d])
    leaf = err + alpha
    _put(res, d, 0, -1, -1, -1)
    rlen[d] = 1
    if k == 0 or m < 2 * min_leaf or err <= alpha:
        return leaf  # the leaf is optimal
    target = min(leaf, ub)
    if target <= 2.0 * alpha:  # any split costs at least two leaves
        return min(leaf, 2.0 * alpha)
    if k == 1:
        ctl[C_EVALS] += 1
        _stumps_below(data, bufs, fpar, ipar, d, np.int64(-1), np.int64(0), np.int64(0))
        if out[d, 0, 0] < target:
            _put_stump(res, d, np.int64(0), out[d, 0])
            rlen[d] = 1 if out[d, 0, 3] < 0 else 3
        return min(leaf, out[d, 0, 0])  # exact
    if k == 2 and min_leaf == 1 and cw.shape[1] <= SWEEP_MAX_CLASSES:
        target, lowest = depth_two(data, bufs, fpar, ipar, ctl, d, target)
        # exact whether or not it beats ub: a stronger bound for the similarity pruning above
        return min(leaf, lowest)
    # features in order of their best Gini split, each feature's best Gini threshold first:
    # good incumbents early make the bounds bite (ConTree's ordering)
    score = np.full(p, -np.inf)
    firsts = np.zeros(p, dtype=np.int64)
    for f in range(p):
        q = _fill_positions(data, bufs, ipar, d, f)
        if q > 0:
            firsts[f], score[f] = _gini_best(data, bufs, d, f, q)
    order = np.argsort(-score, kind="mergesort")
    for f in order:
        # pos[d] holds one feature's thresholds at a time: filled again for this one
        q = _fill_positions(data, bufs, ipar, d, f)
        if q == 0:
            continue
        lf = lists[d, f]
        first = firsts[f] if prune else -1
        # candidate intervals of pos[d] still to visit, each with the evaluated thresholds
        # around it (-1: none): middle first (bisection)
        stk[d, 0, 0] = 0
        stk[d, 0, 1] = q - 1
        stk[d, 0, 2] = -1
        stk[d, 0, 3] = -1
        top = 1
        nxt = 0
        while top > 0 if prune else nxt < q:
            if ctl[C_STOP] != 0:
                return target
            ea = -1
            eb = -1
            if prune:
                top -= 1
                a = stk[d, top, 0]
                b = stk[d, top, 1]
                ea = stk[d, top, 2]
                eb = stk[d, top, 3]
                # ConTree's subinterval bound: a threshold between the evaluated ea and eb
                # has a left side holding ea's and a right side holding eb's, and removing
                # rows never raises an optimum
                bound = (lbL[d, ea] if ea >= 0 else alpha) + (lbR[d, eb] if eb >= 0 else alpha)
                if bound >= target - tol:
                    continue
                mid = (a + b) // 2
                if first >= 0:
                    mid = first
                    first = -1
            else:
                a = nxt
                b = nxt
                mid = nxt
                nxt += 1
            i = pos[d, mid]
            thr = np.int64(rank[f, lf[i - 1]])
            first_right = np.int64(rank[f, lf[i]])
            ctl[C_EVALS] += 1
            if k == 2:
                _stumps_below(data, bufs, fpar, ipar, d, np.int64(f), thr, i)
                v = out[d, 0, 0] + out[d, 1, 0]
                lbL[d, mid] = out[d, 0, 0]
                lbR[d, mid] = out[d, 1, 0]
                if v < target:
                    _put(res, d, 0, f, thr, first_right)
                    at = _put_stump(res, d, np.int64(1), out[d, 0])
                    rlen[d] = _put_stump(res, d, at, out[d, 1])
                    target = v
            else:
                # the larger side first, whose bound then limits the smaller one (ConTree)
                big_right = m - i > i
                _child_lists(data, bufs, d, np.int64(f), thr, big_right)
                v_big = solve(data, bufs, fpar, ipar, ctl, d + 1, k - 1, target - alpha)
                if ctl[C_STOP] != 0:
                    return target
                v_small = alpha  # at least one leaf
                if v_big < target - alpha:
                    tmplen[d] = rlen[d + 1]
                    _copy_record(res, d + 1, tmp, d, rlen[d + 1], np.int64(0))
                    _child_lists(data, bufs, d, np.int64(f), thr, not big_right)
                    v_small = solve(data, bufs, fpar, ipar, ctl, d + 1, k - 1, target - v_big)
                    if ctl[C_STOP] != 0:
                        return target
                    if v_big + v_small < target:
                        _put(res, d, 0, f, thr, first_right)
                        if big_right:  # left: the second solve's record, right: the first's
                            _copy_record(res, d + 1, res, d, rlen[d + 1], np.int64(1))
                            _copy_record(tmp, d, res, d, tmplen[d], 1 + rlen[d + 1])
                        else:
                            _copy_record(tmp, d, res, d, tmplen[d], np.int64(1))
                            _copy_record(res, d + 1, res, d, rlen[d + 1], 1 + tmplen[d])
                        rlen[d] = 1 + tmplen[d] + rlen[d + 1]
                        target = v_big + v_small
                v = v_big + v_small
                lbL[d, mid] = v_small if big_right else v_big
                lbR[d, mid] = v_big if big_right else v_small
            if not prune:
                continue
            # thresholds within moved weight v - target of this one cannot beat target
            radius = v - target - tol
            lo_ = mid
            hi_ = mid
            if radius >= 0.0:
                while lo_ - 1 >= a and pw[d, i] - pw[d, pos[d, lo_ - 1]] <= radius:
                    lo_ -= 1
                while hi_ + 1 <= b and pw[d, pos[d, hi_ + 1]] - pw[d, i] <= radius:
                    hi_ += 1
            if hi_ + 1 <= b:
                stk[d, top, 0] = hi_ + 1
                stk[d, top, 1] = b
                stk[d, top, 2] = mid
                stk[d, top, 3] = eb
                top += 1
            if a <= lo_ - 1:
                stk[d, top, 0] = a
                stk[d, top, 1] = lo_ - 1
                stk[d, top, 2] = ea
                stk[d, top, 3] = mid
                top += 1
    return target if target < ub else ub


def buffers(n: int, p: int, n_classes: int, depth: int) -> tuple:
    """The search's scratch for ``n`` rows, ``p`` features, ``n_classes`` classes and trees of
    depth at most ``depth`` (see :func:`solve`): level ``d``'s sorted lists, sizes, records,
    the first-solved child's record, candidate thresholds, prefix weights, bisection stack
    (interval and the evaluated thresholds around it), the stump search's class weights,
    costs and row counts, a class-weight scratch, and each evaluated threshold's lower bounds
    of its left and right sides."""
    D = depth + 1
    S = 2 ** (depth + 1) - 1
    K = max(n_classes, 1)
    return (np.empty((D, p, n), dtype=np.int32), np.zeros(D, dtype=np.int64),
            np.full((D, REC_FIELDS, S), -1, dtype=np.int64), np.zeros(D, dtype=np.int64),
            np.full((D, REC_FIELDS, S), -1, dtype=np.int64), np.zeros(D, dtype=np.int64),
            np.empty((D, max(n, 1)), dtype=np.int64), np.empty((D, n + 1)),
            np.empty((D, max(n, 1) + 1, 4), dtype=np.int64), np.empty((D, 2, K)),
            np.empty((D, 2, K)), np.empty((D, 2, 4)), np.empty((D, 2), dtype=np.int64),
            np.empty((D, K)), np.empty((D, max(n, 1))), np.empty((D, max(n, 1))))
