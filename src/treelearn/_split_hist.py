"""Histogram split search: histograms of binned rows, sibling subtraction, best-bin scans.

The histogram splitter works on the uint8 bin matrix of :mod:`treelearn._binning`, whose rows
are kept *physically grouped by node*: every open node owns a contiguous range ``[lo, hi)`` of
rows, and splitting a node copies its rows, stably, into the same range of a second buffer
(left child first). A node at depth ``d`` lives in buffer ``d % 2``; the range it is copied into
held only its (already split) ancestors' rows, so two buffers suffice and nothing is copied back.
Class codes or targets and weights travel with the rows. Building a histogram therefore reads
memory sequentially, whatever the depth.

A histogram has shape ``(n_features, n_bins, H)``. Its columns:

* classification: the weight of each class (``K`` columns);
* regression: the weight and the weighted sum of targets (2 columns);
* with sample weights, one more column counting rows (for ``min_samples_leaf``); with unit
  weights the count is the weight.

A split "bin <= b" of feature ``f`` is scored from the running sums over bins ``0..b`` and the
node's totals (computed from its rows), with the same formulas as the exact splitter (hot
criteria written out, the others through :func:`treelearn._criteria.split_proxy`). The last bin
is the missing-value bin; it sits on the right of every cut.
"""

from __future__ import annotations

import math

import numpy as np

from ._config import njit, pjit, prange
from ._criteria import ENTROPY, GINI, LN2, MISCLASSIFICATION, SQUARED_ERROR, split_proxy
from ._split_exact import fill_abs_costs

# ------------------------------------------------------------------------------------------------
# Node statistics and histograms


@njit
def row_stats(B, C, R, W, lo, hi, f, tb, stats):
    """Add the rows ``[lo, hi)`` to ``stats`` (class weights, or ``[sum wy, sum wy^2]``) and
    return their weight; with ``f >= 0`` only the rows with ``bin <= tb`` on feature ``f`` (a
    split's left side)."""
    wn = 0.0
    for i in range(lo, hi):
        if f >= 0 and B[i, f] > tb:
            continue
        ws = 1.0
        if W is not None:
            ws = W[i]
        if C is not None:
            stats[C[i]] += ws
        if R is not None:
            y = R[i]
            stats[0] += ws * y
            stats[1] += ws * y * y
        wn += ws
    return wn


@njit
def hist_rows(B, C, R, W, lo, hi, hist):
    """Add the rows ``[lo, hi)`` of the bin matrix ``B`` to ``hist`` (see the module doc).
    ``B`` may have padding columns after the histogram's features."""
    p = hist.shape[0]
    cnt = hist.shape[2] - 1
    for i in range(lo, hi):
        if W is None:
            if C is not None:
                k = C[i]
                for f in range(p):
                    hist[f, B[i, f], k] += 1.0
            if R is not None:
                y = R[i]
                for f in range(p):
                    b = B[i, f]
                    hist[f, b, 0] += 1.0
                    hist[f, b, 1] += y
        else:
            ws = W[i]
            if C is not None:
                k = C[i]
                for f in range(p):
                    b = B[i, f]
                    hist[f, b, k] += ws
                    hist[f, b, cnt] += 1.0
            if R is not None:
                wy = ws * R[i]
                for f in range(p):
                    b = B[i, f]
                    hist[f, b, 0] += ws
                    hist[f, b, 1] += wy
                    hist[f, b, cnt] += 1.0


@njit
def zero(hist):
    """``hist[...] = 0``, written as loops: NumPy-style array expressions in kernels pull in
    shape-error formatting that costs seconds of compilation."""
    p, nb, H = hist.shape
    for f in range(p):
        for b in range(nb):
            for c in range(H):
                hist[f, b, c] = 0.0


@njit
def clear_rows(B, lo, hi, hist):
    """Zero the cells of ``hist`` that rows ``[lo, hi)`` touch (undoing :func:`hist_rows` on a
    histogram that was zero: a small node's cost stays proportional to its rows)."""
    p, _, H = hist.shape
    for i in range(lo, hi):
        for f in range(p):
            b = B[i, f]
            for c in range(H):
                hist[f, b, c] = 0.0


@njit
def hist_node(B, C, R, W, lo, hi, hist):
    """``hist`` = the histogram of rows ``[lo, hi)``, on one thread."""
    zero(hist)
    hist_rows(B, C, R, W, lo, hi, hist)


@pjit
def hist_node_parallel(B, C, R, W, lo, hi, hist, priv):
    """``hist`` = the histogram of rows ``[lo, hi)``: each thread fills a private histogram
    (``priv[t]``) from its share of the rows; they are then summed."""
    T = priv.shape[0]
    chunk = (hi - lo + T - 1) // T
    for t in prange(T):
        h = priv[t]
        zero(h)
        a = lo + t * chunk
        b = min(hi, a + chunk)
        if a < b:
            hist_rows(B, C, R, W, a, b, h)
    # Summing the private histograms is ~30k additions: serially, it costs less than a second
    # parallel region (and its compilation).
    p, nb, H = hist.shape
    for f in range(p):
        for b in range(nb):
            for c in range(H):
                s = 0.0
                for t in range(T):
                    s += priv[t, f, b, c]
                hist[f, b, c] = s


@njit
def subtract(parent, child):
    """``parent -= child``: the sibling's histogram, without reading its rows."""
    p, nb, H = parent.shape
    for f in range(p):
        for b in range(nb):
            for c in range(H):
                parent[f, b, c] -= child[f, b, c]


# ------------------------------------------------------------------------------------------------
# Scanning


@njit
def _scan_two(hist, f, nb, s0, s1, wn, nn, crit, min_leaf, min_wleaf, weighted, order,
              n_order):
    """:func:`scan_hist` for two statistics (two classes; or regression) and the criteria gini,
    entropy and squared error, with the running sums in scalars. Arrays would be re-read from
    memory at every bin (the compiler cannot rule out that they overlap); this runs ~3x faster.

    Gini is scored as ``sum_k l_k^2 / w_l + sum_k r_k^2 / w_r``, scikit-learn's proxy plus the
    node's constant weight (one division fewer per bin, same order of cuts).
    """
    H = hist.shape[2]
    is_reg = crit == SQUARED_ERROR
    l0 = 0.0
    l1 = 0.0
    wl = 0.0
    nl = 0.0
    best = -np.inf
    best_b = -1
    best_nl = 0
    best_wl = 0.0
    best_l0 = 0.0
    best_l1 = 0.0
    for j in range(nb - 1 if n_order < 0 else n_order):
        b = j if n_order < 0 else order[j]
        if b >= nb - 1:
            break
        h0 = hist[f, b, 0]
        h1 = hist[f, b, 1]
        if is_reg:
            wb = h0
            l0 += h1
        else:
            wb = h0 + h1
            l0 += h0
            l1 += h1
        cb = hist[f, b, H - 1] if weighted else wb
        if cb == 0.0:
            continue
        wl += wb
        nl += cb
        if nl < min_leaf:
            continue
        nr = nn - nl
        if nr < min_leaf or nr <= 0.0:
            break
        wr = wn - wl
        if wl < min_wleaf or wr < min_wleaf or wl <= 0.0 or wr <= 0.0:
            continue
        if is_reg:
            r0 = s0 - l0
            sc = l0 * l0 / wl + r0 * r0 / wr
        elif crit == GINI:
            r0 = s0 - l0
            r1 = s1 - l1
            sc = (l0 * l0 + l1 * l1) / wl + (r0 * r0 + r1 * r1) / wr
        else:
            hl = 0.0
            hr = 0.0
            if l0 > 0.0:
                hl -= l0 * math.log(l0 / wl)
            if l1 > 0.0:
                hl -= l1 * math.log(l1 / wl)
            r0 = s0 - l0
            r1 = s1 - l1
            if r0 > 0.0:
                hr -= r0 * math.log(r0 / wr)
            if r1 > 0.0:
                hr -= r1 * math.log(r1 / wr)
            sc = -(hl + hr) / LN2
        if sc > best:
            best = sc
            best_b = b
            best_nl = int(nl)
            best_wl = wl
            best_l0 = l0
            best_l1 = l1
    return best, best_b, best_nl, best_wl, best_l0, best_l1


@njit
def scan_hist(hist, f, nb, stats, wn, nn, crit, pimp, min_leaf, min_wleaf, weighted, left,
              right, best_left, order, n_order):
    """Best cut "bin <= b" of feature ``f`` (value bins ``0..nb-1``) of a node with statistics
    ``stats``, weight ``wn`` and ``nn`` rows.

    With ``n_order >= 0`` only the bins ``order[:n_order]`` (increasing: the node's non-empty
    bins, see :func:`node_bins`) are visited; the result is the same, and a node of a few rows
    is scanned in a few steps instead of one per bin.

    Returns ``(score, b, n_left, w_left)``; for classification ``best_left`` receives the left
    class weights. Score is -inf when no valid cut exists. Empty bins are skipped (the cut after
    one equals the cut before it); among equal scores the smallest bin wins.
    """
    S = stats.shape[0]
    if S == 2 and (crit == GINI or crit == ENTROPY or crit == SQUARED_ERROR):
        best, best_b, best_nl, best_wl, l0, l1 = _scan_two(
            hist, f, nb, stats[0], stats[1], wn, nn, crit, min_leaf, min_wleaf, weighted, order,
            n_order)
        best_left[0] = l0
        best_left[1] = l1
        return best, best_b, best_nl, best_wl
    H = hist.shape[2]
    is_reg = crit >= SQUARED_ERROR
    for k in range(S):
        left[k] = 0.0
    wl = 0.0
    nl = 0.0
    best = -np.inf
    best_b = -1
    best_nl = 0
    best_wl = 0.0
    for j in range(nb - 1 if n_order < 0 else n_order):
        b = j if n_order < 0 else order[j]
        if b >= nb - 1:
            break
        if is_reg:
            wb = hist[f, b, 0]
            cb = hist[f, b, H - 1] if weighted else wb
            if cb == 0.0:
                continue
            left[0] += hist[f, b, 1]
        else:
            wb = 0.0
            for k in range(S):
                v = hist[f, b, k]
                left[k] += v
                wb += v
            cb = hist[f, b, H - 1] if weighted else wb
            if cb == 0.0:
                continue
        wl += wb
        nl += cb
        if nl < min_leaf:
            continue
        nr = nn - nl
        if nr < min_leaf or nr <= 0.0:
            break
        wr = wn - wl
        if wl < min_wleaf or wr < min_wleaf or wl <= 0.0 or wr <= 0.0:
            continue
        # The hot criteria are written out (see _split_exact.scan_feature for why).
        if crit == SQUARED_ERROR:
            r0 = stats[0] - left[0]
            sc = left[0] * left[0] / wl + r0 * r0 / wr
        elif crit == GINI:
            sql = 0.0
            sqr = 0.0
            for k in range(S):
                r = stats[k] - left[k]
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
                c = stats[k] - left[k]
                if c > 0.0:
                    p = c / wr
                    hr -= p * (math.log(p) / LN2)
            sc = -wr * hr - wl * hl
        elif crit == MISCLASSIFICATION:
            ml = 0.0
            mr = 0.0
            for k in range(S):
                ml = max(ml, left[k])
                mr = max(mr, stats[k] - left[k])
            sc = (ml - wl) + (mr - wr)
        else:
            for k in range(S):
                right[k] = stats[k] - left[k]
            sc = split_proxy(left, right, wl, wr, crit, pimp)
        if sc > best:
            best = sc
            best_b = b
            best_nl = int(nl)
            best_wl = wl
            for k in range(S):
                best_left[k] = left[k]
    return best, best_b, best_nl, best_wl


@njit
def node_bins(B, lo, hi, f, order):
    """The distinct bins of feature ``f`` among rows ``[lo, hi)``, increasing, into ``order``;
    returns how many (an insertion sort: meant for nodes of a few rows)."""
    t = 0
    for i in range(lo, hi):
        b = np.int64(B[i, f])
        k = t
        while k > 0 and order[k - 1] > b:
            k -= 1
        if k > 0 and order[k - 1] == b:
            continue
        for q in range(t, k, -1):
            order[q] = order[q - 1]
        order[k] = b
        t += 1
    return t


@njit
def scan_abs(B, R, W, lo, hi, f, nb, wn, min_leaf, min_wleaf, cost_l, cost_r):
    """Best cut of feature ``f`` for the absolute error: the node's rows are ordered by bin
    (a counting sort) and the exact prefix/suffix costs of that order decide.

    Returns ``(score, b, n_left, w_left, cost_left, cost_right)``.
    """
    nn = hi - lo
    # counts[b]..counts[b + 1] will be bin b's places in ``order``; the missing bin is bin nb.
    counts = np.zeros(nb + 2, dtype=np.int64)
    for i in range(lo, hi):
        counts[min(np.int64(B[i, f]), nb) + 1] += 1
    for b in range(nb + 1):
        counts[b + 1] += counts[b]
    order = np.empty(nn, dtype=np.int32)
    pos = np.empty(nb + 2, dtype=np.int64)
    for b in range(nb + 2):
        pos[b] = counts[b]
    for i in range(lo, hi):
        b = min(np.int64(B[i, f]), nb)
        order[pos[b]] = i
        pos[b] += 1
    fill_abs_costs(order, np.int64(0), nn, (order, R, W), cost_l, cost_r)
    best = -np.inf
    best_b = -1
    best_nl = 0
    best_wl = 0.0
    wl = 0.0
    for b in range(nb - 1):
        a = counts[b]
        e = counts[b + 1]
        if a == e:
            continue
        for i in range(a, e):
            wl += W[order[i]]
        nl = e
        if nl < min_leaf:
            continue
        if nn - nl < min_leaf or nl >= nn:
            break
        wr = wn - wl
        if wl < min_wleaf or wr < min_wleaf or wl <= 0.0 or wr <= 0.0:
            continue
        sc = -(cost_l[nl] + cost_r[nl])
        if sc > best:
            best = sc
            best_b = b
            best_nl = nl
            best_wl = wl
    if best_b < 0:
        return best, best_b, best_nl, best_wl, 0.0, 0.0
    return best, best_b, best_nl, best_wl, cost_l[best_nl], cost_r[best_nl]


# ------------------------------------------------------------------------------------------------
# Partitioning rows between the two buffers


@njit
def _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, d):
    for c in range(Vs.shape[1]):  # the row's bins, eight at a time
        Vd[d, c] = Vs[i, c]
    if Cs is not None:
        Cd[d] = Cs[i]
    if Rs is not None:
        Rd[d] = Rs[i]
    if Ws is not None:
        Wd[d] = Ws[i]


@njit
def partition_rows(Bs, Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, f, tb, nl):
    """Copy rows ``[lo, hi)`` from the source to the destination buffers, those with
    ``bin <= tb`` on feature ``f`` first (``nl`` of them), both groups in their order.

    ``Bs`` is the source bin matrix; ``Vs`` and ``Vd`` are the source and destination viewed
    as uint64 (rows are padded to a multiple of eight bins), so a row moves in a few words."""
    li = lo
    ri = lo + nl
    for i in range(lo, hi):
        if Bs[i, f] <= tb:
            _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, li)
            li += 1
        else:
            _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, ri)
            ri += 1


@pjit
def partition_rows_parallel(Bs, Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, lo, hi, f, tb, nl, counts):
    """:func:`partition_rows` on all threads: each counts its chunk's left rows, then copies its
    chunk to offsets given by the counts of the chunks before it (same result)."""
    T = counts.shape[0]
    chunk = (hi - lo + T - 1) // T
    for t in prange(T):
        a = lo + t * chunk
        b = min(hi, a + chunk)
        c = 0
        for i in range(a, b):
            c += Bs[i, f] <= tb
        counts[t] = c
    for t in prange(T):
        a = lo + t * chunk
        b = min(hi, a + chunk)
        li = lo
        ri = lo + nl
        for u in range(t):
            li += counts[u]
            ri += min(hi, lo + (u + 1) * chunk) - (lo + u * chunk) - counts[u]
        for i in range(a, b):
            if Bs[i, f] <= tb:
                _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, li)
                li += 1
            else:
                _copy_row(Vs, Vd, Cs, Cd, Rs, Rd, Ws, Wd, i, ri)
                ri += 1
