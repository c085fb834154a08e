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
  threshold of a depth-2 subproblem is evaluated by a pass over every second feature's
  sorted rows, split by side, giving both sides' best stumps exactly; within a pass, the
  cuts after one that costs ``e`` more than the side's best are not scored until that much
  weight has moved (each moved row changes a stump's error by at most its weight:
  ConTree's skipping). New here: each evaluated threshold keeps, per second feature and
  side, its stump cost (exact up to a margin above the side's best, a bound beyond), and a
  threshold between two evaluated ones bounds each feature's stump from them (a side that
  only gains rows keeps at least its bound, one that loses weight ``dw`` at least its bound
  less ``dw``): a feature that cannot beat a side's best so far is not scanned for it.
* **Depth two from counts on 0/1 features** (MurTree's depth-two solver, section 4.4): where
  every feature has two values and every row the same weight, a depth-2 subproblem is solved
  from the class counts of each feature and of each pair of features, counted by AND and
  population count over bitsets of the node's rows (:func:`depth_two_bits`); its children are
  then given only the first feature's sorted list.
* **A memo of solved subproblems** (the cache of DL8.5 and ConTree): the same rows meet the
  same depth budget under another order of splits (``x1`` then ``x2`` or ``x2`` then
  ``x1``); a subproblem's optimum with its tree, or the lower bound it proved, is stored
  under a 128-bit key of its row set (:func:`_memo_slot`) for depth budgets 2 to
  :data:`MEMO_MAX_DEPTH`.
* **Trivial bounds**: a subtree with a split costs at least ``2 alpha``, so a node whose leaf
  misclassifies at most ``alpha`` is a leaf; a pure node is a leaf.
* **An upper bound from the greedy tree** is given by the caller (the estimator fits CART of
  the same depth first).

Measured (``benchmarks/bench_optimal.py``, ConTree's tables, depth 3, seconds from the
first optimal-tree commit to this one): rice 18.7 -> 7.6, page 38.6 -> 2.5, segment 26.2 ->
2.1, wilt 2.0 -> 0.13. The raised bound of the smaller side gave most of
it, scanning each side apart 1.4-2x more on two classes, the per-feature bounds 10-30% on
two classes. Tried and not kept: an exact depth-2 sweep (for a root feature and a second
feature, the rows move left one at a time and each side's best stump follows from the
extremes of class-weight differences kept in segment trees, ``O(p^2 K^2 m log m)`` per
subproblem): it proves every threshold at once, but bisection with the bounds evaluates a
few per cent of the thresholds, and the sweep was 1.2-5x slower on every table but rice;
handing a subproblem over to it after a budget of evaluations was slower than either.
Integer class counts in place of float weights were not faster. On pydl8.5's 0/1 tables
the depth-two solver from counts took anneal at depth 4 from 25.5 s to 0.6-0.7 s (1,750
subproblems at about 0.3 ms each; DL8.5 1.4 s in the same run). Tried and not kept, in
the many-class stump scan: following each side's largest class row by row (a cut in O(1),
not O(K)): no faster on segment, slower on page; not scoring a cut inside a run of rows of
one class (the 0-1 cost is concave along such a run, so a cut that ends it costs no more:
Fayyad and Irani's boundary points): one run said 11% faster on segment, three interleaved
runs of best of 3 said 2.7-3.1 s against 2.4-3.2 s without it, so no gain beyond the noise.

The solution is recorded as it is found: each depth level keeps the best subtree of its
current subproblem in preorder (``res[d]``: feature, the largest rank on the left, the
smallest rank on the right; feature -1 for a leaf), and a parent copies its children's when
their sum is a new best, so the tree is known as soon as the search ends, and the incumbent
of the root is a valid tree at every moment.

Stopping: the kernel polls ``ctl[C_STOP]`` (set by the estimator's thread at the time limit
or on Ctrl-C) before every threshold it evaluates, and returns at once; nothing found after
the flag is recorded, so the root's incumbent is a complete tree. The kernel publishes its
progress in ``ctl`` (thresholds evaluated, root features finished, the root's incumbent),
which the estimator's thread shows as a progress bar.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .bits import popcount
from .config import njit

#: Fields of a recorded node: feature (-1: leaf), largest rank on the left, smallest rank on
#: the right.
REC_FIELDS = 3


#: ``ctl`` fields (float64, shared with the estimator's thread while the search runs): the
#: stop flag, the thresholds evaluated so far, the root's features finished (in the search's
#: order) and the root's incumbent objective.
C_STOP = 0
C_EVALS = 1
C_ROOT_DONE = 2
C_INCUMBENT = 3
CTL_FIELDS = 4
#: Memo slot kinds: empty, an optimum with its tree, a lower bound.
M_EMPTY = 0
M_EXACT = 1
M_BOUND = 2
#: Slots probed for a key before a stored answer is overwritten.
MEMO_PROBES = 8
#: Largest depth budget of a memoised subproblem (its tree is stored: 2**(k+1) - 1 nodes).
MEMO_MAX_DEPTH = 3
#: The depth-2 pass keeps each second feature's stump cost exactly up to the side's best
#: plus this fraction of the moved weight to the interval's ends (ConTree's half width), a
#: bound above it: the neighbouring thresholds then skip features that cannot win (measured
#: on ConTree's tables at depth 3: 0.25 and 0.5 alike, 0 up to 1.4x slower, 1 slower with
#: five or more classes).
MARGIN_SCALE = 0.25


@njit
def _misclassified(cw):
    """A leaf's misclassified weight from its class weights ``cw``: all but the largest."""
    tot = 0.0
    top = 0.0
    for c in range(cw.shape[0]):
        tot += cw[c]
        top = max(top, cw[c])
    return tot - top


@njit
def class_weights(lst, m, y, w, cw):
    """Class weights of the rows ``lst[:m]`` into ``cw``; returns their misclassified weight
    as a leaf."""
    cw[:] = 0.0
    for j in range(m):
        r = lst[j]
        cw[y[r]] += w[r]
    return _misclassified(cw)


@njit
def _offer(out_s, cost, last, gr, g, margin):
    """Keep the cut between ranks ``last`` and ``gr`` of feature ``g`` in ``out_s`` (cost,
    ranks, feature) if it costs less than the best so far; returns the weight the scan
    may pass before the next cut can beat the best (the cost above it, less ``margin``)."""
    if cost < out_s[0]:
        out_s[0] = cost
        out_s[1] = last
        out_s[2] = gr
        out_s[3] = g
    return cost - out_s[0] - margin


@njit
def _scan_two(buf, cnt, rank_g, g, y, w, min_leaf, alpha, t0, t1, out_s, margin):
    """One side's best stump on feature ``g``, two classes: the rows ``buf[:cnt]`` sorted by
    ``g`` (ranks ``rank_g``), the side's class weights ``t0``, ``t1``. ``out_s = (cost,
    largest rank left, smallest rank right, feature)`` is improved where a stump of ``g``
    costs less; returns the least cost of a scored cut, and every cut of ``g`` costs at least
    ``min(that, out_s[0] + margin)``.

    After a cut that costs ``e`` more than the side's best plus ``margin``, the next cuts
    are not scored until weight ``e`` has moved left (each moved row changes a stump's
    error by at most its weight: ConTree's skipping in its depth-two solver). The class
    weights are two scalars: with one side's rows apart (:func:`_split_rows`) there is no
    state to index, which a pass over both sides at once needs (measured 1.4-1.9x faster
    per feature pass on ConTree's binary tables)."""
    c0 = 0.0
    c1 = 0.0
    last = np.int64(-1)
    low = np.inf
    credit = 0.0
    for j in range(cnt):
        r = buf[j]
        gr = np.int64(rank_g[r])
        if credit <= 0.0 and gr != last and j >= min_leaf and cnt - j >= min_leaf:
            cost = min(c0, c1) + min(t0 - c0, t1 - c1) + 2.0 * alpha
            low = min(low, cost)
            credit = _offer(out_s, cost, last, gr, g, margin)
        wr = w[r]
        yc = y[r]
        c1 += wr * yc
        c0 += wr * (1 - yc)
        credit -= wr
        last = gr
    return low


@njit
def _scan_side(buf, cnt, rank_g, g, y, w, min_leaf, alpha, tot_s, cum_s, out_s, margin):
    """:func:`_scan_two` for any number of classes: the side's class weights ``tot_s``, the
    running ones in ``cum_s``."""
    K = tot_s.shape[0]
    cum_s[:] = 0.0
    last = np.int64(-1)
    low = np.inf
    credit = 0.0
    for j in range(cnt):
        r = buf[j]
        gr = np.int64(rank_g[r])
        if credit <= 0.0 and gr != last and j >= min_leaf and cnt - j >= min_leaf:
            lw = 0.0
            ltop = 0.0
            rw = 0.0
            rtop = 0.0
            for c in range(K):
                a = cum_s[c]
                b = tot_s[c] - a
                lw += a
                rw += b
                ltop = max(ltop, a)
                rtop = max(rtop, b)
            cost = (lw - ltop) + (rw - rtop) + 2.0 * alpha
            low = min(low, cost)
            credit = _offer(out_s, cost, last, gr, g, margin)
        wr = w[r]
        cum_s[y[r]] += wr
        credit -= wr
        last = gr
    return low


@njit
def _scan(buf, cnt, rank_g, g, y, w, min_leaf, alpha, tot_s, cum_s, out_s, margin):
    """One side's best stump on ``g`` (:func:`_scan_two` or :func:`_scan_side`)."""
    if tot_s.shape[0] == 2:
        return _scan_two(buf, cnt, rank_g, g, y, w, min_leaf, alpha, tot_s[0], tot_s[1], out_s,
                         margin)
    return _scan_side(buf, cnt, rank_g, g, y, w, min_leaf, alpha, tot_s, cum_s, out_s, margin)


@njit
def _split_rows(lst, m, rank_f, thr, rows):
    """The rows ``lst[:m]`` split by ``rank_f <= thr`` into ``rows[0]`` and ``rows[1]``, in
    order; returns the two counts."""
    n0 = 0
    n1 = 0
    for j in range(m):
        r = lst[j]
        right = np.int64(rank_f[r] > thr)
        rows[0, n0] = r
        rows[1, n1] = r
        n1 += right
        n0 += 1 - right
    return n0, n1


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
    out[s, 0] = _misclassified(tot[s]) + alpha
    out[s, 1] = -1.0
    out[s, 2] = -1.0
    out[s, 3] = -1.0


@njit
def _stumps_below(data, bufs, fpar, ipar, d, f, thr, i, glb, margin, gv):
    """Each side's best stump (or leaf) after splitting level ``d``'s rows at the ``i``-th
    row of feature ``f`` (``thr``: the largest rank on the left; ``f < 0``: no split, every
    row on side 0); the costs in ``out[d, s, 0]``.

    ``glb[s, g]``: a lower bound of side ``s``'s best over its leaf and the stumps on ``g``
    (``-inf``: none known); a feature whose bounds reach both sides' best so far is not
    scanned, and features are scanned in order of their bounds. ``gv[s, g]`` receives such a
    bound for this split: for a scanned feature, exact where it is below the side's best plus
    ``margin``; for a skipped one, ``glb[s, g]``."""
    rank, y, w = data
    lists, size = bufs.lists, bufs.size
    tot, cum, out, ntot = bufs.tot, bufs.cum, bufs.out, bufs.ntot
    alpha, min_leaf = fpar[0], ipar[0]
    m = size[d]
    p = rank.shape[0]
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
    leaf0 = out[d, 0, 0]
    leaf1 = out[d, 1, 0]
    for g in range(p):
        gv[0, g] = leaf0
        gv[1, g] = leaf1
    # a side whose leaf errs at most alpha is a leaf (any split costs 2 alpha): not searched
    if leaf0 <= 2.0 * alpha and leaf1 <= 2.0 * alpha:
        return
    key = bufs.key
    for g in range(p):
        key[g] = min(glb[0, g], glb[1, g])
    # the views the loop reads, taken once (each view of an array is counted by reference)
    out0, out1, tot0, tot1, cum0, cum1 = out[d, 0], out[d, 1], tot[d, 0], tot[d, 1], cum[d, 0], \
        cum[d, 1]
    rows, rows0, rows1 = bufs.rows, bufs.rows[0], bufs.rows[1]
    n0, n1 = ntot[d, 0], ntot[d, 1]
    for g in np.argsort(key):
        need0 = glb[0, g] < out0[0] and leaf0 > 2.0 * alpha
        need1 = glb[1, g] < out1[0] and leaf1 > 2.0 * alpha
        if not (need0 or need1):
            gv[0, g] = min(leaf0, max(glb[0, g], out0[0]))
            gv[1, g] = min(leaf1, max(glb[1, g], out1[0]))
            continue
        lg = lists[d, g]
        rg = rank[g]
        src0, src1 = rows0, rows1
        if f >= 0:
            _split_rows(lg, m, fr, thr, rows)
        else:  # every row on side 0, already in g's order
            src0, src1 = lg, lg
        if need0:
            low0 = _scan(src0, n0, rg, g, y, w, min_leaf, alpha, tot0, cum0, out0, margin)
            gv[0, g] = min(leaf0, low0, out0[0] + margin)
        else:
            gv[0, g] = min(leaf0, max(glb[0, g], out0[0]))
        if need1:
            low1 = _scan(src1, n1, rg, g, y, w, min_leaf, alpha, tot1, cum1, out1, margin)
            gv[1, g] = min(leaf1, low1, out1[0] + margin)
        else:
            gv[1, g] = min(leaf1, max(glb[1, g], out1[0]))


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
def _child_lists(data, bufs, memo, d, f, thr, right, n_lists):
    """Level ``d + 1``'s sorted lists of the first ``n_lists`` features (all but the first
    are not read where :func:`depth_two_bits` solves the child): the rows of level ``d`` on
    one side of ``rank_f <= thr``; and the key of that row set (:func:`_memo_slot`)."""
    rank = data[0]
    lists, size = bufs.lists, bufs.size
    m = size[d]
    rf = rank[f]
    c = 0
    h0 = np.uint64(0)
    h1 = np.uint64(0)
    for g in range(n_lists):
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
def _cell_cost(cnt, K, wu, alpha):
    """A leaf's cost from its rows' class counts ``cnt`` (every row of weight ``wu``), and
    its row count."""
    tot = 0
    for c in range(K):
        tot += cnt[c]
    return _misclassified(cnt) * wu + alpha, tot


@njit
def depth_two_bits(bufs, fpar, ipar, d):
    """The optimal tree of depth at most two over level ``d``'s rows of a table of 0/1
    features whose rows weigh alike, from class counts of feature pairs (MurTree's depth-two
    solver, Demirović et al., JMLR 2022, section 4.4, counted here by AND and population
    count over row bitsets): its cost, the tree in ``res[d]``.

    Every count the tree needs is one of a node's class counts ``n[c]``, the counts on a
    feature's 1 side ``s[i, c]`` and on both features' 1 sides ``q[i, j, c]``: the cells of
    a root ``i`` and a second feature ``j`` are ``q``, ``s[i] - q``, ``s[j] - q`` and ``n -
    s[i] - s[j] + q``. A pass over the node's rows makes its bitset, one over its nonzero
    words the ``s`` and ``q`` counts (``p**2 K / 2`` word counts each), and the choice of the
    best tree reads only counts: no threshold is evaluated one by one."""
    lists, size, res, rlen = bufs.lists, bufs.size, bufs.res, bufs.rlen
    fbits, cbits, nwords, words, fw, pair = (bufs.fbits, bufs.cbits, bufs.nwords, bufs.words,
                                             bufs.fw, bufs.pair)
    alpha = fpar[0]
    min_leaf = max(ipar[0], 1)
    wu = bufs.wunit[0]
    p = fbits.shape[0]
    K = cbits.shape[0]
    m = size[d]
    lst = lists[d, 0]
    # the node's bitset, compacted to its nonzero words
    for j in range(m):
        r = lst[j]
        nwords[r >> 6] = 0
    nw = 0
    for j in range(m):
        r = lst[j]
        wd = r >> 6
        if nwords[wd] == 0:
            words[nw] = wd
            nw += 1
        nwords[wd] |= np.uint64(1) << np.uint64(r & 63)
    n, s, cell, side = bufs.bn, bufs.bs, bufs.bcell, bufs.bside
    n[:] = 0
    for c in range(K):
        for t in range(nw):
            wd = words[t]
            n[c] += popcount(nwords[wd] & cbits[c, wd])
    for i in range(p):
        for c in range(K):
            tot = 0
            for t in range(nw):
                wd = words[t]
                b = nwords[wd] & fbits[i, wd] & cbits[c, wd]
                fw[i, c, t] = b
                tot += popcount(b)
            s[i, c] = tot
    for i in range(p):
        for j in range(i + 1, p):
            for c in range(K):
                tot = 0
                for t in range(nw):
                    tot += popcount(fw[i, c, t] & fbits[j, words[t]])
                pair[i, j, c] = tot
                pair[j, i, c] = tot
    leaf, _ = _cell_cost(n, K, wu, alpha)
    best = leaf
    _put(res, d, 0, -1, -1, -1)
    rlen[d] = 1
    for i in range(p):
        # side 0: x_i = 0, side 1: x_i = 1
        for c in range(K):
            cell[0, c] = n[c] - s[i, c]
            cell[1, c] = s[i, c]
        c0, m0 = _cell_cost(cell[0], K, wu, alpha)
        c1, m1 = _cell_cost(cell[1], K, wu, alpha)
        if m0 < min_leaf or m1 < min_leaf:
            continue
        side[0, 0] = c0
        side[1, 0] = c1
        side[:, 3] = -1.0
        for j in range(p):
            if j == i:
                continue
            for c in range(K):
                q = pair[i, j, c]
                cell[0, c] = n[c] - s[i, c] - s[j, c] + q  # x_i = 0, x_j = 0
                cell[1, c] = s[j, c] - q  # x_i = 0, x_j = 1
                cell[2, c] = s[i, c] - q  # x_i = 1, x_j = 0
                cell[3, c] = q  # x_i = 1, x_j = 1
            for h in range(2):
                a_cost, a_m = _cell_cost(cell[2 * h], K, wu, alpha)
                b_cost, b_m = _cell_cost(cell[2 * h + 1], K, wu, alpha)
                if a_m >= min_leaf and b_m >= min_leaf and a_cost + b_cost < side[h, 0]:
                    side[h, 0] = a_cost + b_cost
                    side[h, 1] = 0.0
                    side[h, 2] = 1.0
                    side[h, 3] = j
        if side[0, 0] + side[1, 0] < best:
            best = side[0, 0] + side[1, 0]
            _put(res, d, 0, i, 0, 1)
            at = _put_stump(res, d, np.int64(1), side[0])
            rlen[d] = _put_stump(res, d, at, side[1])
    return best


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
    err = class_weights(lists[d, 0], m, y, w, cw[d])
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
        bufs.glb[d, :, :] = -np.inf
        _stumps_below(data, bufs, fpar, ipar, d, np.int64(-1), np.int64(0), np.int64(0),
                      bufs.glb[d], 0.0, bufs.gv[d])
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
    if k == 2 and bufs.wunit[0] > 0.0:  # 0/1 features, rows of one weight: from counts
        ctl[C_EVALS] += p
        v = depth_two_bits(bufs, fpar, ipar, d)
        if d == 0:
            ctl[C_ROOT_DONE] = p
            ctl[C_INCUMBENT] = min(target, v)
        if slot >= 0:
            _memo_store(memo, bufs, d, k, m, slot, v, True)
        return v
    # a child solved from counts reads its rows from the first feature's list only
    n_lists = 1 if k == 3 and bufs.wunit[0] > 0.0 else p
    # features in order of their best Gini split, each feature's best Gini threshold first:
    # good incumbents early make the bounds bite (ConTree's ordering)
    score = np.full(p, -np.inf)
    firsts = np.zeros(p, dtype=np.int64)
    for f in range(p):
        q = _fill_positions(data, bufs, ipar, d, f)
        if q > 0:
            firsts[f], score[f] = _gini_best(data, bufs, d, f, q)
    order = np.argsort(-score, kind="mergesort")
    for o in range(p):
        f = order[o]
        if d == 0:
            ctl[C_ROOT_DONE] = o
        # pos[d] holds one feature's thresholds at a time: filled again for this one
        q = _fill_positions(data, bufs, ipar, d, f)
        if q == 0:
            continue
        lf = lists[d, f]
        first = firsts[f] if prune else -1
        bufs.ecount[d] = 0
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
                # each second feature's bounds from the evaluated thresholds around this one:
                # a side that only gains rows keeps at least its bound, one that loses
                # weight dw at least its bound less dw
                glb = bufs.glb[d]
                glb[:, :] = -np.inf
                margin = 0.0
                if prune:
                    margin = MARGIN_SCALE * max(pw[d, i] - pw[d, pos[d, a]],
                                                pw[d, pos[d, b]] - pw[d, i])
                    if ea >= 0 and bufs.eslot[d, ea] >= 0:
                        e = bufs.eslot[d, ea]
                        dw = pw[d, i] - pw[d, pos[d, ea]]
                        for g in range(p):
                            glb[0, g] = max(glb[0, g], bufs.gtab[d, e, 0, g])
                            glb[1, g] = max(glb[1, g], bufs.gtab[d, e, 1, g] - dw)
                    if eb >= 0 and bufs.eslot[d, eb] >= 0:
                        e = bufs.eslot[d, eb]
                        dw = pw[d, pos[d, eb]] - pw[d, i]
                        for g in range(p):
                            glb[0, g] = max(glb[0, g], bufs.gtab[d, e, 0, g] - dw)
                            glb[1, g] = max(glb[1, g], bufs.gtab[d, e, 1, g])
                e = bufs.ecount[d]
                gv = bufs.gv[d]
                bufs.eslot[d, mid] = -1
                if prune and e < bufs.gtab.shape[1]:
                    bufs.eslot[d, mid] = e
                    bufs.ecount[d] = e + 1
                    gv = bufs.gtab[d, e]
                _stumps_below(data, bufs, fpar, ipar, d, np.int64(f), thr, i, glb, margin, gv)
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
                _child_lists(data, bufs, memo, d, np.int64(f), thr, big_right, n_lists)
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
                    _child_lists(data, bufs, memo, d, np.int64(f), thr, not big_right,
                                 n_lists)
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
            if d == 0:
                ctl[C_INCUMBENT] = target
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
    if d == 0:
        ctl[C_ROOT_DONE] = p
    v = target if target < ub else ub
    if slot >= 0:
        _memo_store(memo, bufs, d, k, m, slot, v, target < ub)
    return v


#: The search's scratch (see :func:`buffers`).
Scratch = namedtuple("Scratch", "lists size res rlen tmp tmplen pos pw queue tot cum out ntot cw "
                                "lbL lbR glb gv gtab eslot ecount rows key "
                                "wunit fbits cbits nwords words fw pair bn bs bcell bside")
#: Evaluated thresholds per feature and level whose per-feature stump bounds are kept.
GTAB_ROWS = 1024
#: Largest table of feature-pair class counts (bytes) for which :func:`depth_two_bits` is
#: used on 0/1 features: ``p * p * K * 8`` (64 MB: 2,000 features of two classes).
PAIR_BYTES = 64 << 20
#: The memo of solved subproblems (see :func:`memo`).
Memo = namedtuple("Memo", "z hsh keys meta val rec reclen")


def buffers(ranks: np.ndarray, n_classes: int, depth: int, y: np.ndarray | None = None,
            w: np.ndarray | None = None) -> Scratch:
    """The search's scratch for the rank table ``ranks`` (features x rows), ``n_classes``
    classes and trees of depth at most ``depth`` (see :func:`solve`), with level 0 holding
    every row: level ``d``'s sorted lists and sizes, records, the first-solved child's record,
    candidate thresholds, prefix weights, bisection queue (interval and the evaluated
    thresholds around it), the stump search's class weights, costs and row counts, a
    class-weight scratch, and each evaluated threshold's lower bounds of its left and right
    sides. Given the class codes ``y`` and weights ``w`` of a table of 0/1 features whose
    rows weigh alike (and whose pair counts fit :data:`PAIR_BYTES`), also the row bitsets of
    each feature and class for :func:`depth_two_bits` (``wunit``: the rows' weight; 0 where
    that solver does not apply)."""
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
        cw=np.empty((D, K)), lbL=np.empty((D, max(n, 1))), lbR=np.empty((D, max(n, 1))),
        glb=np.empty((D, 2, p)), gv=np.empty((D, 2, p)),
        gtab=np.empty((D, min(max(n, 1), GTAB_ROWS), 2, p)),
        eslot=np.full((D, max(n, 1)), -1, dtype=np.int64), ecount=np.zeros(D, dtype=np.int64),
        rows=np.empty((2, max(n, 1)), dtype=np.int32), key=np.empty(p),
        **_bitsets(ranks, K, y, w))
    for f in range(p):
        bufs.lists[0, f] = np.argsort(ranks[f], kind="stable")
    bufs.size[0] = n
    return bufs


def _bitsets(ranks: np.ndarray, K: int, y, w) -> dict:
    """The scratch of :func:`depth_two_bits` (see :func:`buffers`): empty where it does not
    apply."""
    p, n = ranks.shape
    W = (n + 63) // 64
    applies = (y is not None and w is not None and n > 0 and p > 1 and int(ranks.max()) <= 1
               and float(w.min()) == float(w.max()) and p * p * K * 8 <= PAIR_BYTES)
    if not applies:
        return dict(wunit=np.zeros(1), fbits=np.zeros((1, 1), dtype=np.uint64),
                    cbits=np.zeros((1, 1), dtype=np.uint64), nwords=np.zeros(1, np.uint64),
                    words=np.zeros(1, np.int64), fw=np.zeros((1, 1, 1), dtype=np.uint64),
                    pair=np.zeros((1, 1, 1), dtype=np.int64), bn=np.zeros(1, np.int64),
                    bs=np.zeros((1, 1), np.int64), bcell=np.zeros((4, 1), np.int64),
                    bside=np.zeros((2, 4)))

    def pack(mask: np.ndarray) -> np.ndarray:  # rows -> little-endian uint64 words
        bits = np.packbits(np.concatenate([mask, np.zeros(W * 64 - n, dtype=bool)]),
                           bitorder="little")
        return bits.view("<u8").astype(np.uint64)

    return dict(wunit=np.array([float(w[0])]),
                fbits=np.stack([pack(ranks[f] == 1) for f in range(p)]),
                cbits=np.stack([pack(y == c) for c in range(K)]),
                nwords=np.zeros(W, dtype=np.uint64), words=np.zeros(W, dtype=np.int64),
                fw=np.zeros((p, K, W), dtype=np.uint64), pair=np.zeros((p, p, K), np.int64),
                # the node's class counts, each feature's on its 1 side, the four cells of a
                # root and second feature, and per side of the root (cost, rank left, rank
                # right, feature)
                bn=np.zeros(K, np.int64), bs=np.zeros((p, K), np.int64),
                bcell=np.zeros((4, K), np.int64), bside=np.zeros((2, 4)))


def memo(n: int, depth: int, capacity: int = 1 << 16, seed: int = 0) -> Memo:
    """An empty memo of ``capacity`` slots (a power of two) for subproblems of ``n`` rows with
    depth budget at most ``k = min(depth - 1, MEMO_MAX_DEPTH)``: about ``capacity * 12 *
    (2**(k+1) - 1)`` bytes of stored trees (12 MB at the default and depth >= 4). Below depth
    3 no subproblem is memoised (budgets from 2 up are), and the memo has one slot."""
    if capacity < 1 or capacity & (capacity - 1):
        raise ValueError(f"capacity must be a power of two, got {capacity}")
    k = max(min(depth - 1, MEMO_MAX_DEPTH), 0)
    if k < 2:  # no subproblem below the root has a depth budget of 2: nothing is memoised
        n, capacity = 1, 1
    rng = np.random.default_rng(seed)
    return Memo(
        z=rng.integers(0, np.iinfo(np.uint64).max, size=(max(n, 1), 2), dtype=np.uint64,
                       endpoint=True),
        hsh=np.zeros((depth + 1, 2), dtype=np.uint64),
        keys=np.zeros((capacity, 2), dtype=np.uint64),
        meta=np.zeros((capacity, 3), dtype=np.int64), val=np.zeros(capacity),
        rec=np.zeros((capacity, REC_FIELDS, 2 ** (k + 1) - 1), dtype=np.int32),
        reclen=np.zeros(capacity, dtype=np.int64))
