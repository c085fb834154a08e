"""Growing a tree with the histogram splitter (``splitter="hist"``).

The growers mirror :mod:`treelearn._builder` (depth-first stack with preorder numbering, or a
best-first heap for ``max_leaf_nodes``; same node table, stopping rules and improvement), but a
node's split comes from histograms (:mod:`treelearn._split_hist`):

* a node's rows are one contiguous range of a row-major bin matrix; splitting copies them into
  the other of two buffers (depth parity), left rows first;
* after a split, the histogram of the *smaller* child is built from its rows and the larger
  child's is the parent's minus it, in the parent's memory;
* histograms live in a pool of slots. A node waiting on the stack or heap keeps its histogram
  only while two slots stay free for the node being worked on (the reserve); otherwise it is
  rebuilt from the node's rows when needed. The pool's size is bounded by a memory budget
  (:data:`HIST_POOL_BYTES`), so wide data cannot exhaust memory;
* children that cannot be split (depth, size limits) get no histogram at all;
* small nodes (fewer rows than a histogram has cells) build theirs from their rows in a slot
  kept clean, and clear it again by the same rows: zeroing or subtracting whole histograms
  would cost more than the node's rows (this halves the time of unlimited-depth trees, whose
  nodes are mostly small);
* large nodes build histograms and partition rows on all threads. Scans stay serial: a node's
  scan costs (features x bins), at most a few hundred microseconds, and a parallel version
  doubled the scan's compilation time for a gain the benchmarks could not see.

``max_features`` draws features with scikit-learn's generator (a partial Fisher-Yates shuffle);
when none of the drawn features can split the node, the remaining ones are tried, as
scikit-learn does.
"""

from __future__ import annotations

import numba
import numpy as np

from ._builder import (
    F_IMPROVEMENT,
    F_IMPURITY,
    F_THRESHOLD,
    F_WEIGHT,
    I_DEPTH,
    I_FEATURE,
    I_HI,
    I_LEFT,
    I_LO,
    I_NLEFT,
    I_NSAMP,
    I_RIGHT,
    N_FCOLS,
    N_ICOLS,
    P_MAX_DEPTH,
    P_MAX_FEATURES,
    P_MAX_LEAF_NODES,
    P_MIN_IMPURITY_DECREASE,
    P_MIN_LEAF,
    P_MIN_SPLIT,
    P_MIN_WEIGHT_LEAF,
    P_SEED,
    P_TOTAL_WEIGHT,
    TREE_LEAF,
    TREE_UNDEFINED,
    _grow,
    heap_pop,
    heap_push,
    push_children,
    rand_int,
)
from ._config import EPSILON, PARALLEL_MIN_WORK, njit
from ._criteria import SQUARED_ERROR, impurity_improvement, node_impurity
from ._split_exact import prefix_abs_cost, weighted_median
from ._split_hist import (
    clear_rows,
    hist_node,
    hist_node_parallel,
    hist_rows,
    node_bins,
    partition_rows,
    partition_rows_parallel,
    row_stats,
    scan_abs,
    scan_hist,
    subtract,
)

#: Extra node-table columns of the histogram growers: the split's bin and the node's slot.
I_BIN = N_ICOLS
I_SLOT = N_ICOLS + 1
N_HCOLS = N_ICOLS + 2

#: Nodes of at most this many rows scan only their non-empty bins (found from the rows).
TINY_ROWS = 24
#: Memory the histogram pool may take (pages are touched only as slots are used).
HIST_POOL_BYTES = 64 * 2**20


@njit
def _new_table(V):
    cap = 64
    return (np.empty((cap, N_HCOLS), dtype=np.int64), np.empty((cap, N_FCOLS)),
            np.empty((cap, V)))


@njit
def _side(bufs, buf):
    """The row buffers of parity ``buf``: (bins, class codes, targets, weights)."""
    B0, B1, C0, C1, R0, R1, W0, W1, _, _ = bufs
    if buf == 0:
        return B0, C0, R0, W0
    return B1, C1, R1, W1


@njit
def _take(free, nfree):
    nfree[0] -= 1
    return free[nfree[0]]


@njit
def _release(free, nfree, slot):
    if slot >= 0:
        free[nfree[0]] = slot
        nfree[0] += 1


@njit
def _keep(free, nfree, slot):
    """A waiting node keeps its histogram only if two slots stay free (the working reserve)."""
    if slot >= 0 and nfree[0] < 2:
        _release(free, nfree, slot)
        return -1
    return slot


@njit
def _keep_pair(free, nfree, large, small):
    """Two waiting siblings: both keep their histograms if two slots stay free, else the
    larger one (dearer to rebuild) keeps its own if it can."""
    if nfree[0] >= 2:
        return large, small
    _release(free, nfree, small)
    return _keep(free, nfree, large), np.int64(-1)


@njit
def _build(bufs, buf, lo, hi, hist, priv):
    B, C, R, W = _side(bufs, buf)
    if priv is not None:
        n = hi - lo
        if n * B.shape[1] >= PARALLEL_MIN_WORK and n >= 2 * hist.shape[1] * hist.shape[2]:
            hist_node_parallel(B, C, R, W, lo, hi, hist, priv)
            return
    hist_node(B, C, R, W, lo, hi, hist)


@njit
def _partition(bufs, buf, lo, hi, f, tb, nl, counts):
    Bs, Cs, Rs, Ws = _side(bufs, buf)
    _, Cd, Rd, Wd = _side(bufs, 1 - buf)
    Vs = bufs[8] if buf == 0 else bufs[9]
    Vd = bufs[9] if buf == 0 else bufs[8]
    if counts is not None:
        if (hi - lo) * Bs.shape[1] >= 4 * PARALLEL_MIN_WORK:
            partition_rows_parallel(Bs, Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, f, tb, nl,
                                    counts)
            return lo + nl
    partition_rows(Bs, Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, f, tb, nl)
    return lo + nl


@njit
def _open(node, lo, hi, depth, bufs, crit, S, iparams, fparams, inode, fnode, value, absolute):
    """Fill the node's table row from its rows; return ``(stats, wn, imp, splittable)``."""
    B, C, R, W = _side(bufs, depth & 1)
    stats = np.zeros(S)
    wn = row_stats(B, C, R, W, lo, hi, np.int64(-1), np.int64(0), stats)
    nn = hi - lo
    if absolute is not None:
        ys = np.empty(nn)
        ws = np.empty(nn)
        for i in range(nn):
            ys[i] = R[lo + i]
            ws[i] = W[lo + i]
        cost = np.empty(nn + 1)
        prefix_abs_cost(ys, ws, cost)
        imp = cost[nn] / wn
        value[node, 0] = weighted_median(ys, ws)
    else:
        imp = node_impurity(stats, wn, crit)
        if crit == SQUARED_ERROR:
            value[node, 0] = stats[0] / wn
        else:
            for k in range(S):
                value[node, k] = stats[k] / wn
    inode[node, I_LEFT] = TREE_LEAF
    inode[node, I_RIGHT] = TREE_LEAF
    inode[node, I_FEATURE] = TREE_UNDEFINED
    inode[node, I_NSAMP] = nn
    inode[node, I_LO] = lo
    inode[node, I_HI] = hi
    inode[node, I_DEPTH] = depth
    inode[node, I_NLEFT] = 0
    inode[node, I_BIN] = -1
    inode[node, I_SLOT] = -1
    fnode[node, F_THRESHOLD] = TREE_UNDEFINED
    fnode[node, F_IMPURITY] = imp
    fnode[node, F_WEIGHT] = wn
    fnode[node, F_IMPROVEMENT] = 0.0
    min_leaf = iparams[P_MIN_LEAF]
    splittable = not (
        depth >= iparams[P_MAX_DEPTH]
        or nn < iparams[P_MIN_SPLIT]
        or nn < 2 * min_leaf
        or wn < 2.0 * fparams[P_MIN_WEIGHT_LEAF]
        or imp <= EPSILON
    )
    return stats, wn, imp, splittable


@njit
def _may_split(n, depth, iparams):
    """Whether a child of ``n`` rows at ``depth`` can pass the size and depth rules."""
    return (depth < iparams[P_MAX_DEPTH] and n >= iparams[P_MIN_SPLIT]
            and n >= 2 * iparams[P_MIN_LEAF])


@njit
def _find_split(node, lo, hi, bufs, hist, nbins, edges, stats, wn, imp, crit, iparams, fparams,
                inode, fnode, scratch, absolute):
    """Search the node's best split from its histogram; record it in the table (or leave the
    node a leaf when no valid split improves enough)."""
    perm, rng, feats, res_score, res_bin, res_nl, res_wl, res_left, res_cl, res_cr = scratch
    depth = inode[node, I_DEPTH]
    B, C, R, W = _side(bufs, depth & 1)
    p = perm.shape[0]
    S = stats.shape[0]
    nn = hi - lo
    min_leaf = iparams[P_MIN_LEAF]
    min_wleaf = fparams[P_MIN_WEIGHT_LEAF]
    weighted = hist.shape[2] > (2 if crit >= SQUARED_ERROR else S)
    mf = iparams[P_MAX_FEATURES]
    if mf >= p:
        m = p
        for j in range(p):
            feats[j] = j
    else:
        m = mf
        for j in range(m):
            r = rand_int(j, p, rng)
            perm[j], perm[r] = perm[r], perm[j]
        for j in range(p):
            feats[j] = perm[j]
    start = 0
    best = -1
    while True:
        if absolute is not None:
            for j in range(start, m):
                f = feats[j]
                (res_score[j], res_bin[j], res_nl[j], res_wl[j], res_cl[j],
                 res_cr[j]) = scan_abs(B, R, W, lo, hi, f, nbins[f], wn, min_leaf, min_wleaf,
                                       np.empty(nn + 1), np.empty(nn + 1))
        else:
            left = np.empty(S)
            right = np.empty(S)
            order = np.empty(max(nn, 1), dtype=np.int64)
            for j in range(start, m):
                f = feats[j]
                n_order = -1
                if nn <= TINY_ROWS:
                    n_order = node_bins(B, lo, hi, f, order)
                res_score[j], res_bin[j], res_nl[j], res_wl[j] = scan_hist(
                    hist, f, nbins[f], stats, wn, nn, crit, imp, min_leaf, min_wleaf, weighted,
                    left, right, res_left[j], order, n_order)
        best_score = -np.inf
        for j in range(m):
            if res_score[j] > best_score:
                best_score = res_score[j]
                best = j
        if best >= 0 or m >= p:
            break
        # None of the drawn features can split: try the others (scikit-learn does too).
        start = m
        m = p
    if best < 0:
        return
    f = feats[best]
    tb = res_bin[best]
    nl = res_nl[best]
    wl = res_wl[best]
    wr = wn - wl
    if absolute is not None:
        imp_l = res_cl[best] / wl
        imp_r = res_cr[best] / wr
    else:
        left = np.zeros(S)
        if crit >= SQUARED_ERROR:
            # Histograms hold no sums of squares: the children's come from the rows.
            wl = row_stats(B, C, R, W, lo, hi, f, tb, left)
            wr = wn - wl
        else:
            for k in range(S):
                left[k] = res_left[best, k]
        right = np.empty(S)
        for k in range(S):
            right[k] = stats[k] - left[k]
        imp_l = node_impurity(left, wl, crit)
        imp_r = node_impurity(right, wr, crit)
    improvement = impurity_improvement(fparams[P_TOTAL_WEIGHT], wn, imp, wl, imp_l, wr, imp_r)
    if improvement + EPSILON < fparams[P_MIN_IMPURITY_DECREASE]:
        return
    inode[node, I_FEATURE] = f
    inode[node, I_NLEFT] = nl
    inode[node, I_BIN] = tb
    fnode[node, F_THRESHOLD] = np.float64(edges[f, tb])
    fnode[node, F_IMPROVEMENT] = improvement


@njit
def _small(n, pool):
    """Whether a node of ``n`` rows is small: building its histogram from its rows (n x p
    additions, into the clean slot, cleared afterwards by the same rows) costs less than
    zeroing or subtracting a whole histogram (p x bins x columns)."""
    return n < pool.shape[2] * pool.shape[3]


@njit
def _node_hist(bufs, buf, lo, hi, pool, free, nfree, priv):
    """Histogram of a node that has none: the slot it is in (the clean slot, the last one of
    the pool, for a small node; the caller clears it with :func:`_clear`)."""
    if _small(hi - lo, pool):
        clean = pool.shape[0] - 1
        B, C, R, W = _side(bufs, buf)
        hist_rows(B, C, R, W, lo, hi, pool[clean])
        return clean
    slot = _take(free, nfree)
    _build(bufs, buf, lo, hi, pool[slot], priv)
    return slot


@njit
def _clear(bufs, buf, lo, hi, pool):
    B, _, _, _ = _side(bufs, buf)
    clear_rows(B, lo, hi, pool[pool.shape[0] - 1])


@njit
def _split_hists(bufs, buf, lo, mid, hi, slot, pool, free, nfree, priv, need_l, need_r):
    """Histograms of the children that need one (``need_*``) and are not small, from the
    parent's (``slot``; -1 if it was dropped): the larger child's is the parent's minus the
    smaller's, the smaller's is built from its rows. Returns their slots (-1: none)."""
    small_left = mid - lo <= hi - mid
    s_lo, s_hi, s_need = (lo, mid, need_l) if small_left else (mid, hi, need_r)
    g_lo, g_hi, g_need = (mid, hi, need_r) if small_left else (lo, mid, need_l)
    s_slot = np.int64(-1)
    g_slot = np.int64(-1)
    if g_need and not _small(g_hi - g_lo, pool):
        if slot < 0:
            g_slot = _node_hist(bufs, buf, g_lo, g_hi, pool, free, nfree, priv)
        elif s_need and not _small(s_hi - s_lo, pool):
            s_slot = _take(free, nfree)
            _build(bufs, buf, s_lo, s_hi, pool[s_slot], priv)
            subtract(pool[slot], pool[s_slot])
            g_slot = slot
        else:
            clean = _node_hist(bufs, buf, s_lo, s_hi, pool, free, nfree, priv)
            subtract(pool[slot], pool[clean])
            _clear(bufs, buf, s_lo, s_hi, pool)
            g_slot = slot
    else:
        _release(free, nfree, slot)
    if small_left:
        return s_slot, g_slot
    return g_slot, s_slot


@njit
def build_hist_depth_first(bufs, nbins, edges, crit, S, V, iparams, fparams, pool, free, nfree,
                           priv, absolute, scratch, counts):
    """Depth-first growth (preorder numbering); arguments as :func:`build_hist`."""
    inode, fnode, value = _new_table(V)
    node_count = np.int64(0)
    max_depth = np.int64(0)
    # (lo, hi, depth, parent, is_left, histogram slot) per pending node
    stack = np.empty((64, 6), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = bufs[0].shape[0]
    stack[0, 2] = 0
    stack[0, 3] = -1
    stack[0, 4] = 0
    stack[0, 5] = -1
    top = 1
    while top > 0:
        top -= 1
        lo, hi, depth, parent, is_left, slot = stack[top]
        inode, fnode, value = _grow(inode, fnode, value, node_count + 1)
        node = node_count
        node_count += 1
        if parent >= 0:
            inode[parent, I_LEFT if is_left else I_RIGHT] = node
        slot = _open_and_search(node, lo, hi, depth, slot, bufs, nbins, edges, crit, S, iparams,
                                fparams, inode, fnode, value, pool, free, nfree, priv, absolute,
                                scratch)
        if depth > max_depth:
            max_depth = depth
        if inode[node, I_FEATURE] == TREE_UNDEFINED:
            continue
        mid = _partition(bufs, depth & 1, lo, hi, inode[node, I_FEATURE], inode[node, I_BIN],
                         inode[node, I_NLEFT], counts)
        sl = np.int64(-1)
        sr = np.int64(-1)
        if absolute is None:
            sl, sr = _split_hists(bufs, (depth + 1) & 1, lo, mid, hi, slot, pool, free, nfree,
                                  priv, _may_split(mid - lo, depth + 1, iparams),
                                  _may_split(hi - mid, depth + 1, iparams))
            if mid - lo > hi - mid:
                sl, sr = _keep_pair(free, nfree, sl, sr)
            else:
                sr, sl = _keep_pair(free, nfree, sr, sl)
        else:
            _release(free, nfree, slot)
        stack, top = push_children(stack, top, lo, mid, hi, depth, node, sl, sr)
    return inode[:node_count].copy(), fnode[:node_count].copy(), value[:node_count].copy(), \
        node_count, max_depth


@njit
def _open_and_search(node, lo, hi, depth, slot, bufs, nbins, edges, crit, S, iparams, fparams,
                     inode, fnode, value, pool, free, nfree, priv, absolute, scratch):
    """Open a node (its table row) and search its split, given the histogram in ``slot`` (or
    -1: built here). Returns the slot still holding its histogram, -1 if none does (a leaf,
    or a small node whose histogram was cleared)."""
    stats, wn, imp, ok = _open(node, lo, hi, depth, bufs, crit, S, iparams, fparams, inode,
                               fnode, value, absolute)
    if not ok:
        _release(free, nfree, slot)
        return np.int64(-1)
    if slot < 0 and absolute is None:
        slot = _node_hist(bufs, depth & 1, lo, hi, pool, free, nfree, priv)
    _find_split(node, lo, hi, bufs, pool[max(slot, 0)], nbins, edges, stats, wn, imp, crit,
                iparams, fparams, inode, fnode, scratch, absolute)
    if slot == pool.shape[0] - 1:
        _clear(bufs, depth & 1, lo, hi, pool)
        slot = -1
    if inode[node, I_FEATURE] == TREE_UNDEFINED:
        _release(free, nfree, slot)
        return np.int64(-1)
    return slot


@njit
def build_hist_best_first(bufs, nbins, edges, crit, S, V, iparams, fparams, pool, free, nfree,
                          priv, absolute, scratch, counts):
    """Best-first growth up to ``max_leaf_nodes`` leaves; arguments as :func:`build_hist`."""
    inode, fnode, value = _new_table(V)
    max_depth = np.int64(0)
    max_splits = iparams[P_MAX_LEAF_NODES] - 1
    heap = np.empty(inode.shape[0], dtype=np.int64)
    root = np.int64(0)
    inode[root, I_SLOT] = _keep(free, nfree, _open_and_search(
        root, root, bufs[0].shape[0], root, np.int64(-1), bufs, nbins, edges, crit, S, iparams,
        fparams, inode, fnode, value, pool, free, nfree, priv, absolute, scratch))
    node_count = np.int64(1)
    key = fnode[:, F_IMPROVEMENT]
    hsize = heap_push(heap, root, key, root)
    while hsize > 0:
        key = fnode[:, F_IMPROVEMENT]
        node, hsize = heap_pop(heap, hsize, key)
        depth = inode[node, I_DEPTH]
        if depth > max_depth:
            max_depth = depth
        if inode[node, I_FEATURE] == TREE_UNDEFINED:
            continue
        slot = inode[node, I_SLOT]
        inode[node, I_SLOT] = -1
        if max_splits <= 0:
            inode[node, I_FEATURE] = TREE_UNDEFINED
            fnode[node, F_THRESHOLD] = TREE_UNDEFINED
            _release(free, nfree, slot)
            continue
        max_splits -= 1
        lo = inode[node, I_LO]
        hi = inode[node, I_HI]
        mid = _partition(bufs, depth & 1, lo, hi, inode[node, I_FEATURE], inode[node, I_BIN],
                         inode[node, I_NLEFT], counts)
        inode, fnode, value = _grow(inode, fnode, value, node_count + 2)
        if heap.shape[0] < node_count + 2:
            h2 = np.empty(2 * (node_count + 2), dtype=np.int64)
            for i in range(hsize):
                h2[i] = heap[i]
            heap = h2
        left = node_count
        right = node_count + 1
        node_count += 2
        inode[node, I_LEFT] = left
        inode[node, I_RIGHT] = right
        sl = np.int64(-1)
        sr = np.int64(-1)
        if absolute is None:
            sl, sr = _split_hists(bufs, (depth + 1) & 1, lo, mid, hi, slot, pool, free, nfree,
                                  priv, _may_split(mid - lo, depth + 1, iparams),
                                  _may_split(hi - mid, depth + 1, iparams))
        inode[left, I_SLOT] = _keep(free, nfree, _open_and_search(
            left, lo, mid, depth + 1, sl, bufs, nbins, edges, crit, S, iparams, fparams, inode,
            fnode, value, pool, free, nfree, priv, absolute, scratch))
        inode[right, I_SLOT] = _keep(free, nfree, _open_and_search(
            right, mid, hi, depth + 1, sr, bufs, nbins, edges, crit, S, iparams, fparams, inode,
            fnode, value, pool, free, nfree, priv, absolute, scratch))
        key = fnode[:, F_IMPROVEMENT]
        hsize = heap_push(heap, hsize, key, left)
        hsize = heap_push(heap, hsize, key, right)
    return inode[:node_count].copy(), fnode[:node_count].copy(), value[:node_count].copy(), \
        node_count, max_depth


def build_hist(bins, nbins, edges, missing_bin, ycls, yreg, w, crit, S, V, iparams, fparams,
               absolute):
    """Grow a tree from a bin matrix; return ``(inode, fnode, value, node_count, max_depth)``.

    Parameters
    ----------
    bins : ndarray of uint8, shape (n_samples, n_cols), C order
        The rows' bins (:meth:`treelearn.Binner.transform_padded`: ``n_cols`` is the number
        of features rounded up to a multiple of 8); used as the first row buffer and reordered
        in place (pass a copy you own).
    nbins : ndarray of int64
        Number of value bins of each feature.
    edges : ndarray of float32, shape (n_features, 256)
        Bin edges (the real thresholds), padded with +inf.
    missing_bin : int
        The bin of missing values (the histograms have ``missing_bin + 1`` bins).
    ycls, yreg, w : ndarray
        Class codes (int32, empty for regression), targets (float64, empty for classification)
        and positive sample weights.
    crit, S, V, iparams, fparams, absolute
        As for :func:`treelearn._builder.build`.
    """
    n = bins.shape[0]
    p = nbins.shape[0]
    if bins.shape[1] % 8 or bins.shape[1] < p or not bins.flags.c_contiguous:
        raise ValueError("bins must be C-contiguous with a multiple of 8 columns")
    is_reg = crit >= SQUARED_ERROR
    weighted = not bool(np.all(w == 1.0))
    B1 = np.empty_like(bins)
    C0 = None if is_reg else np.ascontiguousarray(ycls, dtype=np.int32).copy()
    R0 = np.ascontiguousarray(yreg, dtype=np.float64).copy() if is_reg else None
    W0 = np.ascontiguousarray(w, dtype=np.float64).copy() \
        if weighted or absolute is not None else None
    bufs = (bins, B1, C0, None if C0 is None else np.empty_like(C0), R0,
            None if R0 is None else np.empty_like(R0), W0,
            None if W0 is None else np.empty_like(W0), bins.view(np.uint64),
            B1.view(np.uint64))
    NB = int(missing_bin) + 1
    H = (2 if is_reg else S) + (1 if weighted else 0)
    slot_bytes = p * NB * H * 8
    max_leaf_nodes = int(iparams[P_MAX_LEAF_NODES])
    if max_leaf_nodes > 0:
        wanted = max_leaf_nodes + 2
    else:
        wanted = min(int(iparams[P_MAX_DEPTH]), 10**6) + 3
    n_slots = max(4, min(wanted, HIST_POOL_BYTES // slot_bytes))
    if absolute is not None:
        n_slots = 1
    pool = np.empty((n_slots + 1, p, NB, H))
    pool[n_slots] = 0.0  # the clean slot of small nodes (see _node_hist)
    free = np.arange(n_slots)[::-1].copy()
    nfree = np.array([n_slots], dtype=np.int64)
    T = numba.config.NUMBA_NUM_THREADS
    large = T >= 2 and n * p >= 4 * PARALLEL_MIN_WORK
    priv = np.empty((T, p, NB, H)) if large and absolute is None else None
    counts = np.empty(T, dtype=np.int64) if large else None
    scratch = (
        np.arange(p),
        np.array([int(iparams[P_SEED])], dtype=np.int64),
        np.empty(p, dtype=np.int64),
        np.empty(p),
        np.empty(p, dtype=np.int64),
        np.empty(p, dtype=np.int64),
        np.empty(p),
        np.empty((p, S)),
        np.empty(p),
        np.empty(p),
    )
    grower = build_hist_depth_first if max_leaf_nodes <= 0 else build_hist_best_first
    return grower(bufs, nbins, edges, crit, S, V, iparams, fparams, pool, free, nfree, priv,
                  absolute, scratch, counts)
