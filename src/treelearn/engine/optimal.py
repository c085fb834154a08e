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
  that cannot beat its bound returns a proven lower bound of its optimum (the bound itself;
  the optimum at depth 1).
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
  skipped whole.
* **ConTree's interval handling**: intervals are visited breadth first (a queue, so the
  search sees every part of a feature's range coarsely before any finely), each is shrunk
  again by its ends' similarity radius when taken from the queue (the incumbent may have
  fallen since), and the larger side of a split is solved first, its cost limiting the
  smaller one's search; the smaller one is searched with a bound raised by the moved weight
  from the threshold to the interval's ends, so that its cost, or a bound that high, lets
  the similarity bound rule out the whole interval rather than one threshold.
* **Good incumbents first** (ConTree's ordering): features in order of their best Gini
  split, each feature's best Gini threshold evaluated before the bisection.
* **Depth two** (MurTree's and ConTree's specialised solver for the last two levels): a
  threshold of a depth-2 subproblem is evaluated by one pass over every feature's sorted
  rows, both sides at once, giving both sides' best stumps exactly; within a pass, the cuts
  after one that costs ``e`` more than the side's best are not scored until that much
  weight has moved (each moved row changes a stump's error by at most its weight:
  ConTree's skipping).
* **A memo of solved subproblems** (the cache of DL8.5 and ConTree): the same rows meet the
  same depth budget under another order of splits (``x1`` then ``x2`` or ``x2`` then
  ``x1``); a subproblem's optimum with its tree, or the lower bound it proved, is stored
  under a 128-bit key of its row set (:func:`_memo_slot`) for depth budgets 2 to
  :data:`MEMO_MAX_DEPTH`.
* **Trivial bounds**: a subtree with a split costs at least ``2 alpha``, so a node whose leaf
  misclassifies at most ``alpha`` is a leaf; a pure node is a leaf.
* **An upper bound from the greedy tree** is given by the caller (the estimator fits CART of
  the same depth first).

Measured (``benchmarks/bench_optimal.py``, ConTree's tables; seconds of the commit before
these techniques -> with them; e.g. page depth 3: 36.4 -> 2.6 s, segment depth 3: 25.3 ->
1.9 s, wilt depth 3: 1.7 -> 0.21 s), the raised bound of the smaller side gave most of the
gain. Tried and not kept: an exact depth-2 sweep (for a root feature and a second feature,
the rows move left one at a time and each side's best stump follows from the extremes of
class-weight differences kept in segment trees, ``O(p^2 K^2 m log m)`` per subproblem): it
proves every threshold at once, but bisection with the bounds evaluates a few per cent of
the thresholds, and the sweep was 1.2-5x slower on every table but rice (13.1 s against
16.8 s at depth 3); handing a subproblem over to it after a budget of evaluations was
slower than either.

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

from collections import namedtuple

import numpy as np

from .config import njit

#: Fields of a recorded node: feature (-1: leaf), largest rank on the left, smallest rank on
#: the right.
REC_FIELDS = 3


#: ``ctl`` fields: the stop flag, the thresholds evaluated so far.
C_STOP = 0
C_EVALS = 1
#: Memo slot kinds: empty, an optimum with its tree, a lower bound.
M_EMPTY = 0
M_EXACT = 1
M_BOUND = 2
#: Slots probed for a key before a stored answer is overwritten.
MEMO_PROBES = 8
#: Largest depth budget of a memoised subproblem (its tree is stored: 2**(k+1) - 1 nodes).
MEMO_MAX_DEPTH = 3


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
    # credit: the weight that may still move to a side's left before one of its cuts can cost
    # less than its best (each moved row changes a stump's error by at most its weight), so
    # cuts are not scored while it is positive (ConTree's skipping in its depth-two solver)
    credit = np.zeros(2)
    for j in range(m):
        r = lst[j]
        gr = np.int64(rank_g[r])
        s = 1 if rank_f[r] > thr else 0
        # a cut before this row when its value differs from the side's previous row
        if (credit[s] <= 0.0 and gr != last[s] and seen[s] >= min_leaf
                and ntot[s] - seen[s] >= min_leaf):
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
            credit[s] = cost - out[s, 0]
        cum[s, y[r]] += w[r]
        credit[s] -= w[r]
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
    lists, size = bufs.lists, bufs.size
    tot, cum, out, ntot = bufs.tot, bufs.cum, bufs.out, bufs.ntot
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
    lists, size, pos, pw = bufs.lists, bufs.size, bufs.pos, bufs.pw
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
    lists, size, pos, tot = bufs.lists, bufs.size, bufs.pos, bufs.tot
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
def _child_lists(data, bufs, memo, d, f, thr, right):
    """Level ``d + 1``'s sorted lists: the rows of level ``d`` on one side of ``rank_f <= thr``;
    and the key of that row set (:func:`_memo_slot`)."""
    rank = data[0]
    lists, size = bufs.lists, bufs.size
    m = size[d]
    rf = rank[f]
    c = 0
    h0 = np.uint64(0)
    h1 = np.uint64(0)
    for g in range(rank.shape[0]):
        src = lists[d, g]
        dst = lists[d + 1, g]
        c = 0
        for j in range(m):
            r = src[j]
            if (rf[r] > thr) == right:
                dst[c] = r
                c += 1
                if g == 0:
                    h0 += memo.z[r, 0]
                    h1 += memo.z[r, 1]
    size[d + 1] = c
    memo.hsh[d + 1, 0] = h0
    memo.hsh[d + 1, 1] = h1


@njit
def _memo_slot(memo, d, k, m):
    """The memo's slot for level ``d``'s rows with depth budget ``k``: ``(slot, found)``; when
    not found, the slot to store the answer in (the first free one of the probe, else the
    first probed, overwritten). A row set's key is the wrapping sum of two random 64-bit
    numbers per row (Zobrist hashing) with its row count and ``k``: two different sets share
    it with probability about 2**-128 per pair."""
    cap = memo.val.shape[0]
    h0 = memo.hsh[d, 0]
    h1 = memo.hsh[d, 1]
    start = np.int64(h0 & np.uint64(cap - 1))
    for t in range(MEMO_PROBES):
        i = (start + t) & (cap - 1)
        if memo.meta[i, 2] == M_EMPTY:
            return i, False
        if (memo.keys[i, 0] == h0 and memo.keys[i, 1] == h1 and memo.meta[i, 0] == k
                and memo.meta[i, 1] == m):
            return i, True
    return start, False


@njit
def _memo_store(memo, bufs, d, k, m, slot, value, exact):
    memo.keys[slot, 0] = memo.hsh[d, 0]
    memo.keys[slot, 1] = memo.hsh[d, 1]
    memo.meta[slot, 0] = k
    memo.meta[slot, 1] = m
    memo.meta[slot, 2] = M_EXACT if exact else M_BOUND
    memo.val[slot] = value
    if exact:
        n = bufs.rlen[d]
        memo.reclen[slot] = n
        for j in range(n):
            for q in range(REC_FIELDS):
                memo.rec[slot, q, j] = bufs.res[d, q, j]


@njit
def _copy_record(src, d_src, dst, d_dst, n, at):
    for k in range(n):
        for q in range(REC_FIELDS):
            dst[d_dst, q, at + k] = src[d_src, q, k]


@njit
def solve(data, bufs, memo, fpar, ipar, ctl, d, k, ub):
    """Optimal cost of a tree of depth at most ``k`` over level ``d``'s rows, if below ``ub``
    (the tree then in ``res[d]``); otherwise a lower bound of it that is at least ``ub``
    (the optimum itself when ``k <= 1``).
    Returns at once (a meaningless value) when ``ctl[C_STOP]`` is set."""
    rank, y, w = data
    lists, size, res, rlen, tmp, tmplen = (bufs.lists, bufs.size, bufs.res, bufs.rlen, bufs.tmp,
                                           bufs.tmplen)
    pos, pw, queue, out, cw, lbL, lbR = (bufs.pos, bufs.pw, bufs.queue, bufs.out, bufs.cw, bufs.lbL,
                                       bufs.lbR)
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
    # the same rows with the same depth budget met before, under another order of splits
    # (DL8.5's and ConTree's cache): its optimum with its tree, or a bound that suffices
    slot = np.int64(-1)
    if d > 0 and (np.int64(2) << k) - 1 <= memo.rec.shape[2]:
        slot, found = _memo_slot(memo, d, k, m)
        if found:
            v = memo.val[slot]
            if memo.meta[slot, 2] == M_EXACT:
                if v < ub:
                    rlen[d] = memo.reclen[slot]
                    for j in range(rlen[d]):
                        for q_ in range(REC_FIELDS):
                            res[d, q_, j] = memo.rec[slot, q_, j]
                return v
            if v >= ub:
                return v
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
        queue[d, 0, 0] = 0
        queue[d, 0, 1] = q - 1
        queue[d, 0, 2] = -1
        queue[d, 0, 3] = -1
        top = 1
        hd = 0
        ring = queue.shape[1]
        nxt = 0
        while top > hd if prune else nxt < q:
            if ctl[C_STOP] != 0:
                return target
            ea = -1
            eb = -1
            if prune:
                h = hd % ring
                hd += 1
                a = queue[d, h, 0]
                b = queue[d, h, 1]
                ea = queue[d, h, 2]
                eb = queue[d, h, 3]
                # ConTree's subinterval bound: a threshold between the evaluated ea and eb
                # has a left side holding ea's and a right side holding eb's, and removing
                # rows never raises an optimum
                bound = (lbL[d, ea] if ea >= 0 else alpha) + (lbR[d, eb] if eb >= 0 else alpha)
                if bound >= target - tol:
                    continue
                # interval shrinking (ConTree): the target has fallen since ea and eb were
                # evaluated, so their similarity radius may now cover more of the interval
                if ea >= 0:
                    radius = lbL[d, ea] + lbR[d, ea] - target - tol
                    while a <= b and pw[d, pos[d, a]] - pw[d, pos[d, ea]] <= radius:
                        a += 1
                if eb >= 0:
                    radius = lbL[d, eb] + lbR[d, eb] - target - tol
                    while b >= a and pw[d, pos[d, eb]] - pw[d, pos[d, b]] <= radius:
                        b -= 1
                if a > b:
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
                _child_lists(data, bufs, memo, d, np.int64(f), thr, big_right)
                v_big = solve(data, bufs, memo, fpar, ipar, ctl, d + 1, k - 1, target - alpha)
                if ctl[C_STOP] != 0:
                    return target
                v_small = alpha  # at least one leaf
                # the smaller side may cost up to the moved weight to the interval's ends
                # more than it can to improve (ConTree): its exact cost there, or a bound
                # that high, lets the similarity bound rule out the whole interval
                slack = 0.0
                if prune:
                    slack = max(pw[d, i] - pw[d, pos[d, a]], pw[d, pos[d, b]] - pw[d, i])
                if v_big < target - alpha + slack:
                    tmplen[d] = rlen[d + 1]
                    _copy_record(res, d + 1, tmp, d, rlen[d + 1], np.int64(0))
                    _child_lists(data, bufs, memo, d, np.int64(f), thr, not big_right)
                    v_small = solve(data, bufs, memo, fpar, ipar, ctl, d + 1, k - 1,
                                    target - v_big + slack)
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
                t_ = top % ring
                queue[d, t_, 0] = hi_ + 1
                queue[d, t_, 1] = b
                queue[d, t_, 2] = mid
                queue[d, t_, 3] = eb
                top += 1
            if a <= lo_ - 1:
                t_ = top % ring
                queue[d, t_, 0] = a
                queue[d, t_, 1] = lo_ - 1
                queue[d, t_, 2] = ea
                queue[d, t_, 3] = mid
                top += 1
    v = target if target < ub else ub
    if slot >= 0:
        _memo_store(memo, bufs, d, k, m, slot, v, target < ub)
    return v


#: The search's scratch (see :func:`buffers`).
Scratch = namedtuple("Scratch", "lists size res rlen tmp tmplen pos pw queue tot cum out ntot cw "
                                "lbL lbR")
#: The memo of solved subproblems (see :func:`memo`).
Memo = namedtuple("Memo", "z hsh keys meta val rec reclen")


def buffers(ranks: np.ndarray, n_classes: int, depth: int) -> Scratch:
    """The search's scratch for the rank table ``ranks`` (features x rows), ``n_classes``
    classes and trees of depth at most ``depth`` (see :func:`solve`), with level 0 holding
    every row: level ``d``'s sorted lists and sizes, records, the first-solved child's record,
    candidate thresholds, prefix weights, bisection queue (interval and the evaluated
    thresholds around it), the stump search's class weights, costs and row counts, a
    class-weight scratch, and each evaluated threshold's lower bounds of its left and right
    sides."""
    p, n = ranks.shape
    D = depth + 1
    S = 2 ** (depth + 1) - 1
    K = max(n_classes, 1)
    bufs = Scratch(
        lists=np.empty((D, p, n), dtype=np.int32), size=np.zeros(D, dtype=np.int64),
        res=np.full((D, REC_FIELDS, S), -1, dtype=np.int64), rlen=np.zeros(D, dtype=np.int64),
        tmp=np.full((D, REC_FIELDS, S), -1, dtype=np.int64), tmplen=np.zeros(D, dtype=np.int64),
        pos=np.empty((D, max(n, 1)), dtype=np.int64), pw=np.empty((D, n + 1)),
        queue=np.empty((D, max(n, 1) + 1, 4), dtype=np.int64), tot=np.empty((D, 2, K)),
        cum=np.empty((D, 2, K)), out=np.empty((D, 2, 4)), ntot=np.empty((D, 2), dtype=np.int64),
        cw=np.empty((D, K)), lbL=np.empty((D, max(n, 1))), lbR=np.empty((D, max(n, 1))))
    for f in range(p):
        bufs.lists[0, f] = np.argsort(ranks[f], kind="stable")
    bufs.size[0] = n
    return bufs


def memo(n: int, depth: int, capacity: int = 1 << 16, seed: int = 0) -> Memo:
    """An empty memo of ``capacity`` slots (a power of two) for subproblems of ``n`` rows with
    depth budget at most ``min(depth - 1, MEMO_MAX_DEPTH)``: about ``capacity * 12 * (2**(k+1)
    - 1)`` bytes of stored trees (12 MB at the default and depth >= 4)."""
    if capacity < 1 or capacity & (capacity - 1):
        raise ValueError(f"capacity must be a power of two, got {capacity}")
    k = max(min(depth - 1, MEMO_MAX_DEPTH), 0)
    rng = np.random.default_rng(seed)
    return Memo(
        z=rng.integers(0, np.iinfo(np.uint64).max, size=(max(n, 1), 2), dtype=np.uint64,
                       endpoint=True),
        hsh=np.zeros((depth + 1, 2), dtype=np.uint64),
        keys=np.zeros((capacity, 2), dtype=np.uint64),
        meta=np.zeros((capacity, 3), dtype=np.int64), val=np.zeros(capacity),
        rec=np.zeros((capacity, REC_FIELDS, 2 ** (k + 1) - 1), dtype=np.int32),
        reclen=np.zeros(capacity, dtype=np.int64))
