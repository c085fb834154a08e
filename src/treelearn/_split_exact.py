"""Exact split search over sorted feature values (numeric features).

Dense data is presorted once per feature (:func:`treelearn._features.presort`). Every open node
owns one range ``[lo, hi)`` of the presorted arrays, and inside that range each feature's segment
holds exactly the node's samples in increasing order of that feature, with their class codes or
targets (and weights) alongside. Splitting a node stably partitions every feature's segment
(:func:`partition_dense`), so children inherit sorted orders and nothing is ever sorted again.
Finding a node's best split is then one sequential scan per feature; large nodes scan and
partition their features on all threads (:func:`eval_dense_parallel`,
:func:`partition_dense_parallel`).

Sparse data (CSR) is not densified. For a node, the non-zero entries of its rows are bucketed per
feature and each bucket is sorted (:func:`bucket_sparse`); the implicit zeros of a feature enter
the scan as one block whose statistics are the node's minus the non-zeros'. A node's samples live
in a ``samples`` range that is stably partitioned by threshold.

Scan rules (identical to scikit-learn's ``BestSplitter``): a cut is tried between consecutive
sorted values ``a < b`` with ``b > a + 1e-7`` (float32), only where both children keep at least
``min_samples_leaf`` samples and ``min_weight_leaf`` weight; the threshold is the float64 midpoint
``a/2 + b/2`` (or ``a`` if rounding makes it equal to ``b``); ``x <= threshold`` goes left. Among
equal scores the first one found wins: features in the order they are examined (increasing index
unless ``max_features`` draws a random order), then smaller thresholds.
"""

from __future__ import annotations

import math

import numpy as np

from ._config import FEATURE_THRESHOLD, get_thread_id, njit, pjit, prange
from ._criteria import (
    ABSOLUTE_ERROR,
    ENTROPY,
    GINI,
    LN2,
    MISCLASSIFICATION,
    SQUARED_ERROR,
    split_proxy,
)

# ------------------------------------------------------------------------------------------------
# Node statistics


@njit
def add_sample(stats: np.ndarray, s: int, ycls: np.ndarray, yreg: np.ndarray, w: np.ndarray,
               crit: int, sign: float) -> None:
    """Add (sign=+1) or remove (sign=-1) sample ``s`` to the statistics vector ``stats``."""
    ws = w[s] * sign
    if crit >= SQUARED_ERROR:
        y = yreg[s]
        stats[0] += ws * y
        stats[1] += ws * y * y
    else:
        stats[ycls[s]] += ws


@njit
def weighted_median(ys: np.ndarray, ws: np.ndarray) -> float:
    """Weighted median, scikit-learn's convention: the mean of the two middle values on a tie."""
    order = np.argsort(ys, kind="mergesort")
    total = 0.0
    for i in range(ys.shape[0]):
        total += ws[i]
    half = total / 2.0
    cum = 0.0
    for k in range(ys.shape[0]):
        cum += ws[order[k]]
        if cum >= half:
            if cum == half and k + 1 < ys.shape[0]:
                return (ys[order[k]] + ys[order[k + 1]]) / 2.0
            return ys[order[k]]
    return ys[order[ys.shape[0] - 1]]


@njit
def _heap_push(hv: np.ndarray, hw: np.ndarray, size: int, v: float, wt: float) -> int:
    """Push onto a max-heap held in (hv, hw); return the new size."""
    i = size
    hv[i] = v
    hw[i] = wt
    while i > 0:
        p = (i - 1) // 2
        if hv[p] >= hv[i]:
            break
        hv[p], hv[i] = hv[i], hv[p]
        hw[p], hw[i] = hw[i], hw[p]
        i = p
    return size + 1


@njit
def _heap_pop(hv: np.ndarray, hw: np.ndarray, size: int) -> tuple[float, float, int]:
    """Pop the maximum of a max-heap; return (value, weight, new size)."""
    v = hv[0]
    wt = hw[0]
    size -= 1
    hv[0] = hv[size]
    hw[0] = hw[size]
    i = 0
    while True:
        lft = 2 * i + 1
        if lft >= size:
            break
        c = lft
        if lft + 1 < size and hv[lft + 1] > hv[lft]:
            c = lft + 1
        if hv[c] <= hv[i]:
            break
        hv[c], hv[i] = hv[i], hv[c]
        hw[c], hw[i] = hw[i], hw[c]
        i = c
    return v, wt, size


@njit
def prefix_abs_cost(ys: np.ndarray, ws: np.ndarray, out: np.ndarray) -> None:
    """``out[i]`` = min over m of ``sum_{j<i} w_j |y_j - m|`` for i = 0..n, in O(n log n).

    Two heaps hold the lower and upper halves by weight; the top of the lower one is a weighted
    median of the prefix, and the absolute deviation follows from the heaps' weight and sums.
    """
    n = ys.shape[0]
    lv = np.empty(n)
    lw = np.empty(n)
    uv = np.empty(n)  # upper half stored negated, so it is also a max-heap
    uw = np.empty(n)
    nl = 0
    nu = 0
    wl = 0.0
    sl = 0.0
    wu = 0.0
    su = 0.0
    total = 0.0
    out[0] = 0.0
    for i in range(n):
        y = ys[i]
        wt = ws[i]
        total += wt
        if nl == 0 or y <= lv[0]:
            nl = _heap_push(lv, lw, nl, y, wt)
            wl += wt
            sl += wt * y
        else:
            nu = _heap_push(uv, uw, nu, -y, wt)
            wu += wt
            su += wt * y
        half = total / 2.0
        while wl < half and nu > 0:
            v, vw, nu = _heap_pop(uv, uw, nu)
            wu -= vw
            su -= vw * (-v)
            nl = _heap_push(lv, lw, nl, -v, vw)
            wl += vw
            sl += vw * (-v)
        while nl > 1 and wl - lw[0] >= half:
            v, vw, nl = _heap_pop(lv, lw, nl)
            wl -= vw
            sl -= vw * v
            nu = _heap_push(uv, uw, nu, -v, vw)
            wu += vw
            su += vw * v
        m = lv[0]
        c = m * wl - sl + su - m * wu
        out[i + 1] = c if c > 0.0 else 0.0


# ------------------------------------------------------------------------------------------------
# Scanning one feature


@njit
def scan_feature(V, C, R, W, f, lo, hi, zpos, zn, zstats, zw, node_stats, wn, nn, crit, pimp,
                 min_leaf, min_wleaf, rand_thr, left, right, best_left, cost_l, cost_r):
    """Best cut of feature row ``f`` whose node samples sit at ``[lo, hi)`` in increasing value.

    ``V[f, i]`` is the value at position ``i`` and, at the same position, ``C[f, i]`` the class
    code, ``R[f, i]`` the regression target and ``W[f, i]`` the weight. The targets travel with
    the sorted order so that the scan reads memory sequentially (looking them up by sample id
    costs ~100 ns a step on a million rows). ``C`` or ``R`` may be None (then the other is
    used; with both given, ``crit`` chooses) and ``W`` is None for unit weights: Numba prunes
    the absent arrays' code at compile time.

    A block of ``zn`` implicit zeros (sparse data) with statistics ``zstats`` and weight ``zw``
    is scanned just before position ``zpos``. With ``rand_thr`` not NaN only the cut containing
    that threshold is scored (the random splitter). For ``absolute_error``, ``cost_l[i]`` and
    ``cost_r[i]`` must hold the costs of the first ``i`` samples and of the others.

    Returns ``(score, threshold, n_left, w_left)``; ``best_left`` receives the left statistics.
    Score is -inf when no valid cut exists.
    """
    S = left.shape[0]
    is_reg = crit >= SQUARED_ERROR
    random = not np.isnan(rand_thr)
    for k in range(S):
        left[k] = 0.0
    wl = 0.0
    nl = 0
    best = -np.inf
    best_thr = np.nan
    best_nl = -1
    best_wl = 0.0
    have_prev = False
    prev = np.float32(0.0)
    zero_done = zn == 0
    i = lo
    while True:
        is_zero = (not zero_done) and i == zpos
        if i >= hi and not is_zero:
            break
        v = np.float32(0.0) if is_zero else V[f, i]
        if (have_prev and v > prev + FEATURE_THRESHOLD
                and (not random or (prev <= rand_thr and rand_thr < v))
                and nl >= min_leaf and nn - nl >= min_leaf):
            wr = wn - wl
            if wl >= min_wleaf and wr >= min_wleaf and wl > 0.0 and wr > 0.0:
                # The common criteria are written out here rather than calling
                # _criteria.split_proxy: a call with array arguments in this loop costs ~100 ns
                # per cut in reference counting (measured), five times the arithmetic. The
                # expressions are split_proxy's, term for term (tests compare both).
                if crit == SQUARED_ERROR:
                    r0 = node_stats[0] - left[0]
                    sc = left[0] * left[0] / wl + r0 * r0 / wr
                elif crit == GINI:
                    sql = 0.0
                    sqr = 0.0
                    for k in range(S):
                        r = node_stats[k] - left[k]
                        sql += left[k] * left[k]
                        sqr += r * r
                    sc = -wr * (1.0 - sqr / (wr * wr)) - wl * (1.0 - sql / (wl * wl))
                elif crit == ENTROPY:
                    hl = 0.0
                    hr = 0.0
                    for k in range(S):
                        c = left[k]
                        if c > 0.0:
                            p = c / wl
                            hl -= p * (math.log(p) / LN2)
                        c = node_stats[k] - left[k]
                        if c > 0.0:
                            p = c / wr
                            hr -= p * (math.log(p) / LN2)
                    sc = -wr * hr - wl * hl
                elif crit == MISCLASSIFICATION:
                    ml = 0.0
                    mr = 0.0
                    for k in range(S):
                        ml = max(ml, left[k])
                        mr = max(mr, node_stats[k] - left[k])
                    sc = (ml - wl) + (mr - wr)
                elif crit == ABSOLUTE_ERROR:
                    sc = -(cost_l[nl] + cost_r[nl])
                else:
                    for k in range(S):
                        right[k] = node_stats[k] - left[k]
                    sc = split_proxy(left, right, wl, wr, crit, pimp)
                if sc > best:
                    best = sc
                    if random:
                        best_thr = rand_thr
                    else:
                        # float64 midpoint of float32 neighbours, scikit-learn's rounding rule
                        best_thr = np.float64(prev) / 2.0 + np.float64(v) / 2.0
                        if best_thr == np.float64(v) or np.isinf(best_thr):
                            best_thr = np.float64(prev)
                    best_nl = nl
                    best_wl = wl
                    for k in range(S):
                        best_left[k] = left[k]
        if is_zero:
            for k in range(S):
                left[k] += zstats[k]
            wl += zw
            nl += zn
            zero_done = True
        else:
            ws = 1.0
            if W is not None:
                ws = W[f, i]
            # add_sample, written out (see above)
            if C is not None:
                if R is not None:
                    if is_reg:
                        y = R[f, i]
                        left[0] += ws * y
                        left[1] += ws * y * y
                    else:
                        left[C[f, i]] += ws
                else:
                    left[C[f, i]] += ws
            else:
                if R is not None:
                    y = R[f, i]
                    left[0] += ws * y
                    left[1] += ws * y * y
            wl += ws
            nl += 1
            i += 1
        prev = v
        have_prev = True
    return best, best_thr, best_nl, best_wl


@njit
def fill_abs_costs(samps, lo, hi, tgt, cost_l, cost_r):
    """Fill prefix/suffix absolute-error costs for the samples ``samps[lo:hi]`` in that order."""
    _, yreg, w = tgt
    n = hi - lo
    ys = np.empty(n)
    ws = np.empty(n)
    for i in range(n):
        ys[i] = yreg[samps[lo + i]]
        ws[i] = w[samps[lo + i]]
    prefix_abs_cost(ys, ws, cost_l)
    tmp = np.empty(n + 1)
    prefix_abs_cost(ys[::-1].copy(), ws[::-1].copy(), tmp)
    for i in range(n + 1):
        cost_r[i] = tmp[n - i]


# ------------------------------------------------------------------------------------------------
# Dense nodes


@njit
def eval_dense(feats, m, dense, lo, hi, tgt, node_stats, wn, crit, pimp, min_leaf,
               min_wleaf, rand_thrs, res_score, res_thr, res_nl, res_wl, res_left, absolute):
    """Score the first ``m`` features of ``feats``; results go to per-feature slots ``res_*``.

    ``dense = (sval, sidx, C, R, W)``: presorted values and sample ids with the targets in the
    same order (see :func:`scan_feature`). ``absolute`` is None except for the absolute-error
    criterion, whose code is pruned at compile time otherwise (it is the costliest part of the
    kernels to compile).
    """
    sval, sidx, C, R, W = dense
    S = node_stats.shape[0]
    left = np.empty(S)
    right = np.empty(S)
    na = hi - lo + 1 if absolute is not None else 1
    cost_l = np.empty(na)
    cost_r = np.empty(na)
    no_pos = np.int64(-1)  # typed, not a literal: literals would compile specialisations
    for j in range(m):
        f = feats[j]
        if absolute is not None:
            fill_abs_costs(sidx[f], lo, hi, tgt, cost_l, cost_r)
        sc, thr, nl, wl = scan_feature(sval, C, R, W, f, lo, hi, no_pos, no_pos, node_stats,
                                       0.0, node_stats, wn, hi - lo, crit, pimp, min_leaf,
                                       min_wleaf, rand_thrs[j], left, right, res_left[j],
                                       cost_l, cost_r)
        res_score[j] = sc
        res_thr[j] = thr
        res_nl[j] = nl
        res_wl[j] = wl


@pjit
def eval_dense_parallel(feats, m, dense, lo, hi, node_stats, wn, crit, pimp, min_leaf,
                        min_wleaf, rand_thrs, res_score, res_thr, res_nl, res_wl, res_left):
    """:func:`eval_dense` with one feature per task, for large nodes (not absolute error).

    Each task writes only its own result slot, so the merge that follows is serial and exact.
    """
    sval, sidx, C, R, W = dense
    S = node_stats.shape[0]
    no_pos = np.int64(-1)
    for j in prange(m):
        left = np.empty(S)
        right = np.empty(S)
        sc, thr, nl, wl = scan_feature(sval, C, R, W, feats[j], lo, hi, no_pos, no_pos,
                                       node_stats, 0.0, node_stats, wn, hi - lo, crit, pimp,
                                       min_leaf, min_wleaf, rand_thrs[j], left, right,
                                       res_left[j], left, right)
        res_score[j] = sc
        res_thr[j] = thr
        res_nl[j] = nl
        res_wl[j] = wl


@njit
def _partition_feature(sval, sidx, C, R, W, f, lo, hi, goes_left, tv, ts, tc, tr, tw):
    """Stable partition of feature row ``f`` on ``[lo, hi)``; ``t*`` are buffers of hi - lo.

    Branch-free: every entry is written both to the left cursor (in place, which never passes
    the read position) and to the right buffer, and only the matching cursor advances; the
    side of a sample is unpredictable, and a mispredicted branch costs more than the writes.
    """
    a = lo
    b = 0
    for i in range(lo, hi):
        s = sidx[f, i]
        g = np.int64(goes_left[s])
        v = sval[f, i]
        sidx[f, a] = s
        sval[f, a] = v
        ts[b] = s
        tv[b] = v
        if C is not None:
            c = C[f, i]
            C[f, a] = c
            tc[b] = c
        if R is not None:
            r = R[f, i]
            R[f, a] = r
            tr[b] = r
        if W is not None:
            x = W[f, i]
            W[f, a] = x
            tw[b] = x
        a += g
        b += 1 - g
    for i in range(b):
        sidx[f, a + i] = ts[i]
        sval[f, a + i] = tv[i]
        if C is not None:
            C[f, a + i] = tc[i]
        if R is not None:
            R[f, a + i] = tr[i]
        if W is not None:
            W[f, a + i] = tw[i]


@njit
def partition_dense(sval, sidx, C, R, W, lo, hi, goes_left):
    """Stably partition every feature's segment ``[lo, hi)`` by ``goes_left[sample]``.

    Values, sample ids and the travelling targets ``C``, ``R``, ``W`` (each may be None: passed
    as separate arguments so that Numba prunes the absent ones) move together; the left part is
    compacted in place, the right part goes through a buffer.
    """
    n = hi - lo
    tv = np.empty(n, dtype=np.float32)
    ts = np.empty(n, dtype=np.int32)
    tc = np.empty(n if C is not None else 0, dtype=np.int32)
    tr = np.empty(n if R is not None else 0)
    tw = np.empty(n if W is not None else 0)
    for f in range(sval.shape[0]):
        _partition_feature(sval, sidx, C, R, W, f, lo, hi, goes_left, tv, ts, tc, tr, tw)


@pjit
def partition_dense_parallel(sval, sidx, C, R, W, lo, hi, goes_left, bv, bs, bc, br, bw):
    """:func:`partition_dense` with one feature per task; ``b*[t]`` are the buffers of thread
    ``t`` (value, id, class, target, weight; the last three of width 0 when unused)."""
    for f in prange(sval.shape[0]):
        t = get_thread_id()
        _partition_feature(sval, sidx, C, R, W, f, lo, hi, goes_left, bv[t], bs[t], bc[t],
                           br[t], bw[t])


# ------------------------------------------------------------------------------------------------
# Sparse nodes


@njit
def bucket_sparse(indptr, indices, data, samples, lo, hi, n_features):
    """Group the non-zeros of rows ``samples[lo:hi]`` by feature, each group sorted by value.

    Returns ``(offsets, bvals, bsamps)``: the entries of feature ``f`` are
    ``bvals[offsets[f]:offsets[f+1]]`` (increasing, ties in row order) with their rows ``bsamps``.
    """
    offsets = np.zeros(n_features + 1, dtype=np.int64)
    for i in range(lo, hi):
        s = samples[i]
        for p in range(indptr[s], indptr[s + 1]):
            offsets[indices[p] + 1] += 1
    for f in range(n_features):
        offsets[f + 1] += offsets[f]
    nnz = offsets[n_features]
    bvals = np.empty(nnz, dtype=np.float32)
    bsamps = np.empty(nnz, dtype=np.int32)
    fill = offsets[:-1].copy()
    for i in range(lo, hi):
        s = samples[i]
        for p in range(indptr[s], indptr[s + 1]):
            f = indices[p]
            bvals[fill[f]] = data[p]
            bsamps[fill[f]] = s
            fill[f] += 1
    for f in range(n_features):
        a = offsets[f]
        b = offsets[f + 1]
        if b - a > 1:
            order = np.argsort(bvals[a:b], kind="mergesort")
            v = bvals[a:b].copy()
            t = bsamps[a:b].copy()
            for i in range(b - a):
                bvals[a + i] = v[order[i]]
                bsamps[a + i] = t[order[i]]
    return offsets, bvals, bsamps


@njit
def sparse_feature_range(offsets, bvals, f, nn):
    """Return ``(min, max)`` of feature ``f`` over a node of ``nn`` samples (zeros included)."""
    a = offsets[f]
    b = offsets[f + 1]
    zero = np.float32(0.0)
    if b == a:
        return zero, zero
    mn = bvals[a]
    mx = bvals[b - 1]
    if b - a < nn:
        if zero < mn:
            mn = zero
        if zero > mx:
            mx = zero
    return mn, mx


@njit
def eval_sparse(feats, m, offsets, bvals, bsamps, samples, lo, hi, tgt, node_stats, wn, crit,
                pimp, min_leaf, min_wleaf, rand_thrs, res_score, res_thr, res_nl, res_wl,
                res_left, mark, absolute):
    """Score the first ``m`` features of ``feats`` of a sparse node (see :func:`bucket_sparse`).

    ``absolute`` as in :func:`eval_dense`.
    """
    ycls, yreg, w = tgt
    S = node_stats.shape[0]
    left = np.empty(S)
    right = np.empty(S)
    zstats = np.empty(S)
    nn = hi - lo
    zero = np.int64(0)  # typed, not literals: literals would compile specialisations
    no_pos = np.int64(-1)
    # The non-zeros' targets and weights in bucket order, for sequential reads in the scan.
    nnz = bvals.shape[0]
    is_reg = crit >= SQUARED_ERROR
    bC = np.zeros((1, nnz if not is_reg else 0), dtype=np.int32)
    bR = np.zeros((1, nnz if is_reg else 0))
    bW = np.empty((1, nnz))
    for p in range(nnz):
        s = bsamps[p]
        bW[0, p] = w[s]
        if is_reg:
            bR[0, p] = yreg[s]
        else:
            bC[0, p] = ycls[s]
    V = bvals.reshape(1, nnz)
    for j in range(m):
        f = feats[j]
        a = offsets[f]
        b = offsets[f + 1]
        zpos = a
        while zpos < b and bvals[zpos] <= 0.0:
            zpos += 1
        if absolute is not None:
            # Absolute error needs every sample in order: materialise negatives, zeros, positives.
            vals = np.empty(nn, dtype=np.float32)
            samps = np.empty(nn, dtype=np.int32)
            for p in range(a, b):
                mark[bsamps[p]] = True
            c = 0
            for p in range(a, zpos):
                vals[c] = bvals[p]
                samps[c] = bsamps[p]
                c += 1
            for i in range(lo, hi):
                s = samples[i]
                if not mark[s]:
                    vals[c] = 0.0
                    samps[c] = s
                    c += 1
            for p in range(zpos, b):
                vals[c] = bvals[p]
                samps[c] = bsamps[p]
                c += 1
            for p in range(a, b):
                mark[bsamps[p]] = False
            cost_l = np.empty(nn + 1)
            cost_r = np.empty(nn + 1)
            fill_abs_costs(samps, zero, nn, tgt, cost_l, cost_r)
            rr = np.empty((1, nn))
            ww = np.empty((1, nn))
            for c in range(nn):
                rr[0, c] = yreg[samps[c]]
                ww[0, c] = w[samps[c]]
            sc, thr, nl, wl = scan_feature(vals.reshape(1, nn), None, rr, ww, zero, zero, nn,
                                           no_pos, no_pos, node_stats, 0.0, node_stats, wn, nn,
                                           crit, pimp, min_leaf, min_wleaf, rand_thrs[j], left,
                                           right, res_left[j], cost_l, cost_r)
        else:
            for k in range(S):
                zstats[k] = node_stats[k]
            zw = wn
            for p in range(a, b):
                s = bsamps[p]
                add_sample(zstats, s, ycls, yreg, w, crit, -1.0)
                zw -= w[s]
            sc, thr, nl, wl = scan_feature(V, bC, bR, bW, zero, a, b, zpos, nn - (b - a),
                                           zstats, zw, node_stats, wn, nn, crit, pimp, min_leaf,
                                           min_wleaf, rand_thrs[j], left, right, res_left[j],
                                           zstats, zstats)
        res_score[j] = sc
        res_thr[j] = thr
        res_nl[j] = nl
        res_wl[j] = wl


@njit
def sparse_value(indptr, indices, data, s, f):
    """``X[s, f]`` of a CSR matrix with sorted column indices (binary search)."""
    a = indptr[s]
    b = indptr[s + 1]
    while a < b:
        mid = (a + b) // 2
        c = indices[mid]
        if c == f:
            return data[mid]
        if c < f:
            a = mid + 1
        else:
            b = mid
    return np.float32(0.0)


@njit
def partition_samples(samples, lo, hi, goes_left):
    """Stable in-place partition of ``samples[lo:hi]``; returns the number going left."""
    tmp = np.empty(hi - lo, dtype=np.int32)
    a = lo
    b = 0
    for i in range(lo, hi):
        s = samples[i]
        if goes_left[s]:
            samples[a] = s
            a += 1
        else:
            tmp[b] = s
            b += 1
    for i in range(b):
        samples[a + i] = tmp[i]
    return a - lo


@njit
def abs_impurity(samps, lo, hi, tgt, wn):
    """Absolute-error impurity (mean absolute deviation from the weighted median) of
    the node holding ``samps[lo:hi]`` with total weight ``wn``."""
    _, yreg, w = tgt
    n = hi - lo
    ys = np.empty(n)
    ws = np.empty(n)
    for i in range(n):
        ys[i] = yreg[samps[lo + i]]
        ws[i] = w[samps[lo + i]]
    cost = np.empty(n + 1)
    prefix_abs_cost(ys, ws, cost)
    return cost[n] / wn
