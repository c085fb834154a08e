"""Kernels over which rows share a leaf: forest proximities (and the leaf index they read).

Breiman's proximity of two rows is the share of a forest's trees in which they land in the
same leaf. Given every row's leaf in every tree (``apply``), the direct count compares every
pair of rows in every tree: ``n * m * T`` steps, 5 * 10^10 for 10k rows and 500 trees.
Here the rows of ``Y`` are first listed leaf by leaf (:func:`rows_by_leaf`, one counting
sort over the global leaf ids ``offsets[t] + leaf``); then each row of ``X`` visits, in every
tree, only the rows of its own leaf. The work is the number of pairs that do share a leaf,
which for fully grown trees is a few rows per leaf and tree.

Rows of ``X`` are split between threads; each writes its own rows of the output (no merge).
The top-k kernel keeps a count per row of ``Y`` for the row of ``X`` at hand, on its thread,
and resets only the entries it touched, so a row costs the pairs it shares, not ``m``.
"""

from __future__ import annotations

import numpy as np

from .config import njit, pjit, prange


@njit
def rows_by_leaf(leaves, offsets, total):
    """The rows of ``leaves`` (m, T) listed leaf by leaf: ``rows[ptr[g]:ptr[g + 1]]`` are the
    rows (ascending) whose leaf in tree ``t`` is ``leaves[r, t] = g - offsets[t]``.
    ``offsets[t]`` is tree ``t``'s first global id; ``total`` the number of global ids."""
    m, T = leaves.shape
    ptr = np.zeros(total + 1, np.int64)
    for r in range(m):
        for t in range(T):
            ptr[offsets[t] + leaves[r, t] + 1] += 1
    for g in range(total):
        ptr[g + 1] += ptr[g]
    fill = ptr[:total].copy()
    rows = np.empty(m * T, np.int32)
    for r in range(m):
        for t in range(T):
            g = offsets[t] + leaves[r, t]
            rows[fill[g]] = r
            fill[g] += 1
    return ptr, rows


@pjit
def shared_leaf_counts(lx, offsets, sizes, ptr, rows, n_parts, out):
    """``out[i, j] +=`` the number of trees in which row ``i`` of ``lx`` (n, T) and row ``j``
    of the listed rows share a leaf (``out`` (n, m) zeroed by the caller). A leaf of ``lx``
    beyond ``sizes[t]`` (no listed row reaches it) is skipped."""
    n, T = lx.shape
    per = (n + n_parts - 1) // n_parts
    for c in prange(n_parts):
        for i in range(c * per, min(n, (c + 1) * per)):
            for t in range(T):
                leaf = lx[i, t]
                if leaf < sizes[t]:
                    g = offsets[t] + leaf
                    for k in range(ptr[g], ptr[g + 1]):
                        out[i, rows[k]] += 1.0


@pjit
def top_shared_leaf_counts(lx, offsets, sizes, ptr, rows, m, k, n_parts,
                           top_rows, top_counts, nnz):
    """For each row ``i`` of ``lx``, the ``k`` listed rows (of ``m``) that share a leaf with
    it in the most trees, by count descending, then row ascending: ``top_rows[i, :nnz[i]]``
    and ``top_counts[i, :nnz[i]]``."""
    n, T = lx.shape
    per = (n + n_parts - 1) // n_parts
    for c in prange(n_parts):
        counts = np.zeros(m, np.int64)
        touched = np.empty(m, np.int64)
        keys = np.empty(m, np.int64)
        for i in range(c * per, min(n, (c + 1) * per)):
            nt = 0
            for t in range(T):
                leaf = lx[i, t]
                if leaf < sizes[t]:
                    g = offsets[t] + leaf
                    for q in range(ptr[g], ptr[g + 1]):
                        r = rows[q]
                        if counts[r] == 0:
                            touched[nt] = r
                            nt += 1
                        counts[r] += 1
            for q in range(nt):
                r = touched[q]
                # ascending keys: most trees first, then the lower row
                keys[q] = (T - counts[r]) * m + r
                counts[r] = 0
            nk = nt
            if nk > k:
                sel = np.sort(np.partition(keys[:nk], k - 1)[:k])
            else:
                sel = np.sort(keys[:nk])
            for q in range(sel.shape[0]):
                top_rows[i, q] = sel[q] % m
                top_counts[i, q] = T - sel[q] // m
            nnz[i] = sel.shape[0]


# -- quantile regression forests -------------------------------------------------------------
#: ``interp`` codes of :func:`leaf_quantiles` (NumPy's quantile methods of the same names).
INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@njit
def leaf_samples(leaves, weights, order, offsets, total):
    """Each leaf's training rows, for quantile forests: ``rank[ptr[g]:ptr[g + 1]]`` are the
    positions, in ``order`` (the rows by ascending target), of the rows with positive weight
    in tree ``t`` whose leaf is ``g - offsets[t]``, ascending; ``weight`` their weights
    (``weights`` (n, T): bootstrap draws or sample weights)."""
    n, T = leaves.shape
    ptr = np.zeros(total + 1, np.int64)
    for r in range(n):
        for t in range(T):
            if weights[r, t] > 0.0:
                ptr[offsets[t] + leaves[r, t] + 1] += 1
    for g in range(total):
        ptr[g + 1] += ptr[g]
    fill = ptr[:total].copy()
    rank = np.empty(ptr[total], np.int32)
    weight = np.empty(ptr[total], np.float64)
    for pos in range(n):  # in target order: each leaf's list comes out ascending
        r = order[pos]
        for t in range(T):
            if weights[r, t] > 0.0:
                g = offsets[t] + leaves[r, t]
                rank[fill[g]] = pos
                weight[fill[g]] = weights[r, t]
                fill[g] += 1
    return ptr, rank, weight


@njit
def weighted_quantiles(values, w, m, qs, interp, cum, out, col0):
    """``out[col0 + j]``: the ``qs[j]`` quantiles (ascending) of the first ``m`` ``values``
    (ascending) with frequency weights ``w``: with whole-number weights, NumPy's quantile of
    each value repeated as often as its weight (``interp`` one of :data:`INTERPOLATIONS`);
    fractional weights generalize it through the cumulative weights (quantile-forest's
    definition, Johnson & Zillow's ``calc_weighted_quantile``). NaN without positive
    weight. ``cum``: scratch of at least ``m``."""
    nq = qs.shape[0]
    total = 0.0
    for i in range(m):
        total += w[i]
        cum[i] = total
    if m == 0 or total <= 0.0:
        for j in range(nq):
            out[col0 + j] = np.nan
        return
    f = total - 1.0
    lo = 0
    hi = 1
    for j in range(nq):
        q = qs[j]
        h = q * f + 1.0  # the quantile's position among the repeated values, from 1
        for i in range(lo, m):
            if h >= cum[i]:
                if w[i] > 0.0:
                    lo = i
                    hi = i + 1
            else:
                break
        if hi > m - 1:
            hi = m - 1
        while w[hi] == 0.0:
            hi += 1
            if hi > m - 1:
                hi = lo
                break
        if lo >= m - 1:
            out[col0 + j] = values[m - 1]
            continue
        if hi <= 0 or lo == hi:
            out[col0 + j] = values[lo if hi > 0 else 0]
            continue
        v_lo = values[lo]
        v_hi = values[hi]
        if v_lo == v_hi:
            out[col0 + j] = v_lo
            continue
        # the position beyond the lower value's last copy: exact for whole weights and
        # quantiles that are binary fractions (quantile-forest divides by the total first,
        # which can round a position at a block end to the other side)
        frac = h - cum[lo]
        if frac <= 0.0:
            out[col0 + j] = v_lo
        elif frac >= 1.0:
            out[col0 + j] = v_hi
        elif interp == 1:
            out[col0 + j] = v_lo
        elif interp == 2:
            out[col0 + j] = v_hi
        elif interp == 3:
            out[col0 + j] = 0.5 * (v_lo + v_hi)
        elif interp == 4:
            if abs(frac - 0.5) < 1e-16:
                # NumPy rounds a half position to the even one
                out[col0 + j] = v_lo if cum[lo] % 2.0 != 0.0 else v_hi
            else:
                out[col0 + j] = v_lo if frac < 0.5 else v_hi
        else:
            out[col0 + j] = v_lo + frac * (v_hi - v_lo)


@njit
def weighted_mean(values, w, m):
    """The mean of the first ``m`` ``values`` with weights ``w``."""
    tw = 0.0
    tv = 0.0
    for q in range(m):
        tw += w[q]
        tv += w[q] * values[q]
    return tv / tw


@pjit
def leaf_quantiles(lx, use, offsets, sizes, ptr, rank, weight, y_sorted, qs, interp,
                   weighted_leaves, aggregate, want_mean, n_parts, out):
    """Quantile regression forest prediction (Meinshausen 2006) for the rows with leaves
    ``lx`` (n, T): ``out[i]`` (n, len(qs)) the ``qs`` quantiles (ascending) of the training
    targets in row ``i``'s leaves, or with ``want_mean`` their weighted mean (``out`` (n, 1)).

    Each leaf entry weighs its ``weight`` (draws); with ``weighted_leaves`` a tree's leaf
    weighs the same in all, its entries ``weight / leaf total`` scaled so that all weights
    sum to the number of entries (quantile-forest's convention). ``aggregate``: one
    quantile of all trees' entries together (the same row in several trees adds up);
    otherwise the mean over trees of each leaf's quantile. ``use`` (n, T): the trees to read
    per row (out-of-bag prediction), or empty for all.

    Equal targets are merged into one value carrying their summed weight before the
    quantile is read, so that the result does not depend on the order of tied rows
    (quantile-forest reads tied rows one by one in the order of an unstable sort: with
    fractional weights, ``weighted_leaves``, its quantiles can differ on tied targets).
    With whole-number weights merging changes nothing."""
    n, T = lx.shape
    nq = out.shape[1]
    m = y_sorted.shape[0]
    all_trees = use.shape[0] == 0
    per = (n + n_parts - 1) // n_parts
    for c in prange(n_parts):
        acc = np.zeros(m)
        touched = np.empty(m, np.int64)
        vals = np.empty(m)
        ws = np.empty(m)
        cum = np.empty(m)
        scale = np.ones(T)
        one = np.empty(nq)
        for i in range(c * per, min(n, (c + 1) * per)):
            n_trees = 0
            n_entries = 0.0
            for t in range(T):
                scale[t] = 0.0
                if all_trees or use[i, t]:
                    leaf = lx[i, t]
                    if leaf < sizes[t]:
                        g = offsets[t] + leaf
                        s = 0.0
                        for e in range(ptr[g], ptr[g + 1]):
                            s += weight[e]
                        if s > 0.0:
                            scale[t] = 1.0 / s if weighted_leaves else 1.0
                            n_trees += 1
                            n_entries += s
            if weighted_leaves and n_trees > 0:
                for t in range(T):  # in quantile-forest's order of rounding
                    scale[t] *= n_entries
                    scale[t] /= n_trees
            for j in range(nq):
                out[i, j] = np.nan
            if n_trees == 0:
                continue
            if aggregate:
                nt = 0
                for t in range(T):
                    if scale[t] > 0.0:
                        g = offsets[t] + lx[i, t]
                        for e in range(ptr[g], ptr[g + 1]):
                            r = rank[e]
                            if acc[r] == 0.0:
                                touched[nt] = r
                                nt += 1
                            acc[r] += weight[e] * scale[t]
                sel = np.sort(touched[:nt])
                k = 0
                for q in range(nt):
                    v = y_sorted[sel[q]]
                    if k > 0 and vals[k - 1] == v:  # equal targets: one value, weights added
                        ws[k - 1] += acc[sel[q]]
                    else:
                        vals[k] = v
                        ws[k] = acc[sel[q]]
                        k += 1
                    acc[sel[q]] = 0.0
                nt = k
                if want_mean:
                    out[i, 0] = weighted_mean(vals, ws, nt)
                else:
                    weighted_quantiles(vals, ws, nt, qs, interp, cum, out[i], 0)
            else:
                for j in range(nq):
                    out[i, j] = 0.0
                for t in range(T):
                    if scale[t] > 0.0:
                        g = offsets[t] + lx[i, t]
                        k = 0
                        for e in range(ptr[g], ptr[g + 1]):
                            v = y_sorted[rank[e]]
                            if k > 0 and vals[k - 1] == v:
                                ws[k - 1] += weight[e] * scale[t]
                            else:
                                vals[k] = v
                                ws[k] = weight[e] * scale[t]
                                k += 1
                        if want_mean:
                            out[i, 0] += weighted_mean(vals, ws, k)
                        else:
                            weighted_quantiles(vals, ws, k, qs, interp, cum, one, 0)
                            for j in range(nq):
                                out[i, j] += one[j]
                for j in range(nq):
                    out[i, j] /= n_trees
